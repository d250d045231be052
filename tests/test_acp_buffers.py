"""ACP: a client that offers ``fs/read_text_file`` is asked for the files read_file
reads (the agent sees unsaved edits); one that offers ``fs/write_text_file`` writes the
write tools' files (they show in its buffers). The path is checked by the agent first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    WriteTextFileResponse,
)

from tests.acp_client import RecordingClient, spawn
from tests.fake_api import Reply


class EditorClient(RecordingClient):
    """An editor with one unsaved buffer."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = buffers
        self.reads: list[str] = []

    async def read_text_file(self, path: str, session_id: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        return ReadTextFileResponse(content=self.buffers[path])


@pytest.mark.asyncio
async def test_read_file_sees_the_editors_unsaved_text(tmp_path: Path, fake_api: Any) -> None:
    (tmp_path / "notes.txt").write_text("saved on disk\n")
    (tmp_path / "pixel.bin").write_bytes(b"\0\1\2")
    fake_api.enqueue(Reply.tool_use("read_file", {"path": "notes.txt"}, id="toolu_read"),
                     Reply.tool_use("read_file", {"path": "pixel.bin"}, id="toolu_bin"),
                     Reply.tool_use("read_file", {"path": "../outside.txt"}, id="toolu_out"),
                     Reply.text("read"))
    client = EditorClient({str(tmp_path / "notes.txt"): "typed, not saved\n"})
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True))
    async with spawn(client, tmp_path, fake_api, "--permission-mode", "auto") as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("read it")])
    assert client.reads == [str(tmp_path / "notes.txt")]  # not the binary file, not outside
    result = fake_api.requests[1]["messages"][-1]["content"][0]["content"]
    assert "typed, not saved" in str(result) and "saved on disk" not in str(result)


class WritingEditor(EditorClient):
    """An editor that also writes files: into its buffers (it does not save them)."""

    def __init__(self, buffers: dict[str, str], *, retype: dict[str, str] | None = None) -> None:
        super().__init__(buffers)
        self.writes: list[tuple[str, str]] = []
        self.retype = retype or {}  # the user types this into a buffer after its first read

    async def read_text_file(self, path: str, session_id: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        answer = await super().read_text_file(path, session_id, line, limit)
        if path in self.retype:
            self.buffers[path] = self.retype.pop(path)
        return answer

    async def write_text_file(self, content: str, path: str, session_id: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()


def _results(fake_api: Any) -> list[str]:
    """The text of each tool result the model got, in order (the last request has all)."""
    return [str(block["content"]) for message in fake_api.requests[-1]["messages"]
            if message["role"] == "user"
            and isinstance(message["content"], list)
            for block in message["content"] if block.get("type") == "tool_result"]


@pytest.mark.asyncio
async def test_writes_go_through_the_editor_after_our_checks(tmp_path: Path, fake_api: Any) -> None:
    notes, new, raced = tmp_path / "notes.txt", tmp_path / "sub" / "new.txt", tmp_path / "raced.txt"
    notes.write_text("saved line\n")
    raced.write_text("one\n")
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9 one\n")  # not UTF-8: the editor could not hold it as it is
    fake_api.enqueue(
        Reply.tool_use("edit_file", {"path": "notes.txt", "old_string": "unsaved line",
                                     "new_string": "edited line"}, id="toolu_edit"),
        Reply.tool_use("write_file", {"path": "sub/new.txt", "content": "fresh\n"}, id="toolu_new"),
        Reply.tool_use("write_file", {"path": "../outside.txt", "content": "x"}, id="toolu_out"),
        Reply.tool_use("edit_file", {"path": "raced.txt", "old_string": "one",
                                     "new_string": "two"}, id="toolu_race"),
        Reply.tool_use("edit_file", {"path": "latin.txt", "old_string": "one",
                                     "new_string": "two"}, id="toolu_latin"),
        Reply.text("done"))
    client = WritingEditor({str(notes): "unsaved line\n", str(raced): "one\n"},
                           retype={str(raced): "one, typed meanwhile\n"})
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
    async with spawn(client, tmp_path, fake_api, "--permission-mode", "auto") as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("write them")])
    # The edit applies to the text the user sees; the editor writes it, not us.
    assert client.writes == [(str(notes), "edited line\n"), (str(new), "fresh\n")]
    assert notes.read_text() == "saved line\n" and not new.exists()
    assert new.parent.is_dir()  # the folder was made by the checked walk
    results = _results(fake_api)
    assert "Edited notes.txt" in results[0] and "Created sub/new.txt" in results[1]
    assert "outside" in results[2]  # refused by our path check: the editor was never asked
    assert "changed while it was being edited" in results[3]  # the buffer moved: no write
    assert raced.read_text() == "one\n"
    assert "Edited latin.txt" in results[4] and latin.read_bytes() == b"caf\xe9 two\n"
    # The rewind pre-image is the buffer's text (the user's unsaved line), not the disk's.
    blobs = [p.read_bytes() for p in (tmp_path / "home").rglob("*") if p.is_file()]
    assert b"unsaved line\n" in blobs
