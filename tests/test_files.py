"""File tools and workspace confinement: escapes refused, reads bounded, writes atomic."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.cancel import CancelScope, Cancelled
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.core.calls.tool import InvalidInput, ToolContext, ToolResult
from agent_tui.files import workspace as workspace_mod
from agent_tui.tools.file_lines import DEFAULT_LINES, MAX_LINE_CHARS, MAX_OUTPUT_CHARS
from agent_tui.tools.files import EditFileTool, ReadFileTool, WriteFileTool
from agent_tui.files.workspace import OutsideWorkspace, Workspace, WorkspaceError

SECRET = b"SECRET, do not touch\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace holding a sentinel file."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_bytes(SECRET)
    return out


def assert_outside_untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_bytes() == SECRET


def ctx_for(root: Path, scope: CancelScope | None = None) -> ToolContext:
    return ToolContext(
        scope=scope or CancelScope(), workspace=root, tool_use_id="tu_1", operation_id="op_1"
    )


async def call(tool, root: Path, scope: CancelScope | None = None, **raw) -> ToolResult:
    return await tool.run(tool.parse(raw), ctx_for(root, scope))


def run(tool, root: Path, **raw) -> ToolResult:
    return asyncio.run(call(tool, root, **raw))


# -- confinement -------------------------------------------------------------------


@pytest.mark.asyncio
async def test_dotdot_escape_is_refused_for_read_write_and_edit(ws: Path, outside: Path) -> None:
    for tool, raw in [
        (ReadFileTool(), {"path": "../outside/secret.txt"}),
        (WriteFileTool(), {"path": "../outside/secret.txt", "content": "x"}),
        (WriteFileTool(), {"path": "a/../../outside/new.txt", "content": "x"}),
        (EditFileTool(), {"path": "../outside/secret.txt", "old_string": "SECRET", "new_string": "x"}),
    ]:
        result = await call(tool, ws, **raw)
        assert result.is_error
        assert "outside the workspace" in result.content
    assert_outside_untouched(outside)
    assert not (ws / "a").exists()


@pytest.mark.asyncio
async def test_absolute_path_outside_is_refused_and_inside_is_allowed(ws: Path, outside: Path) -> None:
    result = await call(WriteFileTool(), ws, path=str(outside / "secret.txt"), content="x")
    assert result.is_error and "outside the workspace" in result.content
    result = await call(ReadFileTool(), ws, path=str(outside / "secret.txt"))
    assert result.is_error and "outside the workspace" in result.content
    result = await call(WriteFileTool(), ws, path=str(ws / "in.txt"), content="ok\n")
    assert not result.is_error, result.content
    assert (ws / "in.txt").read_text() == "ok\n"
    assert_outside_untouched(outside)


@pytest.mark.asyncio
async def test_symlink_inside_pointing_out_is_refused(ws: Path, outside: Path) -> None:
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    read = await call(ReadFileTool(), ws, path="link.txt")
    assert read.is_error and "outside the workspace" in read.content
    assert "link.txt is a symlink to" in read.content
    write = await call(WriteFileTool(), ws, path="link.txt", content="pwned")
    assert write.is_error and "outside the workspace" in write.content
    edit = await call(EditFileTool(), ws, path="link.txt", old_string="SECRET", new_string="x")
    assert edit.is_error
    assert (ws / "link.txt").is_symlink()
    assert_outside_untouched(outside)


@pytest.mark.asyncio
async def test_symlink_directory_in_the_middle_pointing_out_is_refused(ws: Path, outside: Path) -> None:
    (ws / "sub").mkdir()
    (ws / "sub" / "door").symlink_to(outside)
    read = await call(ReadFileTool(), ws, path="sub/door/secret.txt")
    assert read.is_error and "outside the workspace" in read.content
    write = await call(WriteFileTool(), ws, path="sub/door/new/file.txt", content="x")
    assert write.is_error and "outside the workspace" in write.content
    assert_outside_untouched(outside)


@pytest.mark.asyncio
async def test_relative_symlink_climbing_out_is_refused(ws: Path, outside: Path) -> None:
    (ws / "sub").mkdir()
    (ws / "sub" / "up").symlink_to("../../outside")
    result = await call(WriteFileTool(), ws, path="sub/up/secret.txt", content="x")
    assert result.is_error and "outside the workspace" in result.content
    assert_outside_untouched(outside)


@pytest.mark.asyncio
async def test_symlink_inside_pointing_inside_is_followed_and_kept(ws: Path) -> None:
    (ws / "docs").mkdir()
    (ws / "docs" / "real.md").write_text("one\ntwo\n")
    (ws / "README.md").symlink_to("docs/real.md")
    (ws / "alias").symlink_to(ws / "docs")  # absolute target inside the workspace
    read = await call(ReadFileTool(), ws, path="README.md")
    assert read.content.splitlines() == ["     1\tone", "     2\ttwo"]
    read = await call(ReadFileTool(), ws, path="alias/real.md")
    assert not read.is_error, read.content
    write = await call(WriteFileTool(), ws, path="README.md", content="three\n")
    assert not write.is_error, write.content
    assert "symlink to docs/real.md" in write.content
    assert (ws / "README.md").is_symlink()
    assert (ws / "docs" / "real.md").read_text() == "three\n"


def test_symlink_loop_is_a_clear_error(ws: Path) -> None:
    (ws / "a").symlink_to("b")
    (ws / "b").symlink_to("a")
    with pytest.raises(WorkspaceError, match="too many levels"):
        Workspace(ws).read_bytes("a")


def test_walk_refuses_a_symlink_swapped_in_at_a_component(
    ws: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory is real when the call starts and becomes a symlink right before
    the walk opens it: the O_NOFOLLOW open sees the link, and its target is refused."""
    (ws / "sub").mkdir()
    real_open = os.open
    swapped = []

    def racing_open(path, flags, mode=0o777, *, dir_fd=None):
        if path == "sub" and dir_fd is not None and not swapped:
            os.rename(ws / "sub", ws / "sub.old")
            os.symlink(outside, ws / "sub")
            swapped.append(True)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    workspace = Workspace(ws)
    assert workspace.resolve("sub/secret.txt") == ws.resolve() / "sub" / "secret.txt"
    monkeypatch.setattr(workspace_mod.os, "open", racing_open)
    with pytest.raises(OutsideWorkspace):
        workspace.write_atomic("sub/secret.txt", b"pwned")
    monkeypatch.undo()
    assert swapped
    assert_outside_untouched(outside)


