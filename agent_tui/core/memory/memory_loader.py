"""Loading the memory files with their ``@path`` imports, as Claude Code reads them.

A memory file may name another file with ``@path`` (after a space or at a line's
start): ``See @README.md``, ``@docs/git.md``, ``@~/.claude/my-notes.md``. The path is
relative to the importing file (``~/`` is the home folder, ``/`` an absolute path).
Imports are not read inside Markdown code spans or fenced code blocks, and nest at
most :data:`MAX_DEPTH` deep. Every imported file joins the memory right after the
file that imports it, with the file and line it came from (``/memory`` lists them).

What cannot be imported is said (:class:`~agent_tui.core.memory.memory.MemoryProblem`, with
the file and line of the ``@path``) and the rest still loads: a cycle (never read
twice), a missing file, a folder, a binary file, one too deep, one past the size
bounds. A project's memory (its files, ``CLAUDE.local.md`` and a subfolder's own
``AGENTS.md``, see :func:`folder_memory`) imports only files
inside the workspace and Markdown files of ``~/.claude/`` (where Claude Code's docs
put per-user notes); a cloned repository cannot pull, say, ``~/.ssh/id_rsa`` into
the prompt. The user's own memory may import any file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from agent_tui.core.calls.permission import PermissionPolicy
from agent_tui.core.calls.tool import InvalidInput, ToolSet
from agent_tui.protocol import Verdict
from agent_tui.protocol.tool_names import FileAccess, access_guard

from agent_tui.core.memory.memory import (
    MAX_BYTES,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    Memory,
    MemoryFile,
    MemoryProblem,
    claude_user_dir,
    memory_places,
    read_memory_file,
    subfolder_memory,
)

#: Why a file may not be read ("" when it may).
Refusal = Callable[[Path], str]
MAX_DEPTH = 5  # Claude Code's: an imported file may import, five hops at most
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+).*?\1")
_TRAILING = ".,;:!?)]}'\""
_PROJECT_SCOPES = frozenset({"project", "local", "folder"})


def import_mentions(text: str) -> list[tuple[int, str]]:
    """(line number, path as written) of each ``@path`` outside code spans and blocks."""
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.split("\n"), 1):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened[1][0] == fence[0] and len(opened[1]) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened[1]
            continue
        plain = _CODE_SPAN.sub(lambda m: " " * len(m[0]), line)
        for match in _IMPORT.finditer(plain):
            found.append((number, match[1].replace("\\ ", " ")))
    return found


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class Importer:
    """Adds memory files one by one, each followed by what it imports."""

    def __init__(self, workspace: Path, *, claude_dir: Path | None = None,
                 refuse: Refusal | None = None) -> None:
        self.workspace = workspace.resolve()
        self.refuse = refuse  # a deny rule on reading a file keeps it out of the memory too
        self.claude_dir = Path(claude_dir or claude_user_dir()).resolve()
        self.files: list[MemoryFile] = []
        self.problems: list[MemoryProblem] = []
        self.seen: set[str] = set()  # real paths loaded
        self._bytes = 0

    def add(self, item: MemoryFile) -> None:
        """A top-level memory file (skipped when an import already brought it)."""
        real = str(Path(item.path).resolve())
        if real in self.seen:
            return
        if not self._room(item, item.path, None):
            return
        self._take(item, real)
        self._imports(item, [real], 1)

    def _room(self, item: MemoryFile, asker: str, line: int | None) -> bool:
        size = len(item.text.encode("utf-8"))
        if len(self.files) >= MAX_FILES:
            self._say(asker, line, f"{item.path}: more than {MAX_FILES} memory files (not loaded)")
            return False
        if self._bytes + size > MAX_TOTAL_BYTES:
            self._say(asker, line, f"{item.path}: memory would pass "
                                   f"{MAX_TOTAL_BYTES // 1024} KiB in all (not loaded)")
            return False
        return True

    def _take(self, item: MemoryFile, real: str) -> None:
        self.files.append(item)
        self.seen.add(real)
        self._bytes += len(item.text.encode("utf-8"))
        if item.truncated:
            self._say(item.path, None, f"longer than {MAX_BYTES // 1024} KiB: cut there")

    def _say(self, path: str, line: int | None, text: str) -> None:
        self.problems.append(MemoryProblem(path=path, line=line, text=text))

    def _imports(self, item: MemoryFile, chain: list[str], depth: int) -> None:
        here = Path(item.path).parent
        for line, written in import_mentions(item.text):
            target = self._target(here, written)
            if target is None:
                continue
            real = target.resolve()
            key = str(real)
            if key in chain:
                loop = " -> ".join(Path(p).name for p in [*chain[chain.index(key):], key])
                self._say(item.path, line, f"@{written}: an import cycle ({loop}): not imported again")
                continue
            if key in self.seen:
                continue  # already in the memory (imported twice, or a top-level file)
            if not real.exists():
                bare = written.rstrip(_TRAILING)
                if "/" in bare or "." in bare:  # "@alice" is a name, not a file
                    self._say(item.path, line, f"@{written}: no such file (not imported)")
                continue
            if real.is_dir():
                self._say(item.path, line, f"@{written}: a folder, not a file (not imported)")
                continue
            refusal = self._refusal(item.scope, real) or (self.refuse(real) if self.refuse else "")
            if refusal:
                self._say(item.path, line, f"@{written}: {refusal} (not imported)")
                continue
            if depth > MAX_DEPTH:
                self._say(item.path, line, f"@{written}: imports nest at most {MAX_DEPTH} "
                                           "deep (not imported)")
                continue
            found = read_memory_file(target, item.scope)
            if found is None:
                continue  # empty or unreadable: nothing to add
            if "\0" in found.text or "\ufffd" in found.text[:4096]:
                self._say(item.path, line, f"@{written}: not a text file (not imported)")
                continue
            found = found.model_copy(update={"imported_from": item.path, "line": line})
            if not self._room(found, item.path, line):
                continue
            self._take(found, key)
            self._imports(found, [*chain, key], depth + 1)

    @staticmethod
    def _target(here: Path, written: str) -> Path | None:
        for candidate in dict.fromkeys((written, written.rstrip(_TRAILING))):
            if not candidate:
                continue
            if candidate.startswith("~/"):
                path = Path.home() / candidate[2:]
            elif candidate.startswith("/"):
                path = Path(candidate)
            else:
                path = here / candidate
            path = Path(os.path.normpath(path))
            if path.exists() or candidate == written.rstrip(_TRAILING):
                return path
        return None

    def _refusal(self, scope: str, real: Path) -> str:
        """Why a project's memory may not import ``real`` ("" when it may)."""
        if scope not in _PROJECT_SCOPES or _inside(real, self.workspace):
            return ""
        if (_inside(real, self.claude_dir) and real.suffix.lower() == ".md"
                and not any(part.startswith(".") for part in real.relative_to(self.claude_dir).parts)):
            return ""
        return ("outside the workspace: a project's memory imports only the project's files "
                "and Markdown files of ~/.claude/")


