"""The legacy HTTP+SSE transport (``"type": "sse"``) against the official SDK's server
(tests/mcp_servers/sdk_server.py --sse), in a real process on 127.0.0.1."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_tui.protocol import ToolState
from agent_tui.mcp import ServerState, load_config
from agent_tui.settings.mcp_servers import Transport
from tests.mcp_support import SDK_SERVER, free_port, call, listening, wait_for_record, write


@pytest.fixture
def sse_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    record = tmp_path / "sse-record.jsonl"
    port = free_port()
    argv = [sys.executable, SDK_SERVER, str(record), "--sse", str(port)]
    with listening(argv, port, tmp_path / "sse-server.log") as url:
        yield url.removesuffix("/mcp") + "/sse", record


@pytest.mark.asyncio
async def test_an_sse_server_from_mcp_json_serves_tools_with_its_headers(
    make_manager: Any, sse_server: Any, tmp_path: Path
) -> None:
    url, record = sse_server
    ws = tmp_path / "ws"
    ws.mkdir()
    # the user's config: a project's .mcp.json expands no variable that may be a secret
    write(tmp_path / "cfg" / "mcp.json", json.dumps({"mcpServers": {"old": {
        "type": "sse", "url": url, "headers": {"X-Team": "${TEAM}"}}}}))
    cfg = load_config(ws, user_config_dir=tmp_path / "cfg", environ={"TEAM": "blue"},
                      claude_json=tmp_path / "none")
    assert cfg.problems == []
    [server] = cfg.servers
    assert server.transport is Transport.SSE and server.headers == {"X-Team": "blue"}

    # Not 5 s: a cancel the server never answers leaves the POST connection idle for
    # confirm_s, and uvicorn closes an idle keep-alive connection after 5 s; the next
    # POST on it could race that close (the SDK's SSE client does not send it again).
    manager, tools = await make_manager(server, confirm_s=2.0)
    [status] = manager.status()
    assert status.state is ServerState.READY and status.transport is Transport.SSE
    assert "echo" in status.tools

    result, _ = await call(tools, "mcp__old__echo", {"text": "over sse"}, op="op-sse")
    assert result.outcome is ToolState.SUCCEEDED and result.content == "echo: over sse"
    seen = await wait_for_record(record, "echo")
    assert seen["meta"]["agent_tui/operation_id"] == "op-sse"
    sent, _ = await call(tools, "mcp__old__header", {"name": "x-team"})
    assert sent.content == "x-team: blue"

    slow, _ = await call(tools, "mcp__old__slow", {"seconds": 30}, cancel_on_start=record)
    assert slow.outcome is not ToolState.SUCCEEDED
    cancelled = await wait_for_record(record, "cancelled")
    assert cancelled["request_id"] == slow.details["request_id"]
    again, _ = await call(tools, "mcp__old__echo", {"text": "still here"})
    assert again.content == "echo: still here"


@pytest.mark.asyncio
async def test_an_sse_url_that_does_not_answer_fails_with_the_url(make_manager: Any, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/sse"
    write(tmp_path / "ws" / ".mcp.json", json.dumps({"mcpServers": {"old": {"type": "sse", "url": url}}}))
    [server] = load_config(tmp_path / "ws", user_config_dir=tmp_path / "none", environ={}).servers
    manager, _ = await make_manager(server)
    [status] = manager.status()
    assert status.state is ServerState.FAILED and url in (status.error or "")


@pytest.mark.asyncio
async def test_an_sse_server_sent_by_an_acp_client_serves_its_tools(sse_server: Any, tmp_path: Path, fake_api) -> None:
    from acp import PROTOCOL_VERSION, text_block
    from acp.schema import HttpHeader, SseMcpServer

    from tests.fake_api import Reply
    from tests.acp_client import RecordingClient, spawn

    url, record = sse_server
    fake_api.enqueue(Reply.tool_use("mcp__old__header", {"name": "x-team"}, id="toolu_sse"), Reply.text("ok"))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api, "--permission-mode", "auto") as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sse = SseMcpServer(type="sse", name="old", url=url, headers=[HttpHeader(name="X-Team", value="red")])
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[sse])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("which team?")])
        assert response.stop_reason == "end_turn"
        assert client.last_state("toolu_sse") == "succeeded"
    result = fake_api.requests[1]["messages"][-1]["content"][0]
    assert "x-team: red" in json.dumps(result)
