"""The file tools the model sees: ``read_file``, ``write_file``, ``edit_file``.

Every path goes through :class:`~agent_tui.files.workspace.Workspace`, so nothing
outside the workspace is read or written (symlinks included). Folders added to the
workspace (``ToolContext.added_dirs``) are read and written the same way, each
confined to its own tree; read_file also reads in skills' folders (``read_roots``). Output is bounded:
long files stop at a line or character budget and say how to read on, long lines
are cut, binary files are summarised. Writes are atomic (temp file + rename), check
the cancel scope right before the first byte, and hand the old content to an
optional pre-image hook (the checkpoint layer) before replacing it.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import io
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ConfigDict, Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.cancel import Cancelled, CancelScope
from agent_tui.protocol import SideEffects
from agent_tui.core.calls.tool import In, Tool, ToolContext, ToolResult
from agent_tui.protocol.tool_names import FileAccess, FileChange, HookResponse, RuleSubject
from agent_tui.files.buffers import Editor, OpenBuffers, is_text, shown_text, write_through
from agent_tui.files.images import sniff_image
from agent_tui.files.preview import locate
from agent_tui.files.workspace import (
    BeforeWrite,
    FileTooLarge,
    Workspace,
    WorkspaceError,
    WriteReport,
    pick_root,
)
from agent_tui.tools.file_lines import DEFAULT_LINES, MAX_LINE_CHARS, SNIFF_BYTES, read_lines

OnBeforeWrite = Callable[[Path, "bytes | None"], None]
OnAfterWrite = Callable[[Path, bytes], None]

MAX_EDIT_BYTES = 32 * 1024 * 1024  # edit_file loads the whole file


class FileChanged(WorkspaceError):
    """The file changed between reading it and writing the edit."""


class PreImageFailed(WorkspaceError):
    """The pre-image hook (checkpoint) failed, so the write did not happen."""


_PATH_HELP = (
    "File path, relative to the workspace (or absolute inside it or inside a folder "
    "added to it)"
)


class _Input(DeferredModel):
    model_config = ConfigDict(extra="forbid")


# -- read_file ----------------------------------------------------------------------


class ReadFileInput(_Input):
    path: str = Field(description=_PATH_HELP)
    offset: int | None = Field(default=None, ge=1, description="1-based line to start at")
    limit: int | None = Field(default=None, ge=1, description="Number of lines to read")


class ReadFileTool(Tool[ReadFileInput]):
    name = "read_file"
    claude_name = "Read"
    stands_in_for = ("NotebookRead",)  # Claude Code's older tool: a notebook is a file
    claude_keys = {"path": "file_path"}
    acp_kind = "read"
    folds_as = ("read", "file", "files")
    file_access = FileAccess.READS
    family_rule = True
    guards_access = True  # a command's reads and a search's findings answer to Read rules
    rule_subject = RuleSubject.PATH
    file_key, line_key = "path", "offset"
    hook_response = HookResponse.FILE_READ
    description = (
        "Read a text file in the workspace. Read a file before you edit it; when you "
        "need several files, read them in one message (the reads run at once).\n"
        "- Lines come numbered like `cat -n` (number, tab, text): the number is not part "
        "of the file, so leave it out of edit_file's old_string.\n"
        f"- Shows up to {DEFAULT_LINES} lines from the start unless `limit` is given; "
        "`offset` is the 1-based line to start at. A cut-off read says where to go on.\n"
        f"- Lines longer than {MAX_LINE_CHARS} characters are cut; PNG, JPEG, GIF and "
        "WebP images are shown to you as images (screenshots); other binary files are "
        "only described. Paths are relative to the workspace (absolute ones must lie "
        "inside it).\n"
        "- To find files use glob; to search their contents use grep."
    )
    read_only = True
    Input = ReadFileInput

    def __init__(self, read_roots: Sequence[str | os.PathLike[str]] = ()) -> None:
        # Folders read_file may also read in (skills' folders, given by absolute path):
        # read-only, confined to each folder as the workspace is (symlinks included).
        self.read_roots = [Path(os.path.abspath(r)) for r in read_roots]
        self.buffers: OpenBuffers | None = None  # an editor's unsaved text (files/buffers.py)

    def summary(self, args: ReadFileInput) -> str:
        text = f"read_file {_one_line(args.path)}"
        if args.offset is not None or args.limit is not None:
            start = args.offset or 1
            end = f"{start + args.limit - 1}" if args.limit is not None else "end"
            text += f" (lines {start}-{end})"
        return text

    async def run(self, args: ReadFileInput, ctx: ToolContext) -> ToolResult:
        ctx.scope.raise_if_cancelled()
        ws = _workspace(ctx, args.path, self.read_roots)
        if isinstance(ws, ToolResult):
            return ws
        shown = ws.display(args.path)
        try:
            with ws.open_read(args.path) as fh:
                buffer = await self._buffer(ws, args.path, fh, ctx.scope)
                return read_lines(buffer or fh, shown, args.offset or 1, args.limit)
        except (WorkspaceError, OSError) as exc:
            return ToolResult.error(describe_error(exc, shown))

    async def _buffer(self, ws: Workspace, path: str, fh: BinaryIO,
                      scope: CancelScope) -> BinaryIO | None:
        """The editor's text of a checked text file (``files/buffers.py``), or None."""
        head = fh.read(SNIFF_BYTES)
        fh.seek(0)
        if sniff_image(head) is not None or b"\0" in head:
            return None
        text = await shown_text(self.buffers, ws, path, scope)  # None: the editor could not say
        return io.BytesIO(text) if text is not None else None


