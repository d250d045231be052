"""One search process, run to its end under the call's cancel scope.

The search (ripgrep or the fallback) is a :class:`~agent_tui.runtime.process.ProcessRun`
like any command: its own process group, ended TERM -> grace -> KILL when the scope is
cancelled (Esc, the time cap), with nothing left running. Its output is collected
here up to ``max_bytes``; past that the search is killed at once and the result says
it was cut short, so a pattern that matches everything cannot fill the memory.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.credentials import command_env
from agent_tui.runtime.process import ProcessRun, RunLimits, RunResult

# A search holds no state worth a grace period: TERM ends it, KILL follows soon.
SEARCH_LIMITS = RunLimits(grace_s=0.2, drain_s=0.2, head_bytes=8 * 1024, tail_bytes=8 * 1024)


@dataclass
class Finished:
    """How a search process ended, and what it printed."""

    output: bytes
    result: RunResult
    overflowed: bool  # killed because its output passed max_bytes
    ended_by: CancelReason | None  # the scope's reason, when it was stopped

    @property
    def exit_code(self) -> int | None:
        return self.result.exit_code

    @property
    def messages(self) -> str:
        """What it printed, as text (for error messages)."""
        return self.result.output


class _Collector:
    def __init__(self, run: ProcessRun, max_bytes: int) -> None:
        self.run = run
        self.max_bytes = max_bytes
        self.chunks: list[bytes] = []
        self.size = 0
        self.overflowed = False

    def feed(self, chunk: bytes) -> None:
        if self.overflowed:
            return
        self.chunks.append(chunk)
        self.size += len(chunk)
        if self.size > self.max_bytes:
            self.overflowed = True
            self.run.kill_now()  # enough: what we have is what we show

    def data(self) -> bytes:
        return b"".join(self.chunks)


async def run_search(
    argv: list[str], *, cwd: Path, scope: CancelScope, timeout_s: float, max_bytes: int
) -> Finished:
    """Run ``argv`` in ``cwd``; returns when it ended, was stopped, or overflowed.

    Raises OSError when it cannot be started.
    """
    own = scope.child("search")  # the time cap must not cancel the turn
    own.cancel_after(timeout_s)
    run = ProcessRun(argv, cwd=cwd, env=command_env(), limits=SEARCH_LIMITS)
    collector = _Collector(run, max_bytes)
    run.add_listener(collector.feed)
    try:
        await run.start()
        reason = await run.wait(own)  # cancel point: Esc or the time cap
        result = await (run.stop(reason) if reason is not None else run.finish())
    except asyncio.CancelledError:
        # The core stopped waiting for us: nothing we started may keep running.
        run.kill_now()
        if run.pid is not None:
            _finish_detached(run)
        raise
    finally:
        own.detach()
    return Finished(collector.data(), result, collector.overflowed, result.ended_by)


_DETACHED: set[asyncio.Future[RunResult]] = set()  # strong refs until they finish


def _finish_detached(run: ProcessRun) -> None:
    task = asyncio.ensure_future(run.stop(CancelReason.USER_INTERRUPT))
    _DETACHED.add(task)
    task.add_done_callback(_DETACHED.discard)
