"""Finding and ending the processes of stdio MCP servers.

Each server process gets two tags in its environment: the process layer's owner tag
(so the app-wide last resort, ``kill_all_runs``, ends it too) and a tag of its own
(``AGENT_TUI_MCP_SERVER``), by which we find its PID and anything it left behind.
The SDK ends a server at session close (stdin closed, grace, SIGTERM to its process
group, grace, SIGKILL); :func:`end_tagged` is our sweep after that, for descendants
that left the group, through the process layer's one escalation. A quit without
shutdown is the process layer's atexit hook's: it ends every owner-tagged process
and everything in the agent's cgroups.

Where commands run in cgroups, :func:`launch` gives the command line that starts a
server in a cgroup of its own, entered before the server's program runs, as the
runner does for commands. Each start gets a new one (``mcp-TAG-N``): a restarted
server never meets the cgroup of the start before. :func:`end_tagged` also ends the
server's cgroups (``cgroup.kill``, until the kernel says they are empty) and removes
them; the connection calls it when a start ends (the server died, failed or was
stopped), so nothing of one start outlives it.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
from pathlib import Path

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a process is first looked at (about 10 ms)
    import psutil

from agent_tui.runtime.process import OWNER_ENV, owner_id
from agent_tui.runtime.process.cgroup import RunCgroup
from agent_tui.runtime.process.cgroup_tree import tree
from agent_tui.runtime.process.discovery import Found, found_pid, is_gone, scan
from agent_tui.runtime.process.limits import RunLimits
from agent_tui.runtime.process.registry import install_atexit
from agent_tui.runtime.process.terminate import terminate_now

SERVER_TAG_ENV = "AGENT_TUI_MCP_SERVER"


def tag_env(tag: str) -> dict[str, str]:
    return {OWNER_ENV: owner_id(), SERVER_TAG_ENV: tag}


def find_tagged(tag: str, *, children_only: bool = False) -> list[psutil.Process]:
    """Processes whose environment carries ``tag`` (our children only, if asked)."""
    import psutil
    if not children_only:
        return [f.proc for f in _tagged([tag])]
    try:
        candidates = psutil.Process(os.getpid()).children(recursive=False)
    except psutil.Error:
        return []
    found = []
    for proc in candidates:
        try:
            if proc.environ().get(SERVER_TAG_ENV) == tag:
                found.append(proc)
        except psutil.Error:
            continue  # gone, a zombie, or not ours to read
    return found


#: The cgroups of each server's starts not yet ended (tag -> cells); a lock, since
#: the loop starts servers while worker threads end them.
_cgroups: dict[str, list[RunCgroup]] = {}
_cgroups_lock = threading.Lock()
_starts = itertools.count(1)


def launch(
    tag: str, command: str, args: list[str], env: dict[str, str], cwd: str,
) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) that start the server ``tag`` tagged, and in a new cgroup
    of its own where commands run in cgroups. ``env`` is the server's whole
    environment (its ``PATH`` finds the program). Raises OSError as a spawn would."""
    env = {**env, **tag_env(tag)}
    # A quit without shutdown must still end it (the atexit hook ends what is ours).
    install_atexit()
    cgroups = tree()
    if cgroups is None:
        return command, list(args), env
    limits = RunLimits()
    name = f"mcp-{tag}-{next(_starts)}"
    cell = RunCgroup(cgroups, name, pids=limits.pids, memory=limits.memory)
    try:
        argv = cell.wrap([command, *args], env, Path(cwd))
    except OSError:
        cell.remove()
        raise
    with _cgroups_lock:
        _cgroups.setdefault(tag, []).append(cell)
    return argv[0], argv[1:], env


def cgroup_of(tag: str) -> Path | None:
    """The cgroup v2 folder of the server ``tag``'s latest start (None without one)."""
    with _cgroups_lock:
        cells = _cgroups.get(tag)
        return cells[-1].v2 if cells else None


def _take(tags: set[str] | list[str]) -> dict[str, list[RunCgroup]]:
    """The servers' cgroups, now owned by the caller (who ends and removes them)."""
    with _cgroups_lock:
        return {tag: _cgroups.pop(tag) for tag in tags if tag in _cgroups}


def _give_back(tag: str, cells: list[RunCgroup]) -> None:
    """Cgroups that could not be removed (a process outlived even SIGKILL): the next
    end of the server tries again, and the atexit hook at the latest."""
    with _cgroups_lock:
        _cgroups[tag] = cells + _cgroups.get(tag, [])


class _Servers:
    """The servers ``tags`` as a terminate.Target: their tagged processes and their
    cgroups' members; KILL is also ``cgroup.kill``. Nothing is reaped here: a
    server's exit status is the SDK's, which spawned it."""

    def __init__(self, tags: set[str] | list[str], cells: list[RunCgroup]) -> None:
        self.tags = tags
        self.cells = cells

    def members(self) -> list[Found]:
        found = {f.pid: f for f in _tagged(self.tags)}
        for cell in self.cells:
            for pid in cell.pids():
                if pid not in found and (f := found_pid(pid)) is not None:
                    found[pid] = f
        return list(found.values())

    def signal_whole(self, sig: int) -> bool:
        if sig != signal.SIGKILL:
            return False
        return any([cell.kill() for cell in self.cells if cell.populated()])

    def covered(self, found: Found) -> bool:
        return any(cell.holds(found.pid) for cell in self.cells)

    def whole_gone(self) -> bool:
        return not any(cell.populated() for cell in self.cells)

    def member_gone(self, found: Found) -> bool:
        return is_gone(found.proc, reap=False)


def end_tagged(tags: set[str] | list[str], grace_s: float = 1.0) -> list[int]:
    """SIGTERM every live process of the servers ``tags`` (tagged, descended from one,
    or in its cgroup), wait ``grace_s``, SIGKILL the rest; remove their cgroups.

    Synchronous; returns the PIDs that survived even SIGKILL (residue).
    """
    taken = _take(tags)
    target = _Servers(tags, [cell for cells in taken.values() for cell in cells])
    residue = [f.pid for f in terminate_now(target, grace_s).residue]
    for tag, cells in taken.items():
        left = [cell for cell in cells if not cell.remove(wait_s=0.5)]
        if left:
            _give_back(tag, left)
    return residue


def _tagged(tags: set[str] | list[str]) -> list[Found]:
    """Processes tagged with one of ``tags``, and their descendants (even env -i ones)."""
    found: dict[int, Found] = {}
    for tag in tags:
        for f in scan(SERVER_TAG_ENV, tag, leader=None, leader_alive=False, group=None):
            found.setdefault(f.pid, f)
    return list(found.values())
