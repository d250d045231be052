"""ACP: the agent's ``fs/*`` requests to an editor that does not answer, or that answers
after a folder on the way was swapped for a link, end the call with the truth; Esc
ends a pending one at once. Each abandoned request is cancelled with ``$/cancel_request``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    WriteTextFileResponse,
)

from tests.acp_client import RecordingClient, acp_agent, agent_env
from tests.fake_api import Reply


class SlowEditor(RecordingClient):
    """An editor that never answers for paths under ``stuck/`` (writes: also ``stuckw/``,
    whose reads it answers); for paths under ``swap/``
    an attacker swaps the folder for a link to ``outside`` before the editor acts, and
    the editor reads or writes through it."""

    def __init__(self, outside: Path) -> None:
        super().__init__()
        self.outside = outside
        self.asked: list[str] = []
        self.cancels: list[Any] = []  # the requestId of each $/cancel_request

    def observe(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction == StreamDirection.INCOMING and message.get("method") == "$/cancel_request":
            self.cancels.append(message["params"]["requestId"])

    async def _act(self, path: str, also: str = "") -> None:
        self.asked.append(path)
        target = Path(path)
        if target.parent.name in ("stuck", "stuck" + also):
            await asyncio.Event().wait()  # never answers
        if target.parent.name in ("swap", "swap" + also):
            os.rename(target.parent, target.parent.with_name(target.parent.name + "-moved"))
            os.symlink(self.outside, target.parent)

    async def read_text_file(self, path: str, session_id: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        await self._act(path)
        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, content: str, path: str, session_id: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        await self._act(path, also="w")
        Path(path).write_text(content)
        return WriteTextFileResponse()


def _session(client: SlowEditor, tmp_path: Path, fake_api: Any) -> Any:
    env = agent_env(tmp_path, fake_api) | {"AGENT_TUI_ACP_EDITOR_TIMEOUT": "1"}
    return acp_agent(client, ["--permission-mode", "auto", "--cwd", str(tmp_path)], env=env,
                     cwd=tmp_path, observers=[client.observe])


async def _open(conn: Any, tmp_path: Path) -> str:
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
    await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
    return str((await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id)


def _results(fake_api: Any) -> list[str]:
    return [str(block["content"]) for message in fake_api.requests[-1]["messages"]
            if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"] if block.get("type") == "tool_result"]


@pytest.mark.asyncio
async def test_an_editor_that_never_answers_or_is_raced_by_a_link_ends_the_call_truthfully(
        tmp_path: Path, fake_api: Any) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    for folder in (work / "stuck", work / "stuckw", work / "swap", outside):
        folder.mkdir(parents=True)
    (work / "stuck" / "a.txt").write_text("on disk\n")
    (work / "stuckw" / "a.txt").write_text("on disk\n")
    (work / "swap" / "b.txt").write_text("inside\n")
    (outside / "b.txt").write_text("SECRET outside\n")
    fake_api.enqueue(
        Reply.tool_use("read_file", {"path": "stuck/a.txt"}, id="toolu_r"),
        Reply.tool_use("write_file", {"path": "stuckw/a.txt", "content": "new\n"}, id="toolu_w"),
        Reply.tool_use("read_file", {"path": "swap/b.txt"}, id="toolu_rs"),
        Reply.text("done"))
    client = SlowEditor(outside)
    async with _session(client, work, fake_api) as (conn, _):
        sid = await _open(conn, work)
        await conn.prompt(session_id=sid, prompt=[text_block("go")])
    read, write, swapped = _results(fake_api)
    assert "did not answer fs/read_text_file" in read and "nothing was read" in read
    assert "on disk" not in read  # no silent fallback to the disk behind the editor
    assert "did not answer fs/write_text_file" in write
    assert "does not hold the new text" in write and "may still write it" in write
    assert (work / "stuckw" / "a.txt").read_text() == "on disk\n"
    assert "changed while the editor read it" in swapped and "SECRET" not in swapped
    assert len(client.cancels) == 2  # the read and the write, each by its id

    # A write raced the same way: the editor wrote outside; the call says so.
    (work / "swapw").mkdir()
    fake_api.enqueue(
        Reply.tool_use("write_file", {"path": "swapw/b.txt", "content": "x\n"}, id="toolu_ws"),
        Reply.text("done"))
    async with _session(client, work, fake_api) as (conn, _):
        sid = await _open(conn, work)
        await conn.prompt(session_id=sid, prompt=[text_block("go")])
    result = _results(fake_api)[-1]
    assert "changed while the editor wrote it" in result and "outside the workspace" in result
    assert (outside / "b.txt").read_text() == "x\n"  # what the message warns of


@pytest.mark.asyncio
async def test_esc_ends_a_write_the_editor_has_not_answered(tmp_path: Path, fake_api: Any) -> None:
    (tmp_path / "stuck").mkdir()
    fake_api.enqueue(
        Reply.tool_use("write_file", {"path": "stuck/a.txt", "content": "new\n"}, id="toolu_w"),
        Reply.text("unused"))
    client = SlowEditor(tmp_path)
    env = agent_env(tmp_path, fake_api)  # the default wait (30 s): Esc must not wait for it
    async with acp_agent(client, ["--permission-mode", "auto", "--cwd", str(tmp_path)],
                         env=env, cwd=tmp_path, observers=[client.observe]) as (conn, _):
        sid = await _open(conn, tmp_path)
        prompt = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await client.wait_for(lambda: client.asked)
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(prompt, 10)
        assert response.stop_reason == "cancelled"
        assert client.last_state("toolu_w") == "cancelled_while_running"
        await client.wait_for(lambda: client.cancels)
    assert not (tmp_path / "stuck" / "a.txt").exists()
