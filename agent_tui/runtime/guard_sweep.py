"""Guard files a sandboxed command created: found when it ends and moved out of reach.

The agent's own guard files (``.claude/``, ``.agent-tui/``, ``.mcp.json``, ``CLAUDE.md``,
``CLAUDE.local.md``, ``AGENTS.md`` at any depth, and ``.git/hooks`` and ``.git/config`` of
a repository that was there) that exist when a sandboxed command starts are bound
read-only inside the sandbox (``runtime/sandbox.py``). One that did not exist yet cannot
be bound: a command could create ``.claude/settings.local.json`` with a hook in a folder
that had no ``.claude/``, and the hook would run outside the sandbox at the next turn or
the next session. So:

- :func:`take_baseline` walks the writable roots when the command starts (the same
  bounded walk gives the sandbox its read-only binds);
- :meth:`GuardSweep.end` walks them again when it ends, and moves every guard path that
  appeared (a file, a folder or a link) into the session's quarantine folder, which the
  sandbox hides: nothing is lost, and nothing the command wrote there takes effect. The
  tool result and a notice say what moved where, and that a guard file is written with
  the file tools, which ask;
- a background command is swept when it ends, and at the start of every turn while it
  runs (before the hooks and the MCP servers are read again): ``observe``.

A new ``.git`` folder (``git init`` or ``git clone`` in the sandbox) is the command's
own repository, not a guard of the session, and is left as it is. A path the user
creates while a sandboxed background command runs is moved too, and the notice says
where: the sweep cannot tell who made it.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from agent_tui.protocol.model_base import DeferredModel

#: Folders and files that are the agent's own guards (permissions/guard_files.py).
GUARD_FOLDERS = (".claude", ".agent-tui")
GUARD_FILES = (".mcp.json", "CLAUDE.md", "CLAUDE.local.md", "AGENTS.md")
GIT_GUARDS = ("hooks", "config")
#: Folders a guard walk does not enter (big, and never a project's own configuration).
_NOT_WALKED = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", "target",
                         ".mypy_cache", ".pytest_cache", "dist", "build"})
#: Most folders one walk looks at, so a huge tree costs a bounded time per command.
GUARD_WALK_LIMIT = 4000


class GuardBaseline(DeferredModel):
    """The guard paths under the writable roots when a command started."""

    model_config = ConfigDict(frozen=True)

    roots: tuple[Path, ...]
    # guard paths, links included, each with its (device, inode): a folder renamed
    # away and made again under the same name is a new path
    paths: dict[Path, tuple[int, int]]
    git_dirs: frozenset[Path]  # repositories there then (their hooks and config guard)

    def bindable(self) -> list[Path]:
        """The guard paths the sandbox binds read-only (not links: a link's target is
        found, and bound, where it lies)."""
        return sorted(p for p in self.paths if not p.is_symlink())


class Moved(DeferredModel):
    """A guard path a sandboxed command created, and where it went."""

    model_config = ConfigDict(frozen=True)

    path: Path
    to: Path | None  # None: it could not be moved, so it was removed


def _walk(root: Path) -> tuple[dict[Path, tuple[int, int]], set[Path]]:
    """The guard paths and ``.git`` folders under ``root`` (bounded, links not entered)."""
    found: dict[Path, tuple[int, int]] = {}
    git_dirs: set[Path] = set()
    todo, seen = [root], 0
    while todo and seen < GUARD_WALK_LIMIT:
        folder = todo.pop()
        seen += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.name in GUARD_FOLDERS or entry.name in GUARD_FILES:
                _note(found, path)
            elif entry.name == ".git" and entry.is_dir(follow_symlinks=False):
                git_dirs.add(path)
                for name in GIT_GUARDS:
                    _note(found, path / name)
            elif entry.is_dir(follow_symlinks=False) and entry.name not in _NOT_WALKED:
                todo.append(path)
    return found, git_dirs


def _note(found: dict[Path, tuple[int, int]], path: Path) -> None:
    try:
        st = path.lstat()
    except OSError:
        return  # not there (or gone since the listing)
    found[path] = (st.st_dev, st.st_ino)


def take_baseline(roots: Iterable[Path]) -> GuardBaseline:
    """The guard paths under ``roots`` as they are now."""
    paths: dict[Path, tuple[int, int]] = {}
    git_dirs: set[Path] = set()
    kept = tuple(roots)
    for root in kept:
        found, gits = _walk(root)
        paths |= found
        git_dirs |= gits
    return GuardBaseline(roots=kept, paths=paths, git_dirs=frozenset(git_dirs))


def guard_paths(root: Path) -> list[Path]:
    """The guard files and folders under ``root`` that exist now (not links)."""
    return take_baseline([root]).bindable()


def appeared(baseline: GuardBaseline) -> list[Path]:
    """Guard paths under the baseline's roots that were not there when it was taken
    (the outermost only: a new ``.claude/`` is one path), a new repository's own
    ``.git`` files left out."""
    now = take_baseline(baseline.roots)
    new: list[Path] = []
    for path in sorted(p for p, ident in now.paths.items() if baseline.paths.get(p) != ident):
        if path.parent.name == ".git" and path.parent not in baseline.git_dirs:
            continue  # a repository the command made: its own, not a guard of ours
        if any(parent in new for parent in path.parents):
            continue
        new.append(path)
    return new


class GuardSweep:
    """Moves the guard paths sandboxed commands created into ``quarantine``."""

    def __init__(self, quarantine: Path, notify: Callable[[str], None] | None = None) -> None:
        self.quarantine = quarantine
        self.notify = notify  # tells the user (a notice), when set
        self._running: dict[str, GuardBaseline] = {}
        self._batches = itertools.count(1)

    def end(self, baseline: GuardBaseline) -> list[Moved]:
        """Move what appeared since ``baseline``; tells the user, and returns it."""
        new = appeared(baseline)
        if not new:
            return []
        moved = [self._move(path, baseline.roots) for path in new]
        if self.notify is not None:
            self.notify(wording(moved))
        return moved

    # -- background commands ------------------------------------------------------

    def watch(self, key: str, baseline: GuardBaseline) -> None:
        """A sandboxed background command started (or was sent there): sweep it at
        each turn's start while it runs, and when it ends (:meth:`ended`)."""
        self._running[key] = baseline

    def forget(self, key: str) -> None:
        """The background command ended (its end is swept by its caller)."""
        self._running.pop(key, None)

    def observe(self, event: Any) -> None:
        """The session's events: a turn starting sweeps for the running commands."""
        if getattr(event, "type", "") == "turn_started":
            for baseline in list(self._running.values()):
                self.end(baseline)

    # -- moving -------------------------------------------------------------------

    def _move(self, path: Path, roots: Sequence[Path]) -> Moved:
        root = next((r for r in roots if r in path.parents), path.parent)
        batch = self.quarantine / str(next(self._batches))
        while batch.exists():
            batch = self.quarantine / str(next(self._batches))
        target = batch / path.relative_to(root)
        try:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.move(str(path), str(target))
            return Moved(path=path, to=target)
        except OSError:
            _remove(path)  # it must not take effect; it could not be kept either
            return Moved(path=path, to=None)


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def wording(moved: Sequence[Moved]) -> str:
    """What the model and the user are told."""
    lines = [
        "[sandbox: a sandboxed command may not create the agent's own guard files "
        "(.claude/, .agent-tui/, .mcp.json, CLAUDE.md, AGENTS.md, .git hooks and config); "
        "write them with write_file or edit_file, which ask the user]"
    ]
    for item in moved:
        where = f"moved to {item.to}" if item.to is not None else "removed (it could not be moved)"
        lines.append(f"[{item.path}: {where}]")
    return "\n".join(lines)
