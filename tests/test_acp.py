"""ACP end to end: the SDK's client side drives the real ``agent-tui acp`` process,
which talks to the fake Anthropic API."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import AllowedOutcome, ClientCapabilities, RequestPermissionResponse

from tests.fake_api import Reply
from tests.acp_client import AGENT, META, RecordingClient, agent_env, spawn, start


def marked(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if any(marker in part for part in proc.info["cmdline"] or []):
                found.append(proc)
        except psutil.Error:
            pass
    return found


def assert_no_tool_left_open(client: RecordingClient) -> None:
    ids = {u.tool_call_id for _, u in client.updates if u.session_update == "tool_call"}
    for tool_call_id in ids:
        assert client.last_status(tool_call_id) in ("completed", "failed"), client.tool_updates(tool_call_id)


# ------------------------------------------------------------------------------ tests


@pytest.mark.asyncio
async def test_prompt_streams_text_and_a_late_cancel_is_harmless(tmp_path, fake_api):
    fake_api.enqueue(Reply.text("Hello from the fake model, in pieces.", chunk=4),
                     Reply.text("Second answer."))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api) as (conn, _proc):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        caps = init.agent_capabilities
        assert caps.load_session is True
        assert caps.prompt_capabilities.image and not caps.prompt_capabilities.audio
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id

        response = await conn.prompt(session_id=sid, prompt=[text_block("say hello")])
        assert response.stop_reason == "end_turn"
        assert client.text(sid) == "Hello from the fake model, in pieces."
        assert len(client.of("agent_message_chunk")) >= 1

        await conn.cancel(session_id=sid)  # nothing runs: nothing happens
        response = await conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert response.stop_reason == "end_turn"
        assert client.text(sid).endswith("Second answer.")

        # A failed turn is a JSON-RPC error with the reason; the session goes on.
        fake_api.enqueue(Reply.error(400, "invalid_request_error", "scripted failure"),
                         Reply.text("Still here."))
        with pytest.raises(RequestError) as failed:
            await conn.prompt(session_id=sid, prompt=[text_block("fail please")])
        assert "scripted failure" in str(failed.value)
        response = await conn.prompt(session_id=sid, prompt=[text_block("and again")])
        assert response.stop_reason == "end_turn"
        assert client.text(sid).endswith("Still here.")
    assert fake_api.rejections == []


@pytest.mark.asyncio
async def test_cancel_during_stream_ends_prompt_cancelled(tmp_path, fake_api):
    fake_api.enqueue(Reply.stall(after_text="I am thinking about", seconds=30))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api) as (conn, _):
        sid = await start(conn, tmp_path)
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("think")]))
        await client.wait_for(lambda: "thinking" in client.text(sid))
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(prompt, 5)  # the stall is 30 s
        assert response.stop_reason == "cancelled"
        assert fake_api.wait_for_disconnect(timeout=3)
        assert len(fake_api.requests) == 1  # no retry, no new request after the cancel


@pytest.mark.asyncio
async def test_cancel_during_running_tool_ends_its_process_tree(tmp_path, fake_api):
    marker = f"acp-marker-{uuid.uuid4().hex}"
    tool_id = "toolu_acp_slow_1"
    command = f"echo started; for i in 1 2; do bash -c 'sleep 30; echo {marker}' & done; wait"
    fake_api.enqueue(Reply.tool_use("bash", {"command": command}, id=tool_id))
    client = RecordingClient()
    # A client that shows agent-fed terminals (Zed's _meta.terminal_output): the command
    # is shown as a terminal view, and still runs, and is stopped, by the agent.
    caps = ClientCapabilities.model_validate({"_meta": {"terminal_output": True}})
    async with spawn(client, tmp_path, fake_api, "--permission-mode", "auto") as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("slow")]))
        await client.wait_for(lambda: client.last_status(tool_id) == "in_progress")
        await client.wait_for(lambda: len(marked(marker)) >= 3)  # the shell and its two children
        await client.wait_for(lambda: any("terminal_output" in (u.field_meta or {})
                                          for u in client.tool_updates(tool_id)))
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(prompt, 15)
        assert response.stop_reason == "cancelled"
        assert marked(marker) == []
        assert client.last_status(tool_id) == "failed"
        assert client.last_state(tool_id) == "cancelled_while_running"
        assert_no_tool_left_open(client)
        assert len(fake_api.requests) == 1
        metas = [u.field_meta or {} for u in client.tool_updates(tool_id)]
        running = next(u for u in client.tool_updates(tool_id) if u.status == "in_progress")
        assert running.content[0].type == "terminal" and running.content[0].terminal_id == tool_id
        assert running.field_meta["terminal_info"] == {"terminal_id": tool_id, "cwd": str(tmp_path)}
        shown = "".join(m["terminal_output"]["data"] for m in metas if "terminal_output" in m)
        assert "started" in shown
        assert metas[-1]["terminal_exit"]["terminal_id"] == tool_id  # the view is closed
        assert metas[-1]["terminal_exit"]["signal"] is not None

        # The client going away (end of input) mid-tool also ends the process tree.
        fake_api.enqueue(Reply.tool_use("bash", {"command": command}, id="toolu_acp_slow_2"))
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("again")]))
        await client.wait_for(lambda: len(marked(marker)) >= 3)
    assert marked(marker) == []
    prompt.cancel()


ALLOW_ONCE = RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow_once"))


@pytest.mark.asyncio
async def test_cancel_during_permission_request_never_runs_the_tool(tmp_path, fake_api):
    tool_id, next_id = "toolu_acp_ask_1", "toolu_acp_ask_2"
    target = tmp_path / "must-not-exist.txt"
    fake_api.enqueue(Reply.tool_use("bash", {"command": f"touch {target}"}, id=tool_id),
                     Reply.tool_use("bash", {"command": f"touch {tmp_path}/allowed-ok"}, id=next_id),
                     Reply.text("Next prompt works."))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api) as (conn, _):  # default mode: ask
        sid = await start(conn, tmp_path)
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("touch")]))
        await client.wait_for(lambda: client.permission_requests)
        _, tool_call, options = client.permission_requests[0]
        assert tool_call.tool_call_id == tool_id
        assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
        assert client.last_status(tool_id) == "pending"

        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(prompt, 5)
        assert response.stop_reason == "cancelled"
        assert client.last_status(tool_id) == "failed"
        assert client.last_state(tool_id) == "cancelled_before_start"
        assert_no_tool_left_open(client)

        # A late "allow" (a client that answers after the cancel) must not run it.
        client.answers.put_nowait(ALLOW_ONCE)
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go on")]))
        # The next call asks again; this time the answer is in time and it runs.
        await client.wait_for(lambda: len(client.permission_requests) == 2)
        assert client.permission_requests[1][1].tool_call_id == next_id
        client.answers.put_nowait(ALLOW_ONCE)
        response = await asyncio.wait_for(prompt, 10)
        assert response.stop_reason == "end_turn"
        assert client.last_state(next_id) == "succeeded"
        assert client.text(sid).endswith("Next prompt works.")
    assert not target.exists()
    assert client.last_state(tool_id) == "cancelled_before_start"
    assert fake_api.rejections == []
    # The model was told the first call never ran.
    results = [b for m in fake_api.requests[1]["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    assert results and results[0]["tool_use_id"] == tool_id and "Not run" in json.dumps(results[0])


@pytest.mark.asyncio
async def test_tools_run_then_load_session_replays_and_continues(tmp_path, fake_api):
    bash_id, read_id = "toolu_acp_bash_1", "toolu_acp_read_1"
    fake_api.enqueue(
        Reply.tool_use("bash", {"command": "echo remember me > notes.txt; cat notes.txt"},
                       id=bash_id, text_before="Writing."),
        Reply.tool_use("read_file", {"path": "notes.txt"}, id=read_id, text_before="Reading."),
        Reply.text("It says remember me."),
        Reply.text("Continued fine."),
    )
    first = RecordingClient()
    async with spawn(first, tmp_path, fake_api, "--permission-mode", "auto") as (conn, _):
        sid = await start(conn, tmp_path)
        response = await conn.prompt(session_id=sid, prompt=[text_block("write and read notes")])
        assert response.stop_reason == "end_turn"
    assert (tmp_path / "notes.txt").read_text() == "remember me\n"
    # A real bash command: execute kind, every status change, our state and exit code.
    updates = first.tool_updates(bash_id)
    assert updates[0].session_update == "tool_call" and updates[0].kind == "execute"
    statuses = [u.status for u in updates if u.status]
    assert statuses[0] == "pending" and "in_progress" in statuses and statuses[-1] == "completed"
    assert updates[-1].field_meta[META]["state"] == "succeeded"
    assert updates[-1].raw_output["exit_code"] == 0
    assert "remember me" in updates[-1].content[-1].content.text
    # A file tool: read kind, the file as an absolute location.
    assert first.tool_updates(read_id)[0].kind == "read"
    located = [u for u in first.tool_updates(read_id) if u.locations]
    assert located and located[0].locations[0].path == str(tmp_path / "notes.txt")
    assert first.text(sid) == "Writing.Reading.It says remember me."

    second = RecordingClient()
    async with spawn(second, tmp_path, fake_api) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
        users = [u.content.text for u in second.of("user_message_chunk", sid)]
        assert users == ["write and read notes"]
        assert second.text(sid) == "Writing.Reading.It says remember me."
        for tool_id in (bash_id, read_id):
            assert second.last_status(tool_id) == "completed"
            assert second.last_state(tool_id) == "succeeded"
        replayed = len(second.updates)

        response = await conn.prompt(session_id=sid, prompt=[text_block("and now?")])
        assert response.stop_reason == "end_turn"
        assert "".join(u.content.text for _, u in second.updates[replayed:]
                       if u.session_update == "agent_message_chunk") == "Continued fine."

        with pytest.raises(RequestError):
            await conn.load_session(cwd=str(tmp_path), session_id="no-such-session", mcp_servers=[])
    sent = json.dumps(fake_api.requests[-1]["messages"])
    assert "write and read notes" in sent and "remember me" in sent and "and now?" in sent
    assert fake_api.rejections == []


@pytest.mark.asyncio
async def test_sessions_are_independent_and_a_second_prompt_is_rejected(tmp_path, fake_api):
    fake_api.enqueue(Reply.stall(after_text="session A is slow", seconds=30))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api) as (conn, _):
        sid_a = await start(conn, tmp_path)
        sid_b = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        assert sid_a != sid_b
        prompt_a = asyncio.create_task(conn.prompt(session_id=sid_a, prompt=[text_block("slow")]))
        await client.wait_for(lambda: "slow" in client.text(sid_a))

        with pytest.raises(RequestError) as busy:
            await conn.prompt(session_id=sid_a, prompt=[text_block("me too")])
        assert busy.value.code == -32600

        fake_api.enqueue(Reply.text("B answers."))
        response = await asyncio.wait_for(
            conn.prompt(session_id=sid_b, prompt=[text_block("quick")]), 10)
        assert response.stop_reason == "end_turn"
        assert client.text(sid_b) == "B answers."
        assert not prompt_a.done()

        await conn.cancel(session_id=sid_a)
        assert (await asyncio.wait_for(prompt_a, 5)).stop_reason == "cancelled"
        assert client.text(sid_a) == "session A is slow"


@pytest.mark.asyncio
async def test_malformed_messages_get_json_rpc_errors_not_a_crash(tmp_path, fake_api):
    proc = await asyncio.create_subprocess_exec(
        *AGENT, "--cwd", str(tmp_path),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**agent_env(tmp_path, fake_api), "PATH": "/usr/bin:/bin"},
    )
    assert proc.stdin is not None and proc.stdout is not None

    async def exchange(raw: bytes) -> dict[str, Any]:
        proc.stdin.write(raw)
        await proc.stdin.drain()
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        return json.loads(line)

    try:
        reply = await exchange(b"this is not json {\n")
        assert reply["error"]["code"] == -32700 and reply["id"] is None
        reply = await exchange(b"[1, 2, 3]\n")
        assert reply["error"]["code"] == -32600
        reply = await exchange(b'{"jsonrpc":"2.0","id":7,"method":42}\n')
        assert reply["error"]["code"] == -32600 and reply["id"] == 7
        reply = await exchange(b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":5}}\n')
        assert reply["id"] == 1 and reply["error"]["code"] == -32602
        # Unsupported methods are "method not found", never a silent stub.
        reply = await exchange(b'{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}\n')
        assert reply["id"] == 2 and reply["error"]["code"] == -32601
        # Still alive and speaking the protocol.
        reply = await exchange(b'{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1}}\n')
        assert reply["id"] == 3 and reply["result"]["agentCapabilities"]["loadSession"] is True
    finally:
        proc.stdin.close()
        code = await asyncio.wait_for(proc.wait(), 60)
    assert code == 0


# ------------------------------------------------------------------ MCP servers from the client

SDK_SERVER = str(Path(__file__).parent / "mcp_servers" / "sdk_server.py")


def sdk_stdio(name: str, record: Path) -> Any:
    from acp.schema import McpServerStdio

    return McpServerStdio(name=name, command=sys.executable, args=[SDK_SERVER, str(record)], env=[])


@pytest.mark.asyncio
async def test_mcp_servers_sent_with_session_new_are_connected_and_cancelled_like_the_configs(tmp_path, fake_api):
    record = tmp_path / "mcp-record.jsonl"
    fake_api.enqueue(
        Reply.tool_use("mcp__demo__echo", {"text": "from the client"}, id="toolu_acp_mcp_1"),
        Reply.text("echoed"),
        Reply.tool_use("mcp__demo__slow", {"seconds": 30}, id="toolu_acp_mcp_2"),
    )
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api, "--permission-mode", "auto") as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_capabilities.mcp_capabilities.http is True
        assert init.agent_capabilities.mcp_capabilities.sse is True
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[sdk_stdio("demo", record)])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("echo it")])
        assert response.stop_reason == "end_turn"
        assert client.last_state("toolu_acp_mcp_1") == "succeeded"
        tools = [t["name"] for t in fake_api.requests[0]["tools"]]
        assert "mcp__demo__echo" in tools  # offered from the first request
        seen = [json.loads(line) for line in record.read_text().splitlines()]
        assert seen[0]["event"] == "echo" and seen[0]["text"] == "from the client"
        server_pid = seen[0]["pid"]

        # Esc (session/cancel) reaches the remote call, never the server.
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("slow")]))
        await client.wait_for(lambda: '"start"' in record.read_text())
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(prompt, 10)).stop_reason == "cancelled"
        assert client.last_state("toolu_acp_mcp_2") == "unknown"
        assert psutil.pid_exists(server_pid)
    # The session's end ends the server.
    deadline = time.monotonic() + 5
    while psutil.pid_exists(server_pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not psutil.pid_exists(server_pid) or psutil.Process(server_pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.asyncio
async def test_mcp_servers_that_cannot_be_served_are_refused_by_name(tmp_path, fake_api):
    from acp.schema import HttpHeader, McpServerStdio, SseMcpServer

    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sse = SseMcpServer(type="sse", name="old-events", url="ftp://127.0.0.1:9/sse",
                           headers=[HttpHeader(name="X", value="y")])
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(tmp_path), mcp_servers=[sse])
        assert refused.value.code == -32602
        assert "old-events" in str(refused.value) and "ftp://" in str(refused.value)
        missing = McpServerStdio(name="ghost", command="/no/such/server", args=[], env=[])
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(tmp_path), mcp_servers=[missing])
        assert "ghost" in str(refused.value) and "/no/such/server" in str(refused.value)
        twice = [sdk_stdio("same", tmp_path / "r1"), sdk_stdio("same", tmp_path / "r2")]
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(tmp_path), mcp_servers=twice)
        assert "same" in str(refused.value)


@pytest.mark.asyncio
async def test_an_mcp_server_that_fails_to_start_is_told_to_the_client(tmp_path, fake_api):
    from acp.schema import McpServerStdio

    fake_api.enqueue(Reply.text("no tools today"))
    broken = McpServerStdio(name="broken", command=sys.executable,
                            args=["-c", "import sys; print('no config here', file=sys.stderr); sys.exit(3)"],
                            env=[])
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[broken])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("hi")])
        assert response.stop_reason == "end_turn"
        text = client.text(sid)
        assert "MCP server broken failed" in text and "no config here" in text
        assert text.endswith("no tools today")
