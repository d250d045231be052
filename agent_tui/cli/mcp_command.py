"""``agent-tui mcp login NAME``: log in to an HTTP MCP server of this project's
``.mcp.json``, the user's ``mcp.json`` or Claude Code's ``~/.claude.json`` (OAuth: the
browser, or the URL printed when there is none; the redirect comes back to a loopback
port). The tokens are kept owner-only in the state folder, where every later session
finds them.
``--client-secret`` asks for a pre-registered client's secret (or takes
``MCP_CLIENT_SECRET``) and keeps it there too; ``--client-key FILE`` keeps the private
key (PEM) such a client signs its token requests with instead. ``--idp ISSUER
--idp-client-id ID`` keeps the user's enterprise identity provider and their ID token
(asked for without echo, or ``MCP_IDP_ID_TOKEN``) for cross-app access (SEP-990).
``--auth-server URL`` names the authorization server the secret or key is for: it goes
to no other, and a server that names another is refused (without it, the login says
which one it was bound to: the first it was used with).
``agent-tui mcp logout NAME`` forgets them.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

def _show(text: str) -> None:
    print(text, flush=True)  # the URL is needed now, also through a pipe


def _secret(name: str) -> str:
    """``MCP_CLIENT_SECRET``, else asked for without echo (as Claude Code's ``--client-secret``)."""
    import getpass
    import os

    return os.environ.get("MCP_CLIENT_SECRET") or getpass.getpass(f"Client secret for {name}: ")


def _id_token(name: str) -> str:
    """``MCP_IDP_ID_TOKEN``, else asked for without echo."""
    import getpass
    import os

    return os.environ.get("MCP_IDP_ID_TOKEN") or getpass.getpass(f"ID token from the identity provider for {name}: ")


def _take(args: list[str], flag: str) -> str | None:
    """The value after ``flag`` (removed from ``args``); "" when it is missing."""
    if flag not in args:
        return None
    at = args.index(flag)
    value = args[at + 1] if at + 1 < len(args) else ""
    del args[at : at + 2]
    return value


USAGE = ("usage: agent-tui mcp login|logout NAME [--cwd DIR] [--client-secret | --client-key FILE] "
         "[--idp ISSUER --idp-client-id ID] [--auth-server URL]")


def mcp_main(argv: list[str]) -> int:
    from agent_tui.paths import state_home
    from agent_tui.settings.mcp_servers import load_config
    from agent_tui.mcp_catalog.browser import open_in_browser
    from agent_tui.mcp.login import (
        bound_to,
        keep_auth_server,
        keep_client_key,
        keep_client_secret,
        keep_identity_provider,
        login,
    )
    from agent_tui.mcp.oauth import AUTH_DIR, LoginRefused, TokenFile, token_path

    args = list(argv)
    cwd = Path.cwd()
    if "--cwd" in args:
        at = args.index("--cwd")
        if at + 1 >= len(args):
            print(USAGE, file=sys.stderr)
            return 1
        cwd = Path(args[at + 1]).expanduser().resolve()
        del args[at : at + 2]
    with_secret = "--client-secret" in args
    if with_secret:
        args.remove("--client-secret")
    idp = [_take(args, "--idp"), _take(args, "--idp-client-id")]
    auth_server = _take(args, "--auth-server")
    key_file: Path | None = None
    if "--client-key" in args:
        at = args.index("--client-key")
        if at + 1 >= len(args):
            print(USAGE, file=sys.stderr)
            return 1
        key_file = Path(args[at + 1]).expanduser()
        del args[at : at + 2]
    if len(args) != 2 or args[0] not in ("login", "logout") or (
            (with_secret or key_file is not None or any(idp) or auth_server is not None) and args[0] != "login"
    ) or "" in idp or auth_server == "" or (
            (idp[0] is None) != (idp[1] is None)):
        print(USAGE, file=sys.stderr)
        return 1
    action, name = args
    config = load_config(cwd)
    for problem in config.problems:
        print(f"agent-tui: MCP config: {problem}", file=sys.stderr)
    server = next((s for s in config.servers if s.name == name), None)
    if server is None:
        known = ", ".join(s.name for s in config.servers) or "none"
        print(f"agent-tui: no MCP server named {name!r} (configured: {known})", file=sys.stderr)
        return 1
    auth_dir = state_home() / AUTH_DIR
    if action == "logout":
        TokenFile(token_path(auth_dir, server)).forget(client=True)
        print(f"Logged out of {name}.")
        return 0
    try:
        if with_secret:
            keep_client_secret(server, auth_dir, _secret(name))
        if key_file is not None:
            try:
                pem = key_file.read_text(encoding="utf-8")
            except (OSError, UnicodeError) as exc:
                raise ValueError(f"cannot read the client key {key_file}: {exc}") from None
            keep_client_key(server, auth_dir, pem)
        if idp[0] is not None and idp[1] is not None:
            keep_identity_provider(server, auth_dir, idp[0], idp[1], _id_token(name))
        if auth_server is not None:
            keep_auth_server(server, auth_dir, auth_server)
        asyncio.run(login(server, auth_dir, open_in_browser(_show), workspace=cwd))
    except LoginRefused as exc:
        print(f"agent-tui: cannot log in to {name}: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"agent-tui: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"agent-tui: the login to {name} was stopped", file=sys.stderr)
        return 130
    print(f"Logged in to {name}. Sessions started from now on use it (in a running one: /mcp, reconnect).")
    bound = bound_to(server, auth_dir)
    if bound is not None:
        issuer, named = bound
        print(f"Its client secret or key goes only to the authorization server {issuer}" + (
            " (--auth-server)." if named else f", the first one it was used with (to name it yourself: agent-tui "
            f"mcp login {name} --client-secret --auth-server URL)."))
    return 0
