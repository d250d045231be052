"""Finding and ending the processes of stdio MCP servers.

Each server process gets two tags in its environment: the process layer's owner tag
(so the app-wide last resort, ``kill_all_runs``, ends it too) and a tag of its own
(``AGENT_TUI_MCP_SERVER``), by which we find its PID and anything it left behind.
The SDK ends a server at session close (stdin closed, grace, SIGTERM to its process
group, grace, SIGKILL); :func:`end_tagged` is our sweep after that, for descendants
that left the group, through the process layer's one escalation. A quit without
shutdown is the process layer's atexit hook's: it ends every owner-tagged process.
"""

from __future__ import annotations

import os

import psutil

from agent_tui.tools.process import OWNER_ENV, OWNER_ID
from agent_tui.tools.process.discovery import Found, scan
from agent_tui.tools.process.registry import install_atexit
from agent_tui.tools.process.terminate import Members, terminate_now

SERVER_TAG_ENV = "AGENT_TUI_MCP_SERVER"


def tag_env(tag: str) -> dict[str, str]:
    return {OWNER_ENV: OWNER_ID, SERVER_TAG_ENV: tag}


def remember(tag: str) -> None:
    """Before a server starts: a quit without shutdown must still end it (the process
    layer's atexit hook ends every process with our owner tag)."""
    install_atexit()


def find_tagged(tag: str, *, children_only: bool = False) -> list[psutil.Process]:
    """Processes whose environment carries ``tag`` (our children only, if asked)."""
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


def end_tagged(tags: set[str] | list[str], grace_s: float = 1.0) -> list[int]:
    """SIGTERM every live process carrying one of ``tags`` (and what descends from it),
    wait ``grace_s``, SIGKILL the rest.

    Synchronous; returns the PIDs that survived even SIGKILL (residue). Nothing is
    reaped here: a server's exit status is the SDK's, which spawned it.
    """

    target = Members(lambda: _tagged(tags), reap=False)
    return [f.pid for f in terminate_now(target, grace_s).residue]


def _tagged(tags: set[str] | list[str]) -> list[Found]:
    """Processes tagged with one of ``tags``, and their descendants (even env -i ones)."""
    found: dict[int, Found] = {}
    for tag in tags:
        for f in scan(SERVER_TAG_ENV, tag, leader=None, leader_alive=False, group=None):
            found.setdefault(f.pid, f)
    return list(found.values())
