"""Where this agent may make cgroups: the delegated subtree, found once.

Every command goes into a cgroup v2 of its own (:mod:`.cgroup`) when the agent may
make one. The subtree is the agent's own cgroup v2 (``0::PATH`` of
``/proc/self/cgroup``, under the ``cgroup2`` mount of ``/proc/self/mounts``) when it
is writable: as root, or under a systemd user delegation. There the agent makes
``agent-tui-OWNER/``, one folder per agent process, and one ``run-ID/`` per command.

Limits need the ``pids`` and ``memory`` controllers. They are taken from the v2
subtree where it offers them; on a hybrid host, where they are bound to cgroup v1
hierarchies, from the agent's own cgroup there (the same ``agent-tui-OWNER/`` layout).
A controller that is in neither is not enforced, and :class:`Containment` says so.

When no subtree is writable, the runner falls back to process groups, tags and the
subreaper sweep; :func:`containment` says which is in force and why.
"""

from __future__ import annotations

import os
import threading
import time
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel

from agent_tui.runtime.process.tags import owner_id

AGENT_PREFIX = "agent-tui-"
_STALE_S = 60.0
LIMIT_CONTROLLERS = ("pids", "memory")


class ContainmentMode(StrEnum):
    CGROUP = "cgroup"  # a cgroup v2 per command: cgroup.kill, nothing escapes
    SWEEP = "sweep"  # process groups + tags + subreaper sweep (no writable cgroup)


class Containment(BaseModel):
    """Which containment is in force, for the user (a notice, ``/context``)."""

    mode: ContainmentMode
    detail: str  # where the cgroups are, or why there are none
    limits: list[str] = []  # the controllers enforced per command ("pids", "memory")

    def describe(self) -> str:
        if self.mode is ContainmentMode.CGROUP:
            limits = ", ".join(self.limits) if self.limits else "none (no controller available)"
            return f"each command runs in a cgroup of its own ({self.detail}); limits: {limits}"
        return (f"commands are tracked by process group, tag and subreaper, not by cgroup "
                f"({self.detail}): a process that detaches and clears its environment can escape")


class Tree(BaseModel):
    """The agent's folders: the v2 one, and one per limit controller (v2 or v1).

    They exist while the agent has commands in them: :meth:`ensure` makes them before
    a command's cgroup is made, the atexit hook removes them.
    """

    v2: Path
    v2_mount: Path
    limits: dict[str, Path] = {}  # controller -> the agent's folder that enforces it

    def folders(self) -> set[Path]:
        return {self.v2, *self.limits.values()}

    def ensure(self) -> None:
        """Make the agent's folders (again) if need be. Raises OSError."""
        for folder in self.folders():
            folder.mkdir(exist_ok=True)
        controllers = [name for name, folder in self.limits.items() if folder == self.v2]
        if controllers:
            (self.v2 / "cgroup.subtree_control").write_text(
                " ".join(f"+{name}" for name in controllers))


def _mounts() -> list[tuple[str, str, list[str]]]:
    out: list[tuple[str, str, list[str]]] = []
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split()
        if len(parts) >= 4:
            point = parts[1].replace("\\040", " ")
            out.append((point, parts[2], parts[3].split(",")))
    return out


def _own_cgroups() -> dict[str, str]:
    """controller ("" for v2) -> this process's cgroup path in that hierarchy."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _id, controllers, path = parts
        for name in controllers.split(",") if controllers else [""]:
            out.setdefault(name, path)
    return out


def _under(mount: str, path: str) -> Path:
    return Path(mount) / path.lstrip("/")


def _make_dir(parent: Path) -> Path:
    """The agent's folder under ``parent`` (made now if need be). Raises OSError."""
    folder = parent / f"{AGENT_PREFIX}{owner_id()}"
    folder.mkdir(exist_ok=True)
    return folder


def _v2_tree(
    mounts: list[tuple[str, str, list[str]]], own: dict[str, str]
) -> tuple[Path | None, str]:
    v2_mount = next((m for m, kind, _ in mounts if kind == "cgroup2"), None)
    if v2_mount is None:
        return None, "no cgroup v2 is mounted"
    if "" not in own:
        return None, "this process is in no cgroup v2"
    base = _under(v2_mount, own[""])
    if not os.access(base / "cgroup.procs", os.W_OK) or not os.access(base, os.W_OK):
        return None, f"the agent's cgroup {base} is not writable (no delegation)"
    try:
        folder = _make_dir(base)
    except OSError as exc:
        return None, f"cannot make a cgroup under {base}: {exc.strerror or exc}"
    if not (folder / "cgroup.kill").exists():
        _remove(folder)
        return None, "the kernel has no cgroup.kill (Linux 5.14 or later is needed)"
    return folder, str(base)


