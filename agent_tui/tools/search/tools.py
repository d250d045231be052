"""The ``grep`` and ``glob`` tools: read-only searches of the workspace.

Where a search may look follows the file tools' rules: the path goes through
:class:`~agent_tui.files.workspace.Workspace` (inside the workspace, symlinks
checked), and ``.git`` is never searched. The search runs as a child process
(:mod:`.runner`), ripgrep when it is installed, else the Python fallback, with the
same output either way. Both tools are read-only: no approval in any mode, and calls
in one batch run alongside each other.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import asyncio
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_tui.cancel import CancelReason
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.core.calls.tool import In, Tool, ToolContext, ToolResult
from agent_tui.protocol.tool_names import FileAccess, ResultShown, RuleSubject
from agent_tui.tools.files import describe_error
from agent_tui.tools.search.query import GlobFilter, Query, SearchMode
from agent_tui.tools.search.results import Caps, word_findings
from agent_tui.files.ripgrep import find_rg
from agent_tui.tools.search.ripgrep import search_argv
from agent_tui.tools.search.runner import Finished, run_search
from agent_tui.tools.search.wire import FileHits, parse
from agent_tui.files.workspace import WorkspaceError, pick_root
from agent_tui.units import format_bytes

DEFAULT_HEAD_LIMIT = 250  # files or count lines shown
DEFAULT_CONTENT_LINES = 200  # content lines shown
GLOB_LIMIT = 100
TIMEOUT_S = 60.0
MAX_OUTPUT_BYTES = 16 * 1024 * 1024  # what a search may print before it is cut short

_AUTO = "auto"


class OutputMode(StrEnum):
    CONTENT = "content"
    FILES_WITH_MATCHES = "files_with_matches"
    COUNT = "count"


def _refuse_nul(value: str | None) -> str | None:
    if value is not None and "\0" in value:
        raise ValueError("cannot contain a NUL character")
    return value


class GrepInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(
        min_length=1,
        description="Regular expression (ripgrep syntax), e.g. 'def \\w+_state' or 'TODO|FIXME'",
    )
    path: str | None = Field(
        default=None, description="File or folder to search, relative to the workspace "
        "(default: the whole workspace)"
    )
    glob: str | None = Field(
        default=None, description="Only files matching this glob, e.g. '*.py', '*.{ts,tsx}', "
        "'src/**/*.rs'; a leading '!' excludes"
    )
    output_mode: OutputMode = Field(
        default=OutputMode.FILES_WITH_MATCHES,
        description="'files_with_matches' (default): paths, newest first; 'content': "
        "matching lines as path:line:text; 'count': matching lines per file",
    )
    ignore_case: bool = Field(default=False, alias="-i", description="Case-insensitive")
    context: int | None = Field(
        default=None, ge=0, le=20, description="Lines of context around each match "
        "(content mode)"
    )
    head_limit: int | None = Field(
        default=None, ge=1, le=10_000, description="Show at most this many entries "
        f"(default {DEFAULT_HEAD_LIMIT} files, {DEFAULT_CONTENT_LINES} content lines)"
    )

    @field_validator("pattern", "path", "glob")
    @classmethod
    def _no_nul(cls, value: str | None) -> str | None:
        return _refuse_nul(value)


class GlobInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1, description="Glob relative to path, e.g. '**/*.py', 'src/**/*.{ts,tsx}', "
        "'*.md' (a pattern without '/' matches at any depth)"
    )
    path: str | None = Field(
        default=None, description="Folder to list, relative to the workspace (default: "
        "the whole workspace)"
    )

    @field_validator("pattern", "path")
    @classmethod
    def _no_nul(cls, value: str | None) -> str | None:
        return _refuse_nul(value)


@dataclass
class _Where:
    """Where a search runs: its cwd, what it names there, and how to show its paths."""

    cwd: Path
    target: str  # "." or a file name in cwd
    prefix: str  # the cwd relative to the workspace, "" or ending in "/"
    levels_up: int  # folders between the workspace root and the cwd
    shown: str  # the path as the model should read it


def _where(ctx: ToolContext, path: str | None) -> _Where | ToolResult:
    given = path if path not in (None, "") else "."
    try:  # the workspace, or the added folder an absolute path lies in
        ws = pick_root(ctx.workspace, ctx.added_dirs, given)
    except OSError as exc:
        return ToolResult.error(f"the workspace {ctx.workspace} is not usable: {exc.strerror or exc}")
    shown = ws.display(given)
    try:
        real = ws.resolve(given)
        st = os.stat(real, follow_symlinks=False)
    except (WorkspaceError, OSError) as exc:
        return ToolResult.error(describe_error(exc, shown))
    rel = real.relative_to(ws.root).as_posix()
    rel = "" if rel == "." else rel
    if ".git" in rel.split("/"):
        return ToolResult.error(f"{shown} is inside .git, which is never searched")
    if stat.S_ISDIR(st.st_mode):
        cwd, target = real, "."
    elif stat.S_ISREG(st.st_mode):
        cwd, target = real.parent, real.name
        rel = rel.rpartition("/")[0]
    else:
        return ToolResult.error(f"{shown} is not a file or folder")
    prefix = f"{rel}/" if rel else ""
    if ws.show_absolute:  # an added folder: its paths are shown absolute
        prefix = f"{ws.root}/{prefix}"
    return _Where(cwd, target, prefix, rel.count("/") + 1 if rel else 0, shown)


class SearchTool(Tool[In]):
    """What grep and glob share: where they look, the run, and how it ended."""

    read_only = True

    def __init__(self, rg: str | None = _AUTO) -> None:
        # ripgrep's path, None for the Python fallback, "auto" to find it (find_rg)
        self.rg = find_rg() if rg == _AUTO else rg
        # The permission policy's deny rules on reading (an absolute path -> the rule
        # that forbids reading it, or None): what they name is left out of the results.
        self.read_denied: Callable[[str], str | None] | None = None

    async def _search(
        self, ctx: ToolContext, where: _Where, query: Query
    ) -> tuple[Finished, list[FileHits], list[str]] | ToolResult:
        """The run, the files found that may be shown, and notes on those left out."""
        ctx.scope.raise_if_cancelled()  # cancel point: before the search starts
        try:
            done = await run_search(
                search_argv(query, self.rg), cwd=where.cwd, scope=ctx.scope,
                timeout_s=TIMEOUT_S, max_bytes=MAX_OUTPUT_BYTES,
            )
        except OSError as exc:
            return ToolResult.error(f"could not start the search: {exc}")
        parsed = parse(query.mode, done.output)
        if done.exit_code == 2 and not parsed.files and done.ended_by is None:
            why = done.messages.strip() or "\n".join(parsed.messages) or "exit status 2"
            return ToolResult.error(f"The search failed: {why}")
        wanted = GlobFilter(query.globs)
        files = [hits for hits in parsed.files if wanted.wants(hits.path)]
        denied = self.read_denied
        if denied is None:
            return done, files, []

        def allowed() -> list[FileHits]:
            return [h for h in files if denied(os.path.join(where.cwd, h.path)) is None]

        kept = await asyncio.to_thread(allowed)
        if len(kept) == len(files):
            return done, kept, []
        left = len(files) - len(kept)
        return done, kept, [f"[{left} file{'s' if left != 1 else ''} left out: a deny rule "
                            "forbids reading them.]"]

    def _ended(self, done: Finished, text: str) -> ToolResult:
        """The result, honest about a stop: interrupted, timed out or cut short."""
        details = {"exit_code": done.exit_code, "backend": "ripgrep" if self.rg else "python"}
        if done.ended_by is CancelReason.TIMEOUT:
            return ToolResult(
                outcome=ToolState.FAILED, is_error=True, details=details,
                content=f"The search took longer than {TIMEOUT_S:g} s and was stopped; narrow "
                f"it (path, glob) or simplify the pattern. What it found so far:\n{text}",
            )
        if done.ended_by is not None:
            return ToolResult(
                outcome=ToolState.CANCELLED_WHILE_RUNNING, is_error=True,
                ended_by=done.ended_by, side_effects=SideEffects.NONE, details=details,
                content=f"The search was interrupted before it finished. What it found so "
                f"far:\n{text}",
            )
        result = ToolResult.ok(text)
        result.details = details
        return result


def _notes(done: Finished) -> list[str]:
    if done.overflowed:
        return [f"[The search printed more than {format_bytes(MAX_OUTPUT_BYTES)} and was "
                "stopped there: counts are at least those shown. Narrow it.]"]
    return []


async def _newest_first(cwd: Path, files: list[FileHits]) -> list[FileHits]:
    def mtime(hits: FileHits) -> float:
        try:
            return os.stat(cwd / hits.path, follow_symlinks=False).st_mtime
        except (OSError, ValueError):
            return 0.0

    def order() -> list[FileHits]:
        stamps = {id(h): mtime(h) for h in files}
        return sorted(files, key=lambda h: (-stamps[id(h)], h.path))

    return await asyncio.to_thread(order)


class GrepTool(SearchTool[GrepInput]):
    name = "grep"
    claude_name = "Grep"
    claude_keys = {"context": "-C"}
    acp_kind = "search"
    folds_as = ("searched", "pattern", "patterns")
    file_access = FileAccess.READS
    rule_subject = RuleSubject.PATH
    result_shown = ResultShown.HEADLINE
    description = (
        "Search file contents with a regular expression (ripgrep syntax). Use this, "
        "never `grep` or `rg` through bash: it respects .gitignore, skips binary files "
        "and .git, needs no approval, and several calls in one message run at once.\n"
        "- output_mode 'files_with_matches' (default) lists the files that match, newest "
        "first; 'content' shows matching lines as path:line:text (with `context` lines "
        "around them); 'count' gives matching lines per file.\n"
        "- Narrow with `path` (a folder or file) and `glob` ('*.py', '*.{ts,tsx}'); `-i` "
        "ignores case.\n"
        "- Output is capped (head_limit, 30,000 characters); the result says what was "
        "left out. Regex syntax: escape braces and parentheses you mean literally "
        "('interface\\{\\}'); a match never spans lines.\n"
        "- To find files by name, use glob. For an open-ended search that needs several "
        "rounds, use task."
    )
    Input = GrepInput

    def summary(self, args: GrepInput) -> str:
        bits = [f"grep {args.pattern!r}"]
        if args.path:
            bits.append(f"in {args.path}")
        if args.glob:
            bits.append(f"({args.glob})")
        flags = [m for m in (args.output_mode.value if args.output_mode is not
                             OutputMode.FILES_WITH_MATCHES else "",
                             "-i" if args.ignore_case else "") if m]
        if flags:
            bits.append("[" + ", ".join(flags) + "]")
        return " ".join(bits)

    async def run(self, args: GrepInput, ctx: ToolContext) -> ToolResult:
        where = _where(ctx, args.path)
        if isinstance(where, ToolResult):
            return where
        mode = SearchMode(args.output_mode.value)
        query = Query(
            mode=mode, pattern=args.pattern, target=where.target,
            globs=(args.glob,) if args.glob else (), ignore_case=args.ignore_case,
            context=args.context or 0 if mode is SearchMode.CONTENT else 0,
            levels_up=where.levels_up,
        )
        found = await self._search(ctx, where, query)
        if isinstance(found, ToolResult):
            return found
        done, files, left_out = found
        if mode is SearchMode.FILES_WITH_MATCHES:
            files = await _newest_first(where.cwd, files)
        else:
            files.sort(key=lambda h: h.path)
        default = DEFAULT_CONTENT_LINES if mode is SearchMode.CONTENT else DEFAULT_HEAD_LIMIT
        caps = Caps(args.head_limit or default, explicit=args.head_limit is not None)
        stopped = done.ended_by is not None or done.overflowed
        text = word_findings(mode, files, prefix=where.prefix, caps=caps, notes=_notes(done) + left_out,
                             partial=stopped)
        return self._ended(done, text)


class GlobTool(SearchTool[GlobInput]):
    name = "glob"
    claude_name = "Glob"
    claude_aliases = ("LS",)
    acp_kind = "search"
    folds_as = ("searched", "pattern", "patterns")
    file_access = FileAccess.READS
    rule_subject = RuleSubject.PATH
    result_shown = ResultShown.HEADLINE
    description = (
        "Find files by name with a glob pattern ('**/*.py', 'src/**/*.{ts,tsx}', "
        "'test_*.py'), newest first. Use this rather than `find` or `ls -R` through "
        "bash: it respects .gitignore, never lists .git, needs no approval, and several "
        f"calls in one message run at once. Shows at most {GLOB_LIMIT} files and says how "
        "many more there are. A pattern without '/' matches at any depth. To search "
        "inside files, use grep."
    )
    Input = GlobInput

    def summary(self, args: GlobInput) -> str:
        return f"glob {args.pattern}" + (f" in {args.path}" if args.path else "")

    async def run(self, args: GlobInput, ctx: ToolContext) -> ToolResult:
        where = _where(ctx, args.path)
        if isinstance(where, ToolResult):
            return where
        if where.target != ".":
            return ToolResult.error(f"{where.shown} is a file: glob lists a folder")
        query = Query(mode=SearchMode.FILES, globs=(args.pattern,), levels_up=where.levels_up)
        found = await self._search(ctx, where, query)
        if isinstance(found, ToolResult):
            return found
        done, files, left_out = found
        files = await _newest_first(where.cwd, files)
        stopped = done.ended_by is not None or done.overflowed
        text = word_findings(SearchMode.FILES, files, prefix=where.prefix,
                             caps=Caps(GLOB_LIMIT, explicit=False), notes=_notes(done) + left_out,
                             partial=stopped)
        return self._ended(done, text)
