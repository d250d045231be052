"""What MCP servers offer, over ACP (the real ``agent-tui acp``, the SDK's client, the
fake API): their prompts in the command list and as ``/mcp__server__prompt``,
``@server:uri`` read into the message, and their questions as ``elicitation/create``
(or, for a client without forms, a permission request for a page to open)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    McpServerStdio,
    RequestPermissionResponse,
)

from tests.acp_client import RecordingClient, acp_agent, agent_env, spawn
from tests.fake_api import Reply
from tests.mcp_support import SERVERS, records


class AskedClient(RecordingClient):
    """Answers a form with fixed values; records what it was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.elicitations: list[tuple[str, Any]] = []

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.elicitations.append((message, mode))
        return AcceptElicitationResponse(action="accept", content={"name": "Ada", "age": 36, "colour": "red"})


def _servers(tmp_path: Path) -> list[McpServerStdio]:
    return [
        McpServerStdio(name="notes", command=sys.executable, args=[str(SERVERS / "catalog_server.py")], env=[]),
        McpServerStdio(name="shop", command=sys.executable,
                       args=[str(SERVERS / "elicit_server.py"), str(tmp_path / "rec.jsonl")], env=[]),
    ]


def _commands(client: RecordingClient) -> list[str]:
    updates = client.of("available_commands_update")
    return [c.name for c in updates[-1].available_commands] if updates else []


def _sent(request: dict) -> str:
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


@pytest.mark.asyncio
async def test_prompts_resources_and_a_form_over_acp(tmp_path: Path, fake_api: Any) -> None:
    fake_api.enqueue(Reply.text("reviewed"), Reply.text("summed"),
                     Reply.tool_use("mcp__shop__signup", {}, id="toolu_form"), Reply.text("signed up"))
    client = AskedClient()
    caps = ClientCapabilities(elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()))
    async with acp_agent(client, ["--permission-mode", "auto", "--cwd", str(tmp_path)],
                         env=agent_env(tmp_path, fake_api), cwd=tmp_path,
                         use_unstable_protocol=True) as (conn, _):  # elicitation is unstable ACP
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=_servers(tmp_path))).session_id
        await client.wait_for(lambda: "mcp__notes__review" in _commands(client), timeout=20)

        response = await conn.prompt(session_id=sid, prompt=[text_block('/mcp__notes__review main.py "the tests"')])
        assert response.stop_reason == "end_turn"
        assert _sent(fake_api.requests[0]) == "Please review main.py, looking at the tests."

        response = await conn.prompt(session_id=sid, prompt=[text_block("/mcp__notes__review")])
        assert response.stop_reason == "end_turn" and len(fake_api.requests) == 1
        assert "not sent: /mcp__notes__review: missing file" in client.text(sid)

        response = await conn.prompt(session_id=sid, prompt=[text_block("sum up @notes:notes://today")])
        assert "<resource uri=\"notes:notes://today\">\nbuy milk" in _sent(fake_api.requests[1])

        response = await conn.prompt(session_id=sid, prompt=[text_block("sign me up")])
        assert response.stop_reason == "end_turn"
        [(message, mode)] = client.elicitations
        assert message == "MCP server shop: Tell us about you" and mode.session_id == sid
        assert set(mode.requested_schema.properties) == {"name", "age", "colour"}
    answered = [r for r in records(tmp_path / "rec.jsonl") if r["event"] == "answered"]
    assert answered == [{"event": "answered", "action": "accept",
                         "content": {"name": "Ada", "age": 36, "colour": "red"}}]


@pytest.mark.asyncio
async def test_without_forms_a_page_is_asked_as_a_permission_and_a_form_is_declined(tmp_path: Path, fake_api: Any) -> None:
    fake_api.enqueue(Reply.tool_use("mcp__shop__open_page", {}, id="toolu_url"), Reply.text("ok"),
                     Reply.tool_use("mcp__shop__signup", {}, id="toolu_form"), Reply.text("ok"))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api, "--permission-mode", "auto") as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=_servers(tmp_path))).session_id
        await client.answers.put(RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="accept")))
        await conn.prompt(session_id=sid, prompt=[text_block("open it")])
        [(_, call, options)] = client.permission_requests
        assert "https://example.com/login?x=1" in call.title
        assert [o.option_id for o in options] == ["accept", "decline"]
        await conn.prompt(session_id=sid, prompt=[text_block("sign up")])
        assert "does not offer forms" in client.text(sid)
    answered = [r["action"] for r in records(tmp_path / "rec.jsonl") if r["event"] == "answered"]
    assert answered == ["accept", "decline"]
    assert json.loads(fake_api.requests[3]["messages"][-1]["content"][0]["content"])["action"] == "decline"
