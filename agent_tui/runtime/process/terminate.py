"""Ending processes: the one TERM -> grace -> KILL -> confirm escalation.

Every process ender uses it: a run (:mod:`.run`), the last resort at exit
(:mod:`.registry`), stdio MCP servers, what a crashed agent left behind, hooks. What
differs between them is only *what* is ended, a :class:`Target`:

- its members, found by a scan (tag, group, descent, or a cgroup's member list);
- a signal to the whole at once (``killpg`` of a group, ``cgroup.kill``), which
  reaches members no scan has seen yet;
- whether the whole is gone beyond its members (a leader reaped, a cgroup empty);
- whose exit statuses are ours to reap.

The escalation itself is written once, as a generator that yields what it needs (a
scan, or a pause) and returns a :class:`Termination`. Two drivers run it: one that
blocks (atexit, signal handlers, worker threads) and one for the event loop, which
scans off the loop and sleeps with ``asyncio.sleep``.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Protocol

from agent_tui.runtime.process.discovery import POLL_S, Found, is_gone, send
from agent_tui.runtime.process.records import Escalation


class Target(Protocol):
    """Something to end. See the module docstring."""

    def members(self) -> list[Found]:
        """The target's processes now (may be slow: the loop driver runs it in a thread)."""
        ...

    def signal_whole(self, sig: int) -> bool:
        """Signal the whole target at once where there is a way; True if it was sent."""
        ...

    def covered(self, found: Found) -> bool:
        """Whether a ``signal_whole`` that was sent reached this member (no second one)."""
        ...

    def whole_gone(self) -> bool:
        """Gone beyond its members: the leader reaped, the cgroup empty. True if n/a."""
        ...

    def member_gone(self, found: Found) -> bool:
        """The one predicate, with the target's reaping rule."""
        ...


class Members:
    """A target that is only its members (no whole-target signal): tagged MCP servers,
    a left-over tree. ``reap`` says whether their exit statuses are ours to collect."""

    def __init__(self, find: Callable[[], list[Found]], *, reap: bool) -> None:
        self._find = find
        self._reap = reap

    def members(self) -> list[Found]:
        return self._find()

    def signal_whole(self, sig: int) -> bool:
        return False

    def covered(self, found: Found) -> bool:
        return False

    def whole_gone(self) -> bool:
        return True

    def member_gone(self, found: Found) -> bool:
        return is_gone(found.proc, reap=self._reap)


@dataclass
class Termination:
    """What one escalation did: the signals it took, whom it ended, who outlived it."""

    escalation: Escalation = Escalation.NONE
    grace_used_s: float | None = None
    ended: list[Found] = field(default_factory=list)
    residue: list[Found] = field(default_factory=list)


class _Scan:
    """The escalation asks its driver for the target's members."""


SCAN = _Scan()
#: What the escalation yields: SCAN (answer with the members) or a pause in seconds.
Step = _Scan | float


def _never() -> bool:
    return False


def escalate(
    target: Target, grace_s: float, confirm_s: float, hurried: Callable[[], bool] = _never,
) -> Generator[Step, list[Found] | None, Termination]:
    """TERM the target, wait up to ``grace_s``, KILL what is left, confirm for up to
    ``confirm_s``. ``grace_s`` <= 0 goes straight to KILL, and so does the wait once
    ``hurried()`` says so (the user pressed Esc again)."""
    term = Termination()
    found: list[Found] = []
    if grace_s > 0:
        t0 = time.monotonic()
        # The whole first, before any scan: cancel is a signal, not a wait.
        whole = target.signal_whole(signal.SIGTERM)
        found = list((yield SCAN) or [])
        if not found and not whole:
            return term  # nothing of it was left
        _signal(target, found, signal.SIGTERM, whole=whole)
        term.escalation = Escalation.TERM
        alive = yield from _wait_gone(target, found, t0 + grace_s, hurried)
        if not alive and target.whole_gone():
            term.grace_used_s = round(time.monotonic() - t0, 3)
            term.ended = found
            return term
        term.grace_used_s = grace_s if not hurried() else round(time.monotonic() - t0, 3)
    # Rescan: the tree may have forked while it was "stopping".
    seen = {f.pid for f in found}
    found += [f for f in (yield SCAN) or [] if f.pid not in seen]
    whole = target.signal_whole(signal.SIGKILL)
    if not found and not whole and term.escalation is Escalation.NONE:
        return term
    term.escalation = Escalation.KILL
    _signal(target, found, signal.SIGKILL, whole=whole)
    alive = yield from _wait_gone(target, found, time.monotonic() + confirm_s)
    alive_pids = {f.pid for f in alive}
    term.ended = [f for f in found if f.pid not in alive_pids]
    term.residue = alive
    return term


def _signal(target: Target, found: list[Found], sig: int, *, whole: bool) -> None:
    for f in found:
        if not (whole and target.covered(f)):
            send(f, sig)


def _wait_gone(
    target: Target, found: list[Found], deadline: float, hurried: Callable[[], bool] = _never,
) -> Generator[Step, list[Found] | None, list[Found]]:
    """Pause until the whole and every member are gone (or the deadline passed, or the
    wait was hurried); the members still there."""
    while True:
        alive = [f for f in found if not target.member_gone(f)]
        if not alive and target.whole_gone():
            return []
        if time.monotonic() >= deadline or hurried():
            return alive
        yield POLL_S


def _advance(
    steps: Generator[Step, list[Found] | None, Termination], answer: list[Found] | None
) -> Step | Termination:
    try:
        return steps.send(answer)
    except StopIteration as done:
        ended: Termination = done.value  # the generator's return value
        return ended


def terminate_now(target: Target, grace_s: float, confirm_s: float = 1.0) -> Termination:
    """Run the escalation, blocking: for atexit, signal handlers and worker threads."""
    steps = escalate(target, grace_s, confirm_s)
    step = _advance(steps, None)
    while not isinstance(step, Termination):
        if isinstance(step, _Scan):
            step = _advance(steps, target.members())
        else:
            time.sleep(step)
            step = _advance(steps, None)
    return step


async def terminate(target: Target, grace_s: float, confirm_s: float = 1.0,
                    hurried: Callable[[], bool] = _never) -> Termination:
    """Run the escalation on the event loop: scans in a thread, pauses as sleeps."""
    steps = escalate(target, grace_s, confirm_s, hurried)
    step = _advance(steps, None)
    while not isinstance(step, Termination):
        if isinstance(step, _Scan):
            step = _advance(steps, await asyncio.to_thread(target.members))
        else:
            await asyncio.sleep(step)
            step = _advance(steps, None)
    return step
