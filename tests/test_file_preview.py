"""The one preview of a file tool's call (``files/preview.py``): what the TUI's prompt,
the ACP client's diff and the tool itself agree the file will hold."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_tui.acp.updates import UpdateMapper
from agent_tui.cancel import CancelScope
from agent_tui.core.calls.tool import ToolContext
from agent_tui.files.preview import preview
from agent_tui.tools.files import EditFileTool
from agent_tui.ui.render.diffs import diff_for_call


def _edit(root: Path, **raw: str) -> str:
    tool = EditFileTool()
    ctx = ToolContext(scope=CancelScope(), workspace=root, tool_use_id="t", operation_id="o")
    result = asyncio.run(tool.run(tool.parse(raw), ctx))
    assert not result.is_error, result.content
    return (root / raw["path"]).read_bytes().decode()


def test_an_edit_in_a_crlf_file_is_previewed_as_the_tool_then_writes_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    call = {"path": "a.txt", "old_string": "one\ntwo", "new_string": "1\n2"}
    seen = preview("edit_file", call, tmp_path)
    assert seen is not None
    assert seen.path == str(tmp_path / "a.txt")
    assert seen.old == "one\r\ntwo\r\nthree\r\n"
    assert seen.new == "1\r\n2\r\nthree\r\n"
    assert _edit(tmp_path, **call) == seen.new  # the tool edits by the same rule


def test_an_edit_that_cannot_apply_has_no_preview(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\nx\n")
    assert preview("edit_file", {"path": "a.txt", "old_string": "x", "new_string": "y"},
                   tmp_path) is None  # twice: the tool refuses it too
    assert preview("edit_file", {"path": "missing.txt", "old_string": "x", "new_string": "y"},
                   tmp_path) is None
    (tmp_path / "b.bin").write_bytes(b"\xff\xfe x")
    assert preview("edit_file", {"path": "b.bin", "old_string": "x", "new_string": "y"},
                   tmp_path) is None


def test_both_front_ends_read_a_write_the_same_way(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "old.txt").write_text("before\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    over = {"path": "old.txt", "content": "after\n"}

    seen = preview("write_file", over, workspace)
    assert seen is not None and (seen.old, seen.new) == ("before\n", "after\n")
    acp = UpdateMapper(workspace).edit_content("t1", "write_file", over)
    assert acp[0].old_text == "before\n" and acp[0].new_text == "after\n"
    tui = diff_for_call("write_file", over, workspace)
    assert tui is not None and tui.removed == 1 and tui.added == 1

    fresh = diff_for_call("write_file", {"path": "new.txt", "content": "a\nb\n"}, workspace)
    assert fresh is not None and fresh.new_file
    # a path outside the workspace is never read, by either
    outside = {"path": "../outside.txt", "content": "x\n"}
    assert preview("write_file", outside, workspace) is None
    assert UpdateMapper(workspace).edit_content("t2", "write_file", outside) == []
    shown = diff_for_call("write_file", outside, workspace)
    assert shown is not None and shown.content_only and not shown.removed