# -- write_file / edit_file -----------------------------------------------------------


class _WriteTool(Tool[In]):
    """What both write tools share: the pre-image hook and the guarded write, and what
    they are to hooks, rules and the front ends (Claude Code's ``Edit`` family)."""

    read_only = False
    claude_keys = {"path": "file_path"}
    acp_kind = "edit"
    file_access = FileAccess.EDITS
    family_rule = True
    rule_subject = RuleSubject.PATH
    file_key = "path"
    hook_response = HookResponse.FILE_EDIT
    reports_own_writes = True

    def __init__(
        self,
        on_before_write: OnBeforeWrite | None = None,
        on_after_write: OnAfterWrite | None = None,
    ) -> None:
        self.on_before_write = on_before_write
        self.on_after_write = on_after_write
        self.editor: Editor | None = None  # an editor that writes for us (files/buffers.py)

    def rewind_caveat(self, raw_input: dict[str, Any]) -> str | None:
        return None  # a pre-image of every file it writes is kept: fully undoable

    def _written(self, path: Path, data: bytes) -> None:
        """Tell the checkpoint layer what we left in the file (for conflict checks)."""
        if self.on_after_write is None:
            return
        try:
            self.on_after_write(path, data)
        except Exception:
            pass  # the write happened; a missed note only makes a later rewind ask first

    async def _write(self, ctx: ToolContext, ws: Workspace, path: str, data: bytes, *,
                     make_parents: bool = True, expect: bytes | None = None,
                     plain: bool = True) -> WriteReport:
        """The guarded write: to disk, or through the editor when one writes for us."""
        hook = self._hook(ctx, expect)
        if self.editor is None or not plain:  # not UTF-8 text: on disk, byte for byte
            return ws.write_atomic(path, data, make_parents=make_parents, before_write=hook)
        return await write_through(self.editor, ws, path, data, make_parents=make_parents,
                                   before_write=hook, scope=ctx.scope)

    def _hook(self, ctx: ToolContext, expect: bytes | None = None) -> BeforeWrite:
        def before_write(path: Path, old: bytes | None) -> None:
            ctx.scope.raise_if_cancelled()  # the last cancel point before a side effect
            if expect is not None and old != expect:
                raise FileChanged(f"{path} changed while it was being edited; read it again")
            if self.on_before_write is not None:
                try:
                    self.on_before_write(path, old)
                except Cancelled:
                    raise
                except Exception as exc:  # the rewind promise needs the pre-image
                    raise PreImageFailed(
                        f"could not save the old content of {path} for rewind ({exc}); "
                        "nothing was written"
                    ) from exc

        return before_write


class WriteFileInput(_Input):
    path: str = Field(description=_PATH_HELP)
    content: str = Field(description="The complete new content of the file")