def _limit_folders(
    v2: Path, mounts: list[tuple[str, str, list[str]]], own: dict[str, str]
) -> dict[str, Path]:
    found: dict[str, Path] = {}
    try:
        offered = (v2 / "cgroup.controllers").read_text().split()
    except OSError:
        offered = []
    wanted = [c for c in LIMIT_CONTROLLERS if c in offered]
    for name in wanted:
        try:
            (v2 / "cgroup.subtree_control").write_text(f"+{name}")
            found[name] = v2
        except OSError:
            pass
    for name in LIMIT_CONTROLLERS:
        if name in found or name not in own:
            continue
        mount = next((m for m, kind, opts in mounts if kind == "cgroup" and name in opts), None)
        if mount is None:
            continue
        try:
            found[name] = _make_dir(_under(mount, own[name]))
        except OSError:
            continue
    return found


def _remove(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


_lock = threading.Lock()
_found: tuple[Containment, Tree | None] | None = None


def _after_fork() -> None:
    """A forked child is another agent process, with an owner tag of its own: its
    folders are named for it, so they are found again (cgroups off stays off)."""
    global _lock, _found
    _lock = threading.Lock()  # another thread of the parent may have held it
    if _found is not None and _found[1] is not None:
        _found = None


os.register_at_fork(after_in_child=_after_fork)


def _discover() -> tuple[Containment, Tree | None]:
    mounts, own = _mounts(), _own_cgroups()
    v2, detail = _v2_tree(mounts, own)
    if v2 is None:
        return Containment(mode=ContainmentMode.SWEEP, detail=detail), None
    limits = _limit_folders(v2, mounts, own)
    mount = next(Path(m) for m, kind, _ in mounts if kind == "cgroup2")
    tree = Tree(v2=v2, v2_mount=mount, limits=limits)
    # The folders were made to probe; they come back with the first command.
    for folder in tree.folders():
        _remove(folder)
    _tidy(tree)
    return Containment(mode=ContainmentMode.CGROUP, detail=detail, limits=sorted(limits)), tree


def _tidy(tree_: Tree) -> None:
    """Remove the empty cgroups other agent processes left (a crash leaves them).

    A cgroup with processes in it refuses rmdir, so what still runs stays for the
    leftovers at resume. A command's cgroup is entered within milliseconds of being
    made: only those older than ``_STALE_S`` are taken, never one a live agent is
    about to use. An agent's own folder it makes again when it needs it.
    """
    stale = time.time() - _STALE_S
    for folders in earlier_agents(tree_).values():
        for folder in folders:
            try:
                for run in folder.iterdir():
                    if run.is_dir() and run.stat().st_mtime < stale:
                        _remove(run)
                # An agent starting now makes its folder before its first command's:
                # an empty one is taken only once it is old, like a command's.
                if folder.stat().st_mtime < stale and not any(p.is_dir() for p in folder.iterdir()):
                    folder.rmdir()
            except OSError:
                continue


def containment() -> Containment:
    """Which containment is in force for this agent process (found once)."""
    return _state()[0]


def tree() -> Tree | None:
    """The agent's cgroup folders, or None when commands are not put in cgroups."""
    return _state()[1]


def _state() -> tuple[Containment, Tree | None]:
    global _found
    with _lock:
        if _found is None:
            _found = _discover()
        return _found


def set_enabled(enabled: bool) -> None:
    """Turn cgroups off for this process (tests, the bench's side-by-side figure), or
    back on (found again)."""
    global _found
    with _lock:
        if enabled:
            _found = None
        else:
            _found = (Containment(mode=ContainmentMode.SWEEP, detail="cgroups turned off"), None)


def earlier_agents(tree_: Tree) -> dict[str, list[Path]]:
    """The folders other agent processes left under the same parents: owner -> folders."""
    out: dict[str, list[Path]] = {}
    for folder in tree_.folders():
        try:
            siblings = list(folder.parent.iterdir())
        except OSError:
            continue
        for sibling in siblings:
            if sibling.name.startswith(AGENT_PREFIX) and sibling != folder and sibling.is_dir():
                out.setdefault(sibling.name.removeprefix(AGENT_PREFIX), []).append(sibling)
    return out
