"""Chaos trials in parallel: worker processes that take one trial at a time.

Each worker has its own strict fake API server (its queue is cleared between
trials) and, once it runs a crash trial, its own fork server with the agent
preloaded (``chaos_agent``). Every trial has its own home and workspace, under
``/dev/shm`` where there is one (the journal's fsyncs then cost nothing; a SIGKILL
keeps what was written either way, and a power cut is played by cutting the last
line short).
"""

from __future__ import annotations

import asyncio
import atexit
import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

SCRATCH = Path("/dev/shm")

_srv: Any = None
_fork: Any = None


def _start_worker() -> None:
    global _srv
    from bench.forked_agent import share_ssl_context
    from tests.fake_api import FakeAnthropicServer

    share_ssl_context()

    _srv = FakeAnthropicServer().start()
    atexit.register(_srv.stop)


def run_one(kind: str, seed: int) -> Any:
    """One trial in this process (a worker, or the caller itself)."""
    global _fork
    if _srv is None:
        _start_worker()
    if kind in ("crash", "concurrent"):
        from bench.forked_agent import fork_context
        from bench.chaos_concurrent import run_trial as concurrent_trial
        from bench.chaos_crash import run_trial as crash_trial

        if _fork is None:
            _fork = fork_context()
        base = SCRATCH if SCRATCH.is_dir() and os.access(SCRATCH, os.W_OK) else None
        trial = crash_trial if kind == "crash" else concurrent_trial
        return trial(_srv, _fork, seed, base=base)
    from bench.chaos_interrupts import run_trial as interrupt_trial

    outcome = asyncio.run(interrupt_trial(_srv, seed))
    outcome.kind = "interrupt"
    return outcome


def run_parallel(work: Iterable[tuple[str, int]], jobs: int,
                 report: Callable[[Any], None]) -> list[Any]:
    """Run ``(kind, seed)`` trials on ``jobs`` workers; ``report`` sees each outcome
    as it comes in. At most two trials a worker are queued at a time, so the order
    the trials were given in is roughly kept."""
    pending = list(work)
    pending.reverse()
    outcomes: list[Any] = []
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context,
                             initializer=_start_worker) as pool:
        running: set[Future[Any]] = set()
        while pending or running:
            while pending and len(running) < 2 * jobs:
                running.add(pool.submit(run_one, *pending.pop()))
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                outcome = future.result()
                outcomes.append(outcome)
                report(outcome)
    return outcomes
