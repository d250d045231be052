"""Peak memory growth of the app: a command printing 1 GB, a 5,000-message transcript,
and the idle app for the same time (the reference).

Each measurement runs in a fresh interpreter (``python -m bench.memory SCENARIO``) so
no run inherits another's heap. In it: the real AgentApp (``run_test``, headless,
120x40) hosting a real Session; once it has settled, its RSS is the baseline, and a
thread samples RSS every 5 ms for the peak while the scenario runs. Growth = peak -
baseline, in MB (10^6 bytes).

- ``flood``: the model asks for ``yes ... | head -c 1000000000``; until the turn ends.
- ``transcript``: 5,000 messages (2,500 user messages and 2,500 answers of ~300
  characters) reach the app as core events, until all are rendered.
- ``idle``: nothing happens for as long as a flood run takes (3 s).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import psutil  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = ("idle", "flood", "transcript")
FLOOD_BYTES = 1_000_000_000
MESSAGES = 5_000
IDLE_S = 3.0


class PeakRss:
    """Samples this process's RSS on a thread; ``peak`` is the highest seen."""

    def __init__(self, interval: float = 0.005) -> None:
        self.proc = psutil.Process()
        self.peak = self.proc.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True)

    def _run(self, interval: float) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(interval)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)


class TranscriptSession:
    """Session-like: emits a 5,000-message conversation as core events when run."""

    def __init__(self, emit: Callable[[Any], None], messages: int) -> None:
        self.emit = emit
        self.messages = messages
        self.badges: list[str] = []
        self.emitted = 0
        self._stop = threading.Event()
        self.go = threading.Event()

    def submit(self, op: Any) -> None:
        if getattr(op, "type", "") == "shutdown":
            self._stop.set()

    def interrupt_now(self) -> None:
        pass

    def past_records(self) -> list[Any]:
        return []

    async def run(self) -> None:
        from agent_tui.protocol import SessionClosed
        from bench.keys import conversation

        while not self.go.is_set() and not self._stop.is_set():
            await asyncio.sleep(0.01)
        for n, event in enumerate(conversation(self.messages)):
            if self._stop.is_set():
                break
            self.emit(event)
            self.emitted += 1
            if n % 150 == 149:
                await asyncio.sleep(0)  # as a real core would, between turns
        while not self._stop.is_set():
            await asyncio.sleep(0.01)
        self.emit(SessionClosed())


async def _settle(app: Any, seconds: float = 0.5) -> None:
    await asyncio.sleep(seconds)
    await app.prompt.wait_for_refresh()


async def measure_scenario(
    scenario: str, *, messages: int = MESSAGES, flood_bytes: int = FLOOD_BYTES,
    idle_s: float = IDLE_S,
) -> dict[str, Any]:
    """In this process: peak RSS growth (MB) for ``scenario``."""
    from agent_tui.protocol import UserMessage
    from agent_tui.ui.app import AgentApp
    from bench.keys import FLOOD_COMMAND, SIZE, Watched
    from bench.providers import CommandProvider

    workspace = Path(tempfile.mkdtemp(prefix="atui-bench-ws-"))
    info: dict[str, Any] = {"scenario": scenario}
    if scenario == "transcript":
        info["messages"] = messages
    elif scenario == "flood":
        info["bytes"] = flood_bytes
    if scenario == "transcript":
        holder: list[TranscriptSession] = []

        def make(emit: Callable[[Any], None]) -> TranscriptSession:
            holder.append(TranscriptSession(emit, messages))
            return holder[0]

        app = AgentApp(make, cursor_blink=False, welcome=False)
    else:
        watched = Watched()
        provider = CommandProvider(FLOOD_COMMAND.format(size=flood_bytes))
        app = AgentApp(watched.factory(provider, workspace), cursor_blink=False, welcome=False)
    async with app.run_test(size=SIZE):
        while not app.core_running:
            await asyncio.sleep(0.01)
        await _settle(app)
        baseline = psutil.Process().memory_info().rss
        t0 = time.monotonic()
        with PeakRss() as peak:
            if scenario == "idle":
                await asyncio.sleep(idle_s)
            elif scenario == "flood":
                app.submit(UserMessage(text="print a gigabyte"))
                while app.last_turn_status is None:
                    await asyncio.sleep(0.01)
                info["output_events"] = sum(1 for _, k, _ in watched.stamps if k == "tool_state")
            else:
                session = holder[0]
                session.go.set()
                total = messages // 2 * 3
                while app.events_handled < total:
                    await asyncio.sleep(0.01)
                app.flush()
                info["transcript_blocks"] = len(app.transcript.blocks)
            await _settle(app, 0.1)
        info["seconds"] = round(time.monotonic() - t0, 2)
        info["last_turn_status"] = app.last_turn_status
    info["baseline_mb"] = baseline / 1e6
    info["growth_mb"] = (peak.peak - baseline) / 1e6
    return info


def measure(scenario: str, *, messages: int = MESSAGES, flood_bytes: int = FLOOD_BYTES,
            idle_s: float = IDLE_S, timeout: float = 300.0) -> dict[str, Any]:
    """Run ``scenario`` in a fresh interpreter; its result."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.memory", scenario, str(messages), str(flood_bytes),
         str(idle_s)],
        cwd=REPO, capture_output=True, text=True, timeout=timeout,
    )
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"memory {scenario} failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(lines[-1])


def main() -> int:
    args = sys.argv[1:]
    if not args or args[0] not in SCENARIOS:
        print(f"usage: python -m bench.memory {{{','.join(SCENARIOS)}}} "
              "[MESSAGES [FLOOD_BYTES [IDLE_S]]]", file=sys.stderr)
        return 2
    messages = int(args[1]) if len(args) > 1 else MESSAGES
    flood_bytes = int(args[2]) if len(args) > 2 else FLOOD_BYTES
    idle_s = float(args[3]) if len(args) > 3 else IDLE_S
    result = asyncio.run(measure_scenario(
        args[0], messages=messages, flood_bytes=flood_bytes, idle_s=idle_s))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
