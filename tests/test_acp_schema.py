"""Every frame the ACP agent sends, checked against the protocol's JSON Schema.

The agent-client-protocol package ships the schema as the pydantic models generated
from it (``acp/schema.py``: "Generated from schema/schema.json"), not as the JSON
file; the JSON Schema of each message type is built back from those models and
checked with ``jsonschema``. A session exercises what the agent can send: the
initialize and session/new answers, message chunks, tool calls with their updates
(a command shown as a terminal view, an edit with its diff written through the
editor's fs/write_text_file, an MCP tool), a permission request, a cancelled prompt, an
error answer and a session/load replay.
"""

from __future__ import annotations

import asyncio
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp import schema as acp_schema
from acp.connection import StreamDirection, StreamEvent
from acp.schema import AllowedOutcome, McpServerStdio, RequestPermissionResponse
from pydantic import TypeAdapter

from tests.fake_api import Reply
from tests.acp_client import RecordingClient, acp_agent, agent_env

SDK_SERVER = str(Path(__file__).parent / "mcp_servers" / "sdk_server.py")

#: What the agent may send, by method: its requests and notifications, and the
#: answers to the client's requests (by the request's method).
SENT_BY_AGENT = {
    "session/update": acp_schema.SessionNotification,
    "session/request_permission": acp_schema.RequestPermissionRequest,
    "fs/read_text_file": acp_schema.ReadTextFileRequest,
    "fs/write_text_file": acp_schema.WriteTextFileRequest,
}
ANSWERS = {
    "initialize": acp_schema.InitializeResponse,
    "session/new": acp_schema.NewSessionResponse,
    "session/load": acp_schema.LoadSessionResponse,
    "session/prompt": acp_schema.PromptResponse,
}


@cache
def validator(model: type) -> jsonschema.Draft202012Validator:
    schema = TypeAdapter(model).json_schema(by_alias=True)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(frame: dict[str, Any], asked: dict[Any, str]) -> list[str]:
    """What is wrong with one frame from the agent (empty: valid)."""
    if frame.get("jsonrpc") != "2.0":
        return ["jsonrpc must be '2.0'"]
    if "method" in frame:
        model = SENT_BY_AGENT.get(frame["method"])
        if model is None:
            return [f"the agent does not send {frame['method']!r}"]
        body, what = frame.get("params"), frame["method"]
    elif "error" in frame:
        model, body, what = acp_schema.Error, frame["error"], "error"
        if "result" in frame:
            return ["a response carries both result and error"]
    elif "result" in frame:
        method = asked.get(frame.get("id"))
        model = ANSWERS.get(method or "")
        if model is None:
            return [f"a result for request {frame.get('id')!r} ({method}) that has no schema here"]
        body, what = frame["result"], f"{method} result"
    else:
        return ["neither a request, a notification nor a response"]
    return [f"{what}: {'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator(model).iter_errors(body)]


ALLOW_ONCE = RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow_once"))
#: An editor that offers its files (it saves what it is asked to write) and shows
#: agent-fed terminals.
EDITOR = acp_schema.ClientCapabilities.model_validate(
    {"fs": {"readTextFile": True, "writeTextFile": True}, "_meta": {"terminal_output": True}})


class SavingEditor(RecordingClient):
    async def read_text_file(self, path: str, session_id: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> Any:
        return acp_schema.ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, content: str, path: str, session_id: str,
                              **kwargs: Any) -> Any:
        Path(path).write_text(content)
        return acp_schema.WriteTextFileResponse()


@pytest.mark.asyncio
async def test_every_frame_the_agent_sends_is_valid_against_the_schema(tmp_path, fake_api):
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    fake_api.enqueue(
        Reply.tool_use("edit_file", {"path": "notes.txt", "old_string": "two\n", "new_string": "2\n"},
                       id="toolu_s_edit", text_before="Editing."),
        Reply.tool_use("bash", {"command": "echo from bash > from-bash.txt"}, id="toolu_s_bash"),
        Reply.tool_use("mcp__demo__echo", {"text": "hello"}, id="toolu_s_mcp"),
        Reply.text("All done."),
        Reply.stall(after_text="Thinking slowly", seconds=30),
    )
    frames: list[dict[str, Any]] = []
    asked: dict[Any, str] = {}

    def observe(event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            frames.append(event.message)
        elif "method" in event.message and "id" in event.message:
            asked[event.message["id"]] = event.message["method"]

    client = SavingEditor()
    async with acp_agent(client, ["--cwd", str(tmp_path)], env=agent_env(tmp_path, fake_api),
                         cwd=tmp_path, observers=[observe]) as (conn, _proc):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=EDITOR)
        server = McpServerStdio(name="demo", command=sys.executable,
                                args=[SDK_SERVER, str(tmp_path / "rec.jsonl")], env=[])
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[server])).session_id
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("edit")]))
        for n in (1, 2):  # the edit, then the command (ask mode)
            await client.wait_for(lambda n=n: len(client.permission_requests) >= n)
            client.answers.put_nowait(ALLOW_ONCE)
        assert (await asyncio.wait_for(prompt, 20)).stop_reason == "end_turn"

        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("think")]))
        await client.wait_for(lambda: "Thinking" in client.text(sid))
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(prompt, 10)).stop_reason == "cancelled"

        with pytest.raises(RequestError):
            await conn.prompt(session_id="no-such-session", prompt=[text_block("x")])
        await conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])

    kinds = {f.get("params", {}).get("update", {}).get("sessionUpdate") for f in frames}
    assert {"agent_message_chunk", "tool_call", "tool_call_update", "user_message_chunk",
            "available_commands_update"} <= kinds
    assert any(f.get("method") == "session/request_permission" for f in frames)
    assert any("error" in f for f in frames)
    updates = [f["params"]["update"] for f in frames if f.get("method") == "session/update"]
    diffs = [c for u in updates if isinstance(u.get("content"), list) for c in u["content"]
             if c.get("type") == "diff"]
    assert diffs and diffs[0]["oldText"] == "one\ntwo\nthree\n"
    assert any(f.get("method") == "fs/write_text_file" for f in frames)
    assert (tmp_path / "notes.txt").read_text() == "one\n2\nthree\n"
    assert any(c.get("type") == "terminal" for u in updates if isinstance(u.get("content"), list)
               for c in u["content"])
    bad = {i: p for i, f in enumerate(frames) if (p := problems(f, asked))}
    assert not bad, {i: (frames[i], p) for i, p in list(bad.items())[:5]}
    assert len(frames) > 20


def test_the_checker_rejects_frames_the_schema_forbids():
    update = {"jsonrpc": "2.0", "method": "session/update", "params": {
        "sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t",
                                     "status": "almost_done"}}}
    assert problems(update, {})
    assert problems({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "tired"}}, {1: "session/prompt"})
    assert problems({"jsonrpc": "2.0", "method": "fs/delete_everything", "params": {}}, {})
    fine = {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}}
    assert problems(fine, {1: "session/prompt"}) == []
