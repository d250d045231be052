"""ACP: a client that offers ``fs/read_text_file`` is asked for the files read_file
reads (the agent sees unsaved edits); the path is checked by the agent first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities, ReadTextFileResponse

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