class WriteFileTool(_WriteTool[WriteFileInput]):
    name = "write_file"
    claude_name = "Write"
    prompt_title = "Write file"
    file_change = FileChange.WRITE
    description = (
        "Create a file in the workspace, or replace one entirely. Missing parent folders "
        "are created; the write is atomic and can be rewound.\n"
        "- To change part of an existing file, use edit_file: it sends only the change "
        "and cannot lose the rest. Read a file before you overwrite it.\n"
        "- Do not create files the task does not need (notes, summaries, READMEs) unless "
        "the user asks for them."
    )
    Input = WriteFileInput

    def summary(self, args: WriteFileInput) -> str:
        return f"write_file {_one_line(args.path)} ({_count_lines(args.content)} lines)"

    async def run(self, args: WriteFileInput, ctx: ToolContext) -> ToolResult:
        data = _encode(args.content, "content")
        if isinstance(data, ToolResult):
            return data
        ws = _workspace(ctx, args.path)
        if isinstance(ws, ToolResult):
            return ws
        ctx.scope.raise_if_cancelled()
        try:
            report = await self._write(ctx, ws, args.path, data)
        except (WorkspaceError, OSError) as exc:
            return ToolResult.error(describe_error(exc, ws.display(args.path)))
        self._written(report.path, data)
        shown = _shown(ws, args.path, report.relative)
        lines = _count_lines(args.content)
        if report.created:
            text = f"Created {shown} ({lines} lines, {report.size} bytes)"
        else:
            text = (
                f"Overwrote {shown} ({lines} lines, {report.size} bytes; "
                f"was {report.old_size} bytes)"
            )
        result = ToolResult.ok(text, side_effects=SideEffects.VERIFIED)
        result.details = {
            "path": str(report.path),
            "created": report.created,
            "bytes": report.size,
            "lines": lines,
        }
        return result


class EditFileInput(_Input):
    path: str = Field(description=_PATH_HELP)
    old_string: str = Field(description="The exact text to replace; must occur once")
    new_string: str = Field(description="The text to put in its place")


class EditFileTool(_WriteTool[EditFileInput]):
    name = "edit_file"
    claude_name = "Edit"
    stands_in_for = ("MultiEdit",)  # several edits are several calls
    prompt_title = "Edit file"
    file_change = FileChange.EDIT
    guards_access = True  # a command's writes answer to Edit rules
    description = (
        "Change a file in the workspace: replace one exact occurrence of `old_string` "
        "with `new_string`. Read the file first.\n"
        "- `old_string` must match the file exactly, indentation and whitespace "
        "included, as read_file showed it without the line-number prefix, and occur "
        "exactly once: add surrounding lines to make it unique. The result says where "
        "it matched, or why it did not.\n"
        "- Keep the change small: several edit_file calls are better than one huge "
        "old_string. To create a file, use write_file.\n"
        "- The edit is atomic and can be rewound."
    )
    Input = EditFileInput

    def summary(self, args: EditFileInput) -> str:
        return (
            f"edit_file {_one_line(args.path)} "
            f"(-{_count_lines(args.old_string)} +{_count_lines(args.new_string)} lines)"
        )

    async def run(self, args: EditFileInput, ctx: ToolContext) -> ToolResult:
        if args.old_string == "":
            return ToolResult.error(
                "old_string is empty: give the exact text to replace "
                "(use write_file to create a file)"
            )
        if args.old_string == args.new_string:
            return ToolResult.error("old_string and new_string are the same: nothing to change")
        old_b = _encode(args.old_string, "old_string")
        new_b = _encode(args.new_string, "new_string")
        if isinstance(old_b, ToolResult):
            return old_b
        if isinstance(new_b, ToolResult):
            return new_b
        ctx.scope.raise_if_cancelled()
        ws = _workspace(ctx, args.path)
        if isinstance(ws, ToolResult):
            return ws
        shown = ws.display(args.path)
        try:
            data = ws.read_bytes(args.path, limit=MAX_EDIT_BYTES)
            plain = is_text(data)
            if self.editor is not None and plain:  # what the user sees, unsaved edits included
                shown_data = await shown_text(self.editor.read, ws, args.path, ctx.scope)
                data = data if shown_data is None else shown_data
        except FileNotFoundError:
            return ToolResult.error(f"{shown} does not exist (use write_file to create it)")
        except FileTooLarge:
            return ToolResult.error(
                f"{shown} is larger than {MAX_EDIT_BYTES} bytes; too large to edit"
            )
        except (WorkspaceError, OSError) as exc:
            return ToolResult.error(describe_error(exc, ws.display(args.path)))
        found, old_b, new_b = locate(data, old_b, new_b)  # the one edit rule (files/preview.py)
        if len(found) != 1:
            return ToolResult.error(_match_problem(data, found, shown))
        pos = found[0]
        new_data = data[:pos] + new_b + data[pos + len(old_b) :]
        ctx.scope.raise_if_cancelled()
        try:
            report = await self._write(ctx, ws, args.path, new_data, make_parents=False,
                                       expect=data, plain=plain)
        except (WorkspaceError, OSError) as exc:
            return ToolResult.error(describe_error(exc, ws.display(args.path)))
        self._written(report.path, new_data)
        line = data.count(b"\n", 0, pos) + 1
        old_n, new_n = _count_lines(args.old_string), _count_lines(args.new_string)
        text = (
            f"Edited {_shown(ws, args.path, report.relative)}: replaced {old_n} line(s) "
            f"with {new_n} line(s) at line {line}"
        )
        result = ToolResult.ok(text, side_effects=SideEffects.VERIFIED)
        result.details = {"path": str(report.path), "line": line, "bytes": report.size}
        return result


