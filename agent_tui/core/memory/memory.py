"""Project memory: the ``AGENTS.md`` / ``CLAUDE.md`` files the agent is told to follow.

At session start, in Claude Code's order (the later ones speak last, so they weigh
most): the user's (``~/.claude/CLAUDE.md``, then ``AGENTS.md`` and ``CLAUDE.md`` of
``$XDG_CONFIG_HOME/agent-tui/``), the project's (``AGENTS.md``, ``CLAUDE.md`` and
``.claude/CLAUDE.md`` of the workspace root), then the project's local one
(``CLAUDE.local.md``), all in the system prompt. Each file's ``@path`` imports are
read too (:mod:`agent_tui.core.memory.memory_loader` loads them all), each listed right after
the file that imports it. A subfolder's own ``AGENTS.md`` (or ``CLAUDE.md``) is not loaded at start:
it joins the conversation as a note once the agent reads or edits a file in that
folder (:func:`subfolder_memory`; with its imports,
:func:`agent_tui.core.memory.memory_loader.folder_memory`), so the system prompt, and with it
the prompt cache, stays the same.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
from pathlib import Path

from pydantic import Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.paths import source_read, user_config_dir

NAMES = ("AGENTS.md", "CLAUDE.md")
LOCAL_NAME = "CLAUDE.local.md"
MAX_BYTES = 64 * 1024  # per file: a memory file is instructions, not a data dump
MAX_TOTAL_BYTES = 256 * 1024  # all memory together, imports included
MAX_FILES = 64


class MemoryFile(DeferredModel):
    path: str  # absolute
    scope: str  # "user", "project", "local" or "folder"
    text: str
    truncated: bool = False
    # An imported file: the file that imports it, and the line of the ``@path``.
    imported_from: str | None = None
    line: int | None = None


class MemoryProblem(DeferredModel):
    """What could not be loaded, with the file and line that asked for it."""

    path: str
    line: int | None = None
    text: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"memory: {where}: {self.text}"


class Memory(DeferredModel):
    files: list[MemoryFile] = Field(default_factory=list)
    problems: list[MemoryProblem] = Field(default_factory=list)


def claude_user_dir() -> Path:
    """Claude Code's own folder of the user: ``~/.claude``."""
    return Path.home() / ".claude"


def read_memory_file(path: Path, scope: str) -> MemoryFile | None:
    try:
        if not path.is_file():
            return None
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError:
        return None
    text = data[:MAX_BYTES].decode("utf-8", errors="replace").strip()
    if not text:
        return None
    return MemoryFile(path=str(path), scope=scope, text=text, truncated=len(data) > MAX_BYTES)


def memory_places(
    workspace: Path, user_dir: Path | None = None, claude_dir: Path | None = None
) -> list[tuple[Path, str]]:
    """Every top-level memory file looked for, in the order they are loaded."""
    ours = Path(user_dir or user_config_dir())
    claude = Path(claude_dir or claude_user_dir())
    ws = Path(workspace)
    places = [
        (claude / "CLAUDE.md", "user"),
        *((ours / name, "user") for name in NAMES),
        *((ws / name, "project") for name in NAMES),
        (ws / ".claude" / "CLAUDE.md", "project"),
        (ws / LOCAL_NAME, "local"),
    ]
    return [(path, scope) for path, scope in places if source_read(scope)]


def subfolder_memory(workspace: Path, touched: Path, loaded: set[str]) -> list[MemoryFile]:
    """Memory files of the folders between the workspace root (exclusive) and
    ``touched``'s folder (inclusive) not yet in ``loaded``, outermost first."""
    if not source_read("project"):
        return []
    try:
        ws = workspace.resolve()
        target = (ws / touched).resolve() if not touched.is_absolute() else touched.resolve()
        rel = target.relative_to(ws)
    except (OSError, ValueError):
        return []
    folder = ws / rel if target.is_dir() else ws / rel.parent
    chain: list[Path] = []
    while folder != ws and ws in folder.parents:
        chain.append(folder)
        folder = folder.parent
    found: list[MemoryFile] = []
    for folder in reversed(chain):
        for name in NAMES:
            path = folder / name
            if str(path) in loaded:
                continue
            item = read_memory_file(path, "folder")
            if item is not None:
                found.append(item)
    return found