@pytest.mark.asyncio
async def test_symlink_swapped_in_at_the_file_is_replaced_not_followed(ws: Path, outside: Path) -> None:
    """Between the check and the rename the file becomes a link to a file outside:
    the rename replaces the link itself, so nothing outside is written."""
    (ws / "f.txt").write_text("old\n")

    def swap(path: Path, old: bytes | None) -> None:
        (ws / "f.txt").unlink()
        (ws / "f.txt").symlink_to(outside / "secret.txt")

    result = await call(WriteFileTool(on_before_write=swap), ws, path="f.txt", content="new\n")
    assert not result.is_error, result.content
    assert not (ws / "f.txt").is_symlink()
    assert (ws / "f.txt").read_text() == "new\n"
    assert_outside_untouched(outside)


def test_racing_directory_swaps_never_reach_outside(ws: Path, outside: Path) -> None:
    (ws / "sub").mkdir()
    (ws / "sub" / "secret.txt").write_bytes(b"inside\n")
    workspace = Workspace(ws)
    stop = threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            os.rename(ws / "sub", ws / "sub.real")
            os.symlink(outside, ws / "sub")
            os.unlink(ws / "sub")
            os.rename(ws / "sub.real", ws / "sub")

    thread = threading.Thread(target=swapper)
    thread.start()
    reads = refused = 0
    try:
        start = time.monotonic()
        while time.monotonic() - start < 0.3 or not (reads and refused):
            if time.monotonic() - start > 3:
                break
            try:
                data = workspace.read_bytes("sub/secret.txt")
                assert data != SECRET
                reads += 1
                workspace.write_atomic("sub/secret.txt", b"inside\n", make_parents=False)
            except (WorkspaceError, OSError):
                refused += 1
    finally:
        stop.set()
        thread.join()
    assert reads > 0 and refused > 0, (reads, refused)
    assert_outside_untouched(outside)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    path=st.one_of(
        st.text(max_size=40),
        st.lists(
            st.sampled_from(
                ["a", "..", ".", "", "link", "out", "sub", "f.txt", "x" * 300, "\0", "\udc80"]
            ),
            max_size=8,
        ).map("/".join),
        st.lists(st.sampled_from(["..", "out", "secret.txt", "ws"]), max_size=6).map(
            lambda parts: "/" + "/".join(parts)
        ),
    )
)
def test_fuzzed_paths_stay_inside_or_fail_cleanly(ws: Path, outside: Path, path: str) -> None:
    if not (ws / "out").exists():
        (ws / "out").symlink_to(outside)
        (ws / "link").symlink_to("sub")
        (ws / "sub").mkdir()
        (ws / "sub" / "f.txt").write_text("hi\n")
    workspace = Workspace(ws)
    try:
        resolved = workspace.resolve(path)
    except (WorkspaceError, OSError):
        pass
    else:
        assert resolved == workspace.root or workspace.root in resolved.parents
    for op in (
        lambda: workspace.read_bytes(path, limit=1000),
        lambda: workspace.stat(path),
        lambda: workspace.write_atomic(path, b"fuzz\n"),
    ):
        try:
            op()
        except (WorkspaceError, OSError):
            pass
    assert_outside_untouched(outside)


