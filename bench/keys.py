"""Keystroke to screen, idle and under load, in the real app (Textual's ``run_test``).

The app is the real AgentApp hosting a real Session on its own thread (as in the TUI);
only the model is scripted in-process. A sample is: post one key event the way the
terminal driver does, then wait until the prompt holds the character *and* the screen
has refreshed after that (``wait_for_refresh``). Headless, so nothing is written to a
terminal, but the compositor renders every frame as it would on screen.

Loads: the model streaming 10,000 text deltas a second (:class:`FloodProvider`; keys
from 1 s into the stream on), the same stream at the end of a 5,000-message session,
and a bash command printing 100 MB (``yes ... | head -c 100000000``). Only samples taken
entirely while the load ran count (checked against the core's own event times). The
command ends in a fraction of a second, so it is run again until enough samples are in.
Reference: the same keystrokes in the same app while idle (for the long session:
while idle and empty, before the 5,000 messages arrive).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import agent_tui.ui  # noqa: E402,F401  (before Textual: it sets the frame rate the app runs at)
from textual import events  # noqa: E402

from agent_tui.protocol import Event, Interrupt, UserMessage  # noqa: E402
from agent_tui.core.journal.journal import Journal  # noqa: E402
from agent_tui.core.calls.permission import AllowAll  # noqa: E402
from agent_tui.core.session.session import Session  # noqa: E402
from agent_tui.core.calls.tool import ToolSet  # noqa: E402
from agent_tui.core.services.deps import AgentConfig, SessionDeps  # noqa: E402
from agent_tui.providers.base import Provider  # noqa: E402
from agent_tui.tools.bash import BashTool  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from bench.providers import CommandProvider, FloodProvider  # noqa: E402

SIZE = (120, 40)
FLOOD_COMMAND = "yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c {size}"
KEYS = "abcdefghijklmnopqrstuvwxyz"
# Keys are sampled from this long into the stream on (10,000 deltas, about 60 KB of
# text, by then): what a key costs depends on how long the answer already is.
STREAM_WARM_S = 1.0


class Watched:
    """Remembers when the core emitted what (its own clock), then passes events on."""

    def __init__(self) -> None:
        self.stamps: list[tuple[float, str, str]] = []  # (time, type, state or status)
        self._emit: Callable[[Event], None] | None = None

    def factory(self, provider: Provider, workspace: Path) -> Callable[[Callable[[Event], None]], Session]:
        def make(emit: Callable[[Event], None]) -> Session:
            self._emit = emit
            deps = SessionDeps(
                config=AgentConfig(workspace=workspace, model="bench"),
                provider=provider,
                tools=ToolSet([BashTool()]),
                policy=AllowAll(),
                journal=Journal(),
                emit=self.emit,
            )
            return Session(deps)

        return make

    def emit(self, event: Event) -> None:
        if event.type in ("tool_state", "turn_ended", "turn_started"):
            what = str(getattr(event, "state", "") or getattr(event, "status", ""))
            self.stamps.append((time.monotonic(), event.type, what))
        elif event.type == "text_delta" and (not self.stamps or self.stamps[-1][1] != "text"):
            self.stamps.append((time.monotonic(), "text", ""))
        assert self._emit is not None
        self._emit(event)

    def window(self, start: tuple[str, str], end: tuple[str, str], after: float) -> tuple[float, float] | None:
        """The first (start, end) stamps after ``after``, as a time window."""
        t_start = next((t for t, k, s in self.stamps if t > after and (k, s) == start), None)
        if t_start is None:
            return None
        t_end = next((t for t, k, s in self.stamps if t > t_start and (k, s) == end), None)
        return (t_start, t_end if t_end is not None else float("inf"))


async def one_key(app: AgentApp, char: str) -> tuple[float, float]:
    """Press ``char``; (start, end) monotonic times of key sent -> shown on screen."""
    prompt = app.prompt
    length = len(prompt.text)
    event = events.Key(char, char)
    event.set_sender(app)
    t0 = time.monotonic()
    app._driver.send_message(event)  # what the terminal driver does with a key it reads
    while len(prompt.text) <= length:
        await asyncio.sleep(0.0005)
    await prompt.wait_for_refresh()
    return t0, time.monotonic()


async def _wait(pred: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


async def _sample_while(app: AgentApp, rng: random.Random, until: Callable[[], bool],
                        limit: int) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    while not until() and len(out) < limit:
        out.append(await one_key(app, rng.choice(KEYS)))
        await asyncio.sleep(rng.uniform(0.01, 0.03))
    return out


def _clear(app: AgentApp) -> None:
    app.prompt.clear()


async def _idle_samples(app: AgentApp, runs: int, rng: random.Random) -> list[float]:
    _clear(app)
    await asyncio.sleep(0.2)
    out = []
    for _ in range(runs):
        t0, t1 = await one_key(app, rng.choice(KEYS))
        out.append((t1 - t0) * 1000)
        await asyncio.sleep(rng.uniform(0.01, 0.03))
    _clear(app)
    return out


async def keys_streaming(runs: int, workspace: Path, seed: int = 1) -> dict[str, Any]:
    """Keystroke ms while the model streams 10,000 deltas a second, and idle (same app)."""
    return await _keys_while_flooding(runs, workspace, seed)


async def keys_long_session(runs: int, workspace: Path, seed: int = 3,
                            messages: int = 5_000) -> dict[str, Any]:
    """Keystroke ms while the model streams 10,000 deltas a second below ``messages``
    earlier messages, and idle in the same app before they arrived."""
    return await _keys_while_flooding(runs, workspace, seed, history=conversation(messages))


def conversation(messages: int) -> list[Event]:
    """A session's worth of events: user messages and answers of ~300 characters."""
    from agent_tui.protocol import TextDelta, TurnEnded, TurnStarted

    answer = ("Here is what I found in the code: the function reads the file, "
              "parses each line and returns the totals. ") * 3
    out: list[Event] = []
    for n in range(messages // 2):
        turn = f"old{n + 1}"
        out += [TurnStarted(turn_id=turn, text=f"question number {n + 1}: what does it do?"),
                TextDelta(turn_id=turn, text=answer),
                TurnEnded(turn_id=turn, status="completed")]
    return out


async def _keys_while_flooding(runs: int, workspace: Path, seed: int,
                               history: list[Event] | None = None) -> dict[str, Any]:
    """Idle keys first; then ``history`` (if any) reaches the transcript, and keys are
    sampled while the model streams 10,000 deltas a second below it."""
    rng = random.Random(seed)
    watched = Watched()
    provider = FloodProvider(rate=10_000, seconds=STREAM_WARM_S + runs * 0.6 + 2.0)
    app = AgentApp(watched.factory(provider, workspace), cursor_blink=False, welcome=False)
    async with app.run_test(size=SIZE):
        await _wait(lambda: app.core_running, 10, "the core")
        idle = await _idle_samples(app, runs, rng)
        if history:
            target = app.inbox.received + len(history)
            for event in history:  # as a resumed session's transcript would arrive
                app.inbox.emit(event)
            await _wait(lambda: app.events_handled >= target, 120, "the earlier messages")
            app.flush()
            await app.prompt.wait_for_refresh()
        mark = time.monotonic()
        app.submit(UserMessage(text="flood"))
        await _wait(lambda: watched.window(("text", ""), ("turn_ended", "completed"), mark)
                    is not None, 10, "the stream")
        await asyncio.sleep(STREAM_WARM_S)  # the answer is long by now: samples compare
        samples = await _sample_while(
            app, rng, lambda: watched.window(("text", ""), ("turn_ended", "completed"), mark)[1]
            != float("inf"), runs)
        app.submit(Interrupt())
        await _wait(lambda: app.last_turn_status is not None, 15, "the turn to end")
        window = watched.window(("text", ""), ("turn_ended", "cancelled"), mark) or \
            watched.window(("text", ""), ("turn_ended", "completed"), mark)
        loaded = [(t1 - t0) * 1000 for t0, t1 in samples if window and window[0] <= t0 and t1 <= window[1]]
        blocks = len(app.transcript.blocks)
    return {"loaded_ms": loaded, "idle_ms": idle, "rate": provider.achieved_rate, "blocks": blocks}


async def keys_command_flood(runs: int, workspace: Path, seed: int = 2,
                             size: int = 100_000_000) -> dict[str, Any]:
    """Keystroke ms while a command prints ``size`` bytes, and idle (same app)."""
    rng = random.Random(seed)
    watched = Watched()
    provider = CommandProvider(FLOOD_COMMAND.format(size=size))
    app = AgentApp(watched.factory(provider, workspace), cursor_blink=False, welcome=False)
    loaded: list[float] = []
    async with app.run_test(size=SIZE):
        await _wait(lambda: app.core_running, 10, "the core")
        idle = await _idle_samples(app, runs, rng)
        for _attempt in range(max(10, runs * 4)):
            if len(loaded) >= runs:
                break
            mark = time.monotonic()
            app.submit(UserMessage(text="print a lot"))
            await _wait(lambda: watched.window(("tool_state", "running"), ("tool_state", "succeeded"), mark)
                        is not None, 10, "the command")
            samples = await _sample_while(
                app, rng, lambda: watched.window(("tool_state", "running"), ("tool_state", "succeeded"), mark)[1]
                != float("inf"), runs)
            await _wait(lambda: any(t > mark and k == "turn_ended" for t, k, _ in watched.stamps),
                        30, "the turn to end")
            window = watched.window(("tool_state", "running"), ("tool_state", "succeeded"), mark)
            loaded += [(t1 - t0) * 1000 for t0, t1 in samples if window[0] <= t0 and t1 <= window[1]]
            _clear(app)
    return {"loaded_ms": loaded[:runs], "idle_ms": idle}
