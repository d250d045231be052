"""agent-tui's MCP client as the official conformance suite runs a client
(``npx @modelcontextprotocol/conformance client --command "python this.py"``): the
suite appends its server's URL and names the scenario in ``MCP_CONFORMANCE_SCENARIO``.

It does what a session does, through the product's own code: the manager connects
the server (streamable HTTP), lists its tools, and each tool is called as the model
would call it (arguments made from its schema). A server that needs a login is
logged in to as ``agent-tui mcp login`` does (``mcp/login.py``), with a "browser" that
follows the authorization URL (the suite's authorization server approves at once),
then connected again; when a call ends with the server wanting a new login (a
scope step-up), the user logs in again and calls once more. What the scenario hands
a client (``MCP_CONFORMANCE_CONTEXT``: a pre-registered client id and its secret or
private key, an enterprise identity provider and the user's ID token from it) is set
as the user would: the id in the server's entry, the secret, key or identity provider
kept as ``agent-tui mcp login --client-secret``, ``--client-key`` or ``--idp`` keeps it. A
question (elicitation) is answered as a user who presses Enter through the TUI's
form would: each field's default, accepted.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from agent_tui.cancel import CancelScope
from agent_tui.core.calls.tool import ToolContext, ToolSet
from agent_tui.mcp import McpManager, ServerConfig, ServerState
from agent_tui.mcp.login import keep_identity_provider
from agent_tui.mcp.oauth import CIMD_ENV, TokenFile, token_path
from agent_tui.mcp_catalog.elicitation import ElicitAction, ElicitAnswer, Elicitation
from agent_tui.settings.mcp_servers import OAuthOptions, Transport

NAME = "conformance"
#: The suite's authorization server takes this URL as a client id (auth/basic-cimd).
CIMD_URL = "https://conformance-test.local/client-metadata.json"


async def accept_defaults(request: Elicitation) -> ElicitAnswer:
    content = {f.name: f.default for f in request.fields if f.default is not None}
    return ElicitAnswer(action=ElicitAction.ACCEPT, content=content)


async def browse(url: str) -> None:
    """The user's browser: follow the authorization URL to our loopback callback."""
    def follow() -> None:
        with urllib.request.urlopen(url, timeout=20) as answer:  # noqa: S310 - the suite's loopback server
            answer.read()

    await asyncio.to_thread(follow)


def _arguments(schema: dict[str, Any]) -> dict[str, Any]:
    samples = {"integer": 2, "number": 3, "boolean": True, "string": "hello"}
    props = schema.get("properties") or {}
    return {name: samples.get(spec.get("type"), "hello") for name, spec in props.items()
            if name in (schema.get("required") or props)}


async def call_tools(manager: McpManager, home: Path) -> None:
    for tool in manager.tools():
        scope = CancelScope()
        ctx = ToolContext(scope=scope, workspace=home, tool_use_id="toolu_conformance", operation_id="op")
        result = await tool.run(tool.parse(_arguments(tool.input_schema())), ctx)
        print(f"{tool.name}: {result.outcome}: {result.content[:200]}", file=sys.stderr)


async def main(url: str) -> int:
    home = Path(tempfile.mkdtemp(prefix="mcp-conformance-"))
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth = OAuthOptions(client_id=context["client_id"]) if context.get("client_id") else None
    config = ServerConfig(name=NAME, transport=Transport.HTTP, source=Path("conformance"), url=url, oauth=oauth)
    if oauth is not None and context.get("client_secret"):
        TokenFile(token_path(home / "auth", config)).set_client_secret(context["client_id"], context["client_secret"])
    if oauth is not None and context.get("private_key_pem"):  # as mcp login --client-key keeps it
        TokenFile(token_path(home / "auth", config)).set_client_key(context["client_id"], context["private_key_pem"])
    if oauth is not None and context.get("idp_id_token"):  # as mcp login --idp ISSUER --idp-client-id ID keeps it
        keep_identity_provider(config, home / "auth", context["idp_issuer"], context["idp_client_id"],
                               context["idp_id_token"])
    if os.environ.get("MCP_CONFORMANCE_SCENARIO") == "auth/basic-cimd":
        os.environ[CIMD_ENV] = CIMD_URL
    manager = McpManager([config], workspace=home, log_dir=home / "logs", auth_dir=home / "auth",
                         start_timeout_s=20)
    manager.set_elicitor(accept_defaults)
    tools = ToolSet()
    manager.attach(tools)
    manager.start()
    await manager.wait_started(20)
    conn = manager.connections[NAME]
    if conn.state is ServerState.NEEDS_LOGIN:
        await manager.login(NAME, browse)
        await manager.wait_started(20)
    if manager.connections[NAME].state is not ServerState.READY:
        print(f"not ready: {manager.connections[NAME].error}", file=sys.stderr)
        await manager.shutdown()
        return 1
    await call_tools(manager, home)
    state = manager.connections[NAME].state
    print(f"after the calls: {state} {manager.connections[NAME].error}", file=sys.stderr)
    if state is ServerState.NEEDS_LOGIN:  # a later call wanted more (a scope step-up)
        await manager.login(NAME, browse)
        await manager.wait_started(20)
        await call_tools(manager, home)
    await manager.shutdown()
    return 0


if __name__ == "__main__":
    print(f"scenario {os.environ.get('MCP_CONFORMANCE_SCENARIO')}", file=sys.stderr)
    sys.exit(asyncio.run(main(sys.argv[-1])))
