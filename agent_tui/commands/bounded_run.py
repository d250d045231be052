"""A short local command a front end runs for itself (the clipboard tool behind
Ctrl+V): its output, bounded in time and in bytes.

It runs as every command does (``runtime/process``: its own session and cgroup,
tagged), with stderr dropped, and is ended through the one escalation (TERM, grace,
KILL) when it takes longer than it may or prints more than is kept. The front ends
never import ``runtime`` themselves: this is their door to it, as ``reload.py`` is
for file watches.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_tui.cancel import CancelScope
from agent_tui.runtime.process import ProcessRun, RunLimits

GRACE_S = 0.5  # TERM -> KILL: a clipboard tool has nothing to save
# stderr is not the output: the tool's messages go nowhere
_QUIET = 'exec "$0" "$@" 2>/dev/null'


@dataclass(frozen=True)
class Bounded:
    output: bytes  # at most ``limit`` + 1 bytes: one more says it printed too much
    failure: str | None = None  # why it gave no answer: not started, too slow, exit status
    flooded: bool = False  # it printed more than ``limit`` bytes and was ended


async def run_bounded(argv: Sequence[str], env: Mapping[str, str], *, timeout_s: float,
                      limit: int) -> Bounded:
    """Run ``argv`` (stdin empty); never raises for the command's own failures."""
    taken: list[bytes] = []
    got = 0
    scope = CancelScope("bounded run")
    scope.cancel_after(timeout_s)
    flooded = False

    def take(chunk: bytes) -> None:
        nonlocal got, flooded
        if got <= limit:
            taken.append(chunk[: limit + 1 - got])
            got += len(taken[-1])
        if got > limit and not flooded:
            flooded = True
            scope.cancel()

    home = Path.home()
    run = ProcessRun(["sh", "-c", _QUIET, *argv], cwd=home if home.is_dir() else Path("/"),
                     env=dict(env), limits=RunLimits(grace_s=GRACE_S, head_bytes=1024, tail_bytes=1024))
    run.add_listener(take)
    try:
        try:
            await run.start()
        except OSError as exc:
            return Bounded(b"", f"{argv[0]} could not be started: {exc.strerror or exc}")
        reason = await run.wait(scope)
        result = await (run.stop(reason) if reason is not None else run.finish())
    except asyncio.CancelledError:
        run.kill_now()  # the caller went away (a second Ctrl+V, the app closing): nothing left running
        raise
    finally:
        scope.detach()
    if flooded:
        return Bounded(b"".join(taken), flooded=True)
    if reason is not None:
        return Bounded(b"", f"{argv[0]} did not answer in {timeout_s:g} s (ended)")
    if result.exit_code != 0:
        return Bounded(b"", f"{argv[0]} failed (exit {result.exit_code})")
    return Bounded(b"".join(taken))