# -- read_file ---------------------------------------------------------------------


def write_lines(path: Path, n: int) -> None:
    path.write_text("".join(f"line {i}\n" for i in range(1, n + 1)))


@pytest.mark.asyncio
async def test_read_file_numbers_lines_like_cat_n(ws: Path) -> None:
    write_lines(ws / "f.txt", 3)
    result = await call(ReadFileTool(), ws, path="f.txt")
    assert result.content == "     1\tline 1\n     2\tline 2\n     3\tline 3"
    assert result.outcome is ToolState.SUCCEEDED and result.side_effects is SideEffects.NONE


@pytest.mark.asyncio
async def test_read_file_offset_and_limit(ws: Path) -> None:
    write_lines(ws / "f.txt", 10)
    result = await call(ReadFileTool(), ws, path="f.txt", offset=4, limit=2)
    lines = result.content.splitlines()
    assert lines[:2] == ["     4\tline 4", "     5\tline 5"]
    assert "offset=6" in lines[-1]
    tail = await call(ReadFileTool(), ws, path="f.txt", offset=9)
    assert tail.content.splitlines() == ["     9\tline 9", "    10\tline 10"]
    past = await call(ReadFileTool(), ws, path="f.txt", offset=50)
    assert not past.is_error and "has 10 lines" in past.content and "past the end" in past.content


@pytest.mark.asyncio
async def test_read_file_rejects_zero_offset_with_readable_error(ws: Path) -> None:
    with pytest.raises(InvalidInput, match="offset"):
        ReadFileTool().parse({"path": "f.txt", "offset": 0})


@pytest.mark.asyncio
async def test_read_file_stops_at_default_line_budget_and_says_how_to_go_on(ws: Path) -> None:
    write_lines(ws / "big.txt", DEFAULT_LINES + 50)
    result = await call(ReadFileTool(), ws, path="big.txt")
    lines = result.content.splitlines()
    assert len(lines) == DEFAULT_LINES + 1
    assert f"offset={DEFAULT_LINES + 1}" in lines[-1]


@pytest.mark.asyncio
async def test_read_file_bounds_total_output(ws: Path) -> None:
    (ws / "wide.txt").write_text(("y" * 1500 + "\n") * 500)
    result = await call(ReadFileTool(), ws, path="wide.txt")
    assert len(result.content) <= MAX_OUTPUT_CHARS + 200
    assert "output limit" in result.content.splitlines()[-1]


