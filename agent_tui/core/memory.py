"""Project memory: the ``AGENTS.md`` / ``CLAUDE.md`` files the agent is told to follow.

At session start: those of the workspace root and of ``$XDG_CONFIG_HOME/agent-tui/``
(the user's own), in the system prompt. A subfolder's own ``AGENTS.md`` (or
``CLAUDE.md``) is not loaded at start: it joins the conversation as a note once the
agent reads or edits a file in that folder (:func:`subfolder_memory`), so the
system prompt, and with it the prompt cache, stays the same.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel

NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_BYTES = 64 * 1024  # per file: a memory file is instructions, not a data dump


class MemoryFile(BaseModel):
    path: str  # absolute
    scope: str  # "user", "project" or "folder"
    text: str
    truncated: bool = False


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agent-tui"


def _read(path: Path, scope: str) -> MemoryFile | None:
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


def load_memory(workspace: Path, user_dir: Path | None = None) -> list[MemoryFile]:
    """The user's memory files, then the project's (the project's speak last)."""
    found: list[MemoryFile] = []
    for folder, scope in ((Path(user_dir or user_config_dir()), "user"), (Path(workspace), "project")):
        for name in NAMES:
            item = _read(folder / name, scope)
            if item is not None:
                found.append(item)
    return found


def subfolder_memory(workspace: Path, touched: Path, loaded: set[str]) -> list[MemoryFile]:
    """Memory files of the folders between the workspace root (exclusive) and
    ``touched``'s folder (inclusive) not yet in ``loaded``, outermost first."""
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
            item = _read(path, "folder")
            if item is not None:
                found.append(item)
    return found