def _match_problem(data: bytes, found: list[int], shown: str) -> str:
    if not found:
        return (
            f"old_string not found in {shown} (0 matches); it must match the file exactly, "
            "including whitespace and indentation: read the file and copy the text"
        )
    lines = [str(data.count(b"\n", 0, p) + 1) for p in found[:10]]
    where = ", ".join(lines) + (", ..." if len(found) > 10 else "")
    count = f"{len(found)}+" if len(found) >= 1000 else str(len(found))
    return (
        f"old_string occurs {count} times in {shown} (at lines {where}); include more "
        "surrounding lines so that it matches exactly once"
    )


# -- helpers ---------------------------------------------------------------------------


def describe_error(exc: BaseException, path: str) -> str:
    """One sentence for the model about why a file operation failed."""
    if isinstance(exc, WorkspaceError):
        return str(exc)
    where = getattr(exc, "filename", None) or path
    if isinstance(exc, FileNotFoundError):
        if where != path:
            return f"{path} does not exist ({where} is missing)"
        return f"{where} does not exist"
    if isinstance(exc, IsADirectoryError):
        return f"{where} is a directory"
    if isinstance(exc, NotADirectoryError):
        return f"{where} is not a directory"
    if isinstance(exc, PermissionError):
        return f"permission denied: {where}"
    if isinstance(exc, OSError):
        return f"{where}: {exc.strerror or exc}"
    return f"{path}: {exc}"


def _workspace(
    ctx: ToolContext, path: str, read_roots: Sequence[Path] = ()
) -> Workspace | ToolResult:
    """The tree ``path`` is confined to: the workspace, or the added folder (or, for
    read_file, the skill's folder) an absolute path lies in."""
    try:
        return pick_root(ctx.workspace, (*ctx.added_dirs, *read_roots), path)
    except OSError as exc:
        reason = exc.strerror or exc
        return ToolResult.error(f"the workspace {ctx.workspace} is not usable: {reason}")


def _encode(text: str, field: str) -> bytes | ToolResult:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return ToolResult.error(f"{field} is not valid Unicode (it holds an unpaired surrogate)")


def _count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _one_line(text: str, width: int = 200) -> str:
    flat = text.replace("\n", "\\n").replace("\r", "\\r")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _shown(ws: Workspace, path: str, real: str) -> str:
    shown = ws.display(path)
    if ws.show_absolute:  # an added folder: compare within it, show absolute paths
        given = "/".join(p for p in ws.relative_parts(path) if p not in ("", "."))
        return shown if given == real else f"{shown} (symlink to {ws.root / real})"
    return shown if shown == real else f"{shown} (symlink to {real})"