@pytest.mark.asyncio
async def test_read_file_summarises_binary_files(ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\x89PNG\r\n\x00\x00" + bytes(range(256)) * 4)
    result = await call(ReadFileTool(), ws, path="blob.bin")
    assert not result.is_error
    assert result.content == "blob.bin: binary file, 1032 bytes (not shown)"


@pytest.mark.asyncio
async def test_read_file_decodes_invalid_utf8_with_replacement(ws: Path) -> None:
    (ws / "latin.txt").write_bytes(b"caf\xe9\nok\n")
    result = await call(ReadFileTool(), ws, path="latin.txt")
    assert result.content.splitlines() == ["     1\tcaf\ufffd", "     2\tok"]


@pytest.mark.asyncio
async def test_read_file_cuts_huge_lines(ws: Path) -> None:
    (ws / "min.js").write_text("a" * 100_000 + "\nnext\n")
    result = await call(ReadFileTool(), ws, path="min.js")
    first, second = result.content.splitlines()
    assert len(first) < MAX_LINE_CHARS + 100
    assert "line cut" in first
    assert second == "     2\tnext"


@pytest.mark.asyncio
async def test_read_file_empty_missing_and_directory(ws: Path) -> None:
    (ws / "empty.txt").write_bytes(b"")
    (ws / "dir").mkdir()
    assert "empty" in (await call(ReadFileTool(), ws, path="empty.txt")).content
    missing = await call(ReadFileTool(), ws, path="nope/x.txt")
    assert missing.is_error and "does not exist" in missing.content
    directory = await call(ReadFileTool(), ws, path="dir")
    assert directory.is_error and "is a directory" in directory.content


@pytest.mark.asyncio
async def test_read_file_refuses_fifo_without_hanging(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    result = await asyncio.wait_for(call(ReadFileTool(), ws, path="pipe"), 2)
    assert result.is_error and "not a regular file" in result.content


# -- write_file --------------------------------------------------------------------


@pytest.mark.asyncio
async def test_write_file_creates_parents_and_says_created_then_overwritten(ws: Path) -> None:
    first = await call(WriteFileTool(), ws, path="src/pkg/a.py", content="a = 1\nb = 2\n")
    assert first.content == "Created src/pkg/a.py (2 lines, 12 bytes)"
    assert first.side_effects is SideEffects.VERIFIED
    assert first.details["created"] is True
    again = await call(WriteFileTool(), ws, path="src/pkg/a.py", content="a = 3\n")
    assert again.content.startswith("Overwrote src/pkg/a.py (1 lines, 6 bytes; was 12 bytes")
    assert (ws / "src" / "pkg" / "a.py").read_text() == "a = 3\n"


@pytest.mark.asyncio
async def test_write_file_is_atomic_when_the_rename_fails(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "keep.txt").write_text("original\n")

    def broken_replace(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(workspace_mod.os, "replace", broken_replace)
    result = await call(WriteFileTool(), ws, path="keep.txt", content="new\n")
    monkeypatch.undo()
    assert result.is_error and "No space left" in result.content
    assert result.side_effects is SideEffects.NONE
    assert (ws / "keep.txt").read_text() == "original\n"
    assert sorted(p.name for p in ws.iterdir()) == ["keep.txt"]  # no temp file left


@pytest.mark.asyncio
async def test_write_file_keeps_permission_bits(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    await call(WriteFileTool(), ws, path="run.sh", content="#!/bin/sh\necho hi\n")
    assert script.stat().st_mode & 0o777 == 0o755


@pytest.mark.asyncio
async def test_write_file_hands_pre_image_to_hook(ws: Path) -> None:
    seen: list[tuple[Path, bytes | None]] = []
    tool = WriteFileTool(on_before_write=lambda p, old: seen.append((p, old)))
    await call(tool, ws, path="n.txt", content="1\n")
    await call(tool, ws, path="n.txt", content="2\n")
    root = ws.resolve()
    assert seen == [(root / "n.txt", None), (root / "n.txt", b"1\n")]


@pytest.mark.asyncio
async def test_failing_pre_image_hook_means_nothing_written(ws: Path) -> None:
    (ws / "f.txt").write_text("old\n")

    def broken(path: Path, old: bytes | None) -> None:
        raise RuntimeError("checkpoint disk full")

    result = await call(WriteFileTool(on_before_write=broken), ws, path="f.txt", content="new\n")
    assert result.is_error and "nothing was written" in result.content
    assert (ws / "f.txt").read_text() == "old\n"


@pytest.mark.asyncio
async def test_cancelled_scope_before_write_raises_and_writes_nothing(ws: Path) -> None:
    (ws / "f.txt").write_text("hello\n")
    hook_calls: list[Path] = []

    def hook(path: Path, old: bytes | None) -> None:
        hook_calls.append(path)

    for tool, raw in [
        (WriteFileTool(on_before_write=hook), {"path": "new/f.txt", "content": "x"}),
        (
            EditFileTool(on_before_write=hook),
            {"path": "f.txt", "old_string": "hello", "new_string": "bye"},
        ),
    ]:
        scope = CancelScope()
        scope.cancel()
        with pytest.raises(Cancelled):
            await call(tool, ws, scope, **raw)
    assert not (ws / "new").exists()
    assert (ws / "f.txt").read_text() == "hello\n"
    assert hook_calls == []


@pytest.mark.asyncio
async def test_cancel_arriving_after_the_walk_still_stops_the_write(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scope = CancelScope()
    real_existing = Workspace._existing

    def cancel_midway(self, *args):
        scope.cancel()  # lands after the tool's first cancel point, before the bytes
        return real_existing(self, *args)

    monkeypatch.setattr(Workspace, "_existing", cancel_midway)
    with pytest.raises(Cancelled):
        await call(WriteFileTool(), ws, scope, path="f.txt", content="x")
    assert not (ws / "f.txt").exists()


def test_write_file_rejects_unpaired_surrogates(ws: Path) -> None:
    result = run(WriteFileTool(), ws, path="f.txt", content="bad \ud800")
    assert result.is_error and "surrogate" in result.content
    assert not (ws / "f.txt").exists()


# -- edit_file ---------------------------------------------------------------------


@pytest.mark.asyncio
async def test_edit_file_replaces_one_unique_occurrence(ws: Path) -> None:
    (ws / "a.py").write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    seen: list[bytes | None] = []
    tool = EditFileTool(on_before_write=lambda p, old: seen.append(old))
    result = await call(
        tool, ws, path="a.py", old_string="    return 2\n", new_string="    return 3\n    # done\n"
    )
    assert not result.is_error, result.content
    assert result.side_effects is SideEffects.VERIFIED
    assert "at line 5" in result.content
    assert (ws / "a.py").read_text() == "def f():\n    return 1\n\ndef g():\n    return 3\n    # done\n"
    assert seen == [b"def f():\n    return 1\n\ndef g():\n    return 2\n"]


@pytest.mark.asyncio
async def test_edit_file_with_no_match_says_zero(ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\n")
    result = await call(EditFileTool(), ws, path="a.py", old_string="y = 1", new_string="y = 2")
    assert result.is_error and "0 matches" in result.content
    assert (ws / "a.py").read_text() == "x = 1\n"


@pytest.mark.asyncio
async def test_edit_file_with_several_matches_says_how_many_and_where(ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\ny = 2\nx = 1\nx = 1\n")
    result = await call(EditFileTool(), ws, path="a.py", old_string="x = 1", new_string="x = 9")
    assert result.is_error
    assert "occurs 3 times" in result.content and "lines 1, 3, 4" in result.content
    overlapping = await call(EditFileTool(), ws, path="a.py", old_string="\n", new_string="\r\n")
    assert overlapping.is_error and "4 times" in overlapping.content
    assert (ws / "a.py").read_text() == "x = 1\ny = 2\nx = 1\nx = 1\n"


@pytest.mark.asyncio
async def test_edit_file_matches_crlf_files_and_keeps_their_endings(ws: Path) -> None:
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await call(EditFileTool(), ws, path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert not result.is_error, result.content
    assert (ws / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


@pytest.mark.asyncio
async def test_edit_file_keeps_undecodable_bytes_elsewhere(ws: Path) -> None:
    (ws / "mixed.txt").write_bytes(b"caf\xe9\nold\n")
    result = await call(EditFileTool(), ws, path="mixed.txt", old_string="old", new_string="new")
    assert not result.is_error
    assert (ws / "mixed.txt").read_bytes() == b"caf\xe9\nnew\n"


@pytest.mark.asyncio
async def test_edit_file_errors_for_missing_file_empty_or_same_strings(ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    missing = await call(EditFileTool(), ws, path="nope.txt", old_string="a", new_string="b")
    assert missing.is_error and "does not exist" in missing.content
    empty = await call(EditFileTool(), ws, path="a.txt", old_string="", new_string="b")
    assert empty.is_error and "empty" in empty.content
    same = await call(EditFileTool(), ws, path="a.txt", old_string="a", new_string="a")
    assert same.is_error and "same" in same.content


@pytest.mark.asyncio
async def test_edit_file_refuses_when_the_file_changed_after_reading(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "a.txt").write_text("a = 1\n")
    real_read = Workspace.read_bytes

    def read_then_someone_writes(self, path, *, limit=None):
        data = real_read(self, path, limit=limit)
        (ws / "a.txt").write_text("a = 1\nb = 2\n")
        return data

    monkeypatch.setattr(Workspace, "read_bytes", read_then_someone_writes)
    result = await call(EditFileTool(), ws, path="a.txt", old_string="a = 1", new_string="a = 5")
    assert result.is_error and "changed" in result.content
    assert (ws / "a.txt").read_text() == "a = 1\nb = 2\n"


# -- summaries and inputs ------------------------------------------------------------


def test_summaries_are_one_line() -> None:
    write = WriteFileTool()
    args = write.parse({"path": "src/a.py", "content": "x\n" * 120})
    assert write.summary(args) == "write_file src/a.py (120 lines)"
    edit = EditFileTool()
    args = edit.parse({"path": "a.py", "old_string": "a\nb", "new_string": "c"})
    assert edit.summary(args) == "edit_file a.py (-2 +1 lines)"
    read = ReadFileTool()
    assert read.summary(read.parse({"path": "a.py"})) == "read_file a.py"
    args = read.parse({"path": "a.py", "offset": 10, "limit": 5})
    assert read.summary(args) == "read_file a.py (lines 10-14)"
    assert "\n" not in write.summary(write.parse({"path": "a\nb", "content": ""}))


def test_tools_declare_read_only_and_schemas() -> None:
    assert ReadFileTool.read_only and not WriteFileTool.read_only and not EditFileTool.read_only
    assert set(EditFileTool().input_schema()["required"]) == {"path", "old_string", "new_string"}
    assert ReadFileTool().input_schema()["required"] == ["path"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None)
@given(
    raw=st.dictionaries(
        st.sampled_from(["path", "offset", "limit", "content", "old_string", "new_string", "junk"]),
        _json,
        max_size=5,
    )
)
def test_fuzzed_inputs_parse_or_raise_invalid_input(raw: dict) -> None:
    for tool in (ReadFileTool(), WriteFileTool(), EditFileTool()):
        try:
            tool.parse(raw)
        except InvalidInput as exc:
            assert str(exc).startswith(f"invalid input for {tool.name}")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.text(max_size=30),
    text=st.text(max_size=30),
    offset=st.none() | st.integers(min_value=1, max_value=5),
)
def test_fuzzed_calls_return_results_not_exceptions(
    ws: Path, outside: Path, path: str, text: str, offset
) -> None:
    (ws / "f.txt").write_text("a\nb\n")
    calls = [
        (ReadFileTool(), {"path": path, "offset": offset}),
        (WriteFileTool(), {"path": path, "content": text}),
        (EditFileTool(), {"path": "f.txt", "old_string": text, "new_string": path}),
        (EditFileTool(), {"path": path, "old_string": "a", "new_string": text}),
    ]
    for tool, raw in calls:
        result = run(tool, ws, **raw)
        assert isinstance(result, ToolResult)
    assert_outside_untouched(outside)


# -- registry ------------------------------------------------------------------------


def test_default_tools_offers_file_tools_and_bash(ws: Path) -> None:
    from agent_tui.tools.registry import default_tools

    tools = default_tools(ws)
    assert {"read_file", "write_file", "edit_file", "bash"} <= set(tools.names())
    hook = lambda p, old: None  # noqa: E731
    assert default_tools(ws, on_before_write=hook).get("write_file").on_before_write is hook


def test_default_tools_with_jobs_adds_the_job_tools(ws: Path) -> None:
    from agent_tui.tools import background
    from agent_tui.tools.registry import default_tools

    tools = default_tools(ws, jobs=background.BackgroundJobs())
    assert tools.names() == [
        "read_file", "write_file", "edit_file", "glob", "grep", "bash", "bash_output",
        "kill_shell", "task", "todo_write", "web_fetch", "exit_plan_mode",
    ]


def test_default_tools_refuses_a_missing_workspace(tmp_path: Path) -> None:
    from agent_tui.tools.registry import default_tools

    with pytest.raises(NotADirectoryError):
        default_tools(tmp_path / "missing")