def read_refusal(policy: PermissionPolicy, tools: ToolSet) -> Refusal:
    """Why the session's permission rules keep a file from being read ("" when they
    do not): a deny rule on it, as the read tool would be told."""
    def refuse(path: Path) -> str:
        tool = tools.get(access_guard(FileAccess.READS))
        if tool is None:
            return ""
        try:
            ruling = policy.check(tool, tool.parse({"path": str(path)}))
        except InvalidInput:
            return ""
        return (ruling.reason or "denied") if ruling.verdict is Verdict.DENY else ""
    return refuse


def load_memory_with_problems(
    workspace: Path, user_dir: Path | None = None, claude_dir: Path | None = None,
    refuse: Refusal | None = None,
) -> Memory:
    """The memory files with their imports, and what could not be loaded."""
    importer = Importer(Path(workspace), claude_dir=claude_dir, refuse=refuse)
    for path, scope in memory_places(workspace, user_dir, claude_dir):
        item = read_memory_file(path, scope)
        if item is not None:
            importer.add(item)
    return Memory(files=importer.files, problems=importer.problems)


def load_memory(
    workspace: Path, user_dir: Path | None = None, claude_dir: Path | None = None
) -> list[MemoryFile]:
    """The user's memory files, then the project's (the project's speak last)."""
    return load_memory_with_problems(workspace, user_dir, claude_dir).files


def folder_memory(workspace: Path, touched: Path, loaded: set[str],
                  refuse: Refusal | None = None) -> Memory:
    """The memory files of the folders down to ``touched`` not yet in ``loaded``
    (:func:`~agent_tui.core.memory.memory.subfolder_memory`), each with its imports (a
    project's: inside the workspace), and what could not be imported."""
    importer = Importer(Path(workspace), refuse=refuse)
    importer.seen |= {str(Path(p).resolve()) for p in loaded}
    for item in subfolder_memory(Path(workspace), touched, loaded):
        importer.add(item)
    return Memory(files=importer.files, problems=importer.problems)
