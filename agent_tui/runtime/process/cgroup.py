"""One command's cgroup: made before it starts, entered before it execs, emptied by
``cgroup.kill``, removed after.

The command enters its cgroup itself, before its program runs: the run starts a tiny
``/bin/sh`` wrapper that writes its own PID into each ``cgroup.procs`` (the v2 one, and
the v1 ones that carry limits on a hybrid host) and then ``exec``\\ s the command. So
every descendant is born inside; ``setsid``, a double fork or ``env -i`` do not leave
it. (A preexec hook in Python would do the same, but is unsafe in a threaded process.)

What the kernel says is the truth here: ``cgroup.events`` ``populated 0`` means
nothing of the command runs any more; ``pids.events`` and ``memory.events`` (v1:
``memory.oom_control``) say whether a limit stopped it.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path

from agent_tui.runtime.process.cgroup_tree import Tree
from agent_tui.runtime.process.records import LimitHit

# Writes "$$" (the wrapper's PID, which exec keeps for the command) into each file it
# is given, then execs the command. Exit 125 if a file refuses it: the command is not
# run outside its cgroup. The command's argv comes in variables, which are unset
# before the exec: so the wrapper's own command line shows no trace of the command.
_ENTER = (
    'for f; do echo $$ > "$f" || '
    '{ echo "agent-tui: could not enter the cgroup $f" >&2; exit 125; }; done; '
)
_ARG = "AGENT_TUI_ENTER_ARG"
ENTER_EXIT_CODE = 125


def _write(path: Path, value: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _counter(path: Path, key: str) -> int:
    """The value of ``key`` in a flat-keyed file such as ``cgroup.events``; 0 if absent."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


class RunCgroup:
    """The cgroup(s) of one command. See the module docstring."""

    def __init__(self, tree: Tree, name: str, *, pids: int | None, memory: int | None) -> None:
        """Make the cgroups and set their limits. Raises OSError if they cannot be made."""
        self.v2 = tree.v2 / name
        self._path = "/" + str(self.v2.relative_to(tree.v2_mount))  # as /proc/PID/cgroup says
        self._dirs: list[Path] = []
        try:
            tree.ensure()
            try:
                self._make(self.v2)
            except FileNotFoundError:  # another agent tidied the folder away meanwhile
                tree.ensure()
                self._make(self.v2)
            self._pids = self._limit_dir(tree, "pids", name)
            self._memory = self._limit_dir(tree, "memory", name)
            if self._pids is not None and pids is not None:
                _write(self._pids / "pids.max", str(pids))
            if self._memory is not None and memory is not None:
                self._set_memory(self._memory, memory)
        except OSError:
            self.remove()
            raise

    def _make(self, folder: Path) -> None:
        folder.mkdir()
        self._dirs.append(folder)

    def _limit_dir(self, tree: Tree, controller: str, name: str) -> Path | None:
        parent = tree.limits.get(controller)
        if parent is None:
            return None
        if parent == tree.v2:
            return self.v2
        folder = parent / name
        if folder not in self._dirs:
            self._make(folder)
        return folder

    def _set_memory(self, folder: Path, limit: int) -> None:
        if folder == self.v2:
            _write(folder / "memory.max", str(limit))
            if (folder / "memory.swap.max").exists():
                _write(folder / "memory.swap.max", "0")  # no escape into swap
            if (folder / "memory.oom.group").exists():
                _write(folder / "memory.oom.group", "0")  # kill the biggest, not all
            return
        _write(folder / "memory.limit_in_bytes", str(limit))
        if (folder / "memory.memsw.limit_in_bytes").exists():
            _write(folder / "memory.memsw.limit_in_bytes", str(limit))

    # -- starting -----------------------------------------------------------------

    def wrap(self, argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
        """The wrapper that enters the cgroups, then execs ``argv``; ``env`` (the
        command's environment) gets the variables that carry ``argv`` to it.

        Raises OSError as spawning ``argv`` directly would, if its program cannot be
        found or run (the wrapper would only report it as exit status 127).
        """
        _check_program(argv[0], env.get("PATH", os.defpath), cwd)
        names = [f"{_ARG}{i}" for i in range(len(argv))]
        env.update(zip(names, argv, strict=True))
        script = (_ENTER + "set -- " + " ".join(f'"${n}"' for n in names)
                  + "; unset " + " ".join(names) + '; exec "$@"')
        procs = [str(d / "cgroup.procs") for d in self._dirs]
        return ["/bin/sh", "-c", script, "agent-tui-enter", *procs]

    # -- what the kernel says -----------------------------------------------------

    def pids(self) -> list[int]:
        """The processes in the cgroup now."""
        try:
            return [int(p) for p in (self.v2 / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def populated(self) -> bool:
        return populated(self.v2)

    def holds(self, pid: int) -> bool:
        """Whether ``pid`` is (or, a zombie, was when it exited) in this cgroup."""
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except OSError:
            return False
        return f"0::{self._path}" in lines

    def limit_hits(self) -> list[LimitHit]:
        hits = []
        if self._pids is not None and _counter(self._pids / "pids.events", "max"):
            hits.append(LimitHit.PIDS)
        if self._memory is not None:
            events = "memory.events" if self._memory == self.v2 else "memory.oom_control"
            if _counter(self._memory / events, "oom_kill"):
                hits.append(LimitHit.MEMORY)
        return hits

    # -- ending -------------------------------------------------------------------

    def kill(self) -> bool:
        """SIGKILL everything in the cgroup, at once, by the kernel. True if sent."""
        try:
            _write(self.v2 / "cgroup.kill", "1")
        except OSError:
            return False
        return True

    def remove(self, wait_s: float = 0.0) -> bool:
        """Remove the cgroups (once empty); True when none is left. A v1 cgroup may
        report busy for a moment after its last process exited: ``wait_s`` retries."""
        deadline = time.monotonic() + wait_s
        while True:
            left = []
            for folder in reversed(self._dirs):
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        raise
                    left.append(folder)
            self._dirs = [d for d in self._dirs if d in left]
            if not left or time.monotonic() >= deadline:
                return not left
            time.sleep(0.01)


def _check_program(program: str, path: str, cwd: Path) -> None:
    if "/" in program:
        where = cwd / program
        if not where.exists():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if where.is_dir() or not os.access(where, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    elif shutil.which(program, path=path) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def populated(folder: Path) -> bool:
    """What the kernel says: does anything run in this v2 cgroup or below it?"""
    if not folder.exists():
        return False
    return _counter(folder / "cgroup.events", "populated") != 0


def kill_folder(folder: Path) -> None:
    """``cgroup.kill`` a v2 folder and every cgroup below it (an earlier agent's)."""
    kill = folder / "cgroup.kill"
    if kill.exists():
        try:
            _write(kill, "1")
        except OSError:
            pass


def folder_pids(folder: Path) -> list[int]:
    """The processes in a cgroup folder and below it."""
    out: list[int] = []
    for root, _dirs, files in os.walk(folder):
        if "cgroup.procs" in files:
            try:
                out += [int(p) for p in Path(root, "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                continue
    return out


def remove_folder(folder: Path) -> bool:
    """Remove a cgroup folder and the empty cgroups below it; True when it is gone."""
    for root, dirs, _files in os.walk(folder, topdown=False):
        for name in dirs:
            try:
                Path(root, name).rmdir()
            except OSError:
                pass
    try:
        folder.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True
