"""Cost that grows with the session: the core's CPU per turn early and late in one long
session, and its memory over a simulated working day.

One real Session (on its own thread, as the TUI hosts it) with a journal on disk, the
real ``bash`` tool and an in-process scripted model (:class:`TurnProvider`). Every turn
is a user message, one command printing ``OUTPUT_BYTES`` (2,000 turns: 500 MB of tool
output), and a short answer. The model reports input tokens as the request's
characters / 4 against a ``WINDOW``-token window, so the core compacts by itself every
few turns, as a long session does.

Per turn: the process's CPU time (user + system, this process only: the commands' own
processes are not counted), and every ``RSS_EVERY`` turns its RSS. A turn stands for
``8 h / 2,000`` of a working day, so the RSS slope after the warm-up is in MB an hour.

    python -m bench.session_cost [TURNS]
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psutil

from agent_tui.core.compaction.compaction import SUMMARY_ASK
from agent_tui.core.journal.journal import Journal
from agent_tui.core.usage.limits import ModelLimits
from agent_tui.protocol import UserMessage
from agent_tui.providers import base
from agent_tui.tools.bash import BashTool
from bench.host import HostedSession, Stamped

TURNS = 2_000
OUTPUT_BYTES = 250_000  # a turn's command output: 2,000 turns print 500 MB
WINDOW = 60_000  # tokens: a compaction every few turns
DAY_HOURS = 8.0  # the simulated session, spread over TURNS turns
RSS_EVERY = 20
WARM_UP = 0.25  # the first quarter of the turns is left out of the slope
EARLY, LATE = 10, 1_000  # the turns whose CPU is compared (each: the median of 11 around it)
COMMAND = "yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c {size}"


def _chars(messages: list[dict[str, Any]]) -> int:
    return len(json.dumps(messages, ensure_ascii=False))


def _last_text(request: base.ModelRequest) -> str:
    content = request.messages[-1]["content"]
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content if isinstance(b, dict))


class TurnProvider(base.Provider):
    """A command a user message, then an answer; a summary when asked for one."""

    name = "bench-turns"
    default_model = "bench"

    def __init__(self, command: str) -> None:
        self.command = command
        self.calls = 0
        self.summaries = 0

    def stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
        return self._stream(request)

    async def _stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
        await asyncio.sleep(0)
        self.calls += 1
        usage = base.UsageCounts(input_tokens=_chars(request.messages) // 4, output_tokens=20)
        yield base.MessageStarted(id=f"msg_{self.calls}", model="bench", usage=usage)
        content = request.messages[-1]["content"]
        if SUMMARY_ASK[:40] in _last_text(request):
            self.summaries += 1
            yield base.TextStarted(index=0)
            yield base.TextDelta(index=0, text=f"Summary {self.summaries}: the user asks for "
                                 "commands; each printed a lot; all went well.")
            yield base.BlockStopped(index=0)
            yield base.MessageEnded(stop_reason="end_turn", output_tokens=30)
        elif not isinstance(content, str) and all(b.get("type") == "tool_result" for b in content):
            yield base.TextStarted(index=0)
            yield base.TextDelta(index=0, text="Done: the command printed what was asked.")
            yield base.BlockStopped(index=0)
            yield base.MessageEnded(stop_reason="end_turn", output_tokens=12)
        else:
            yield base.ToolUseStarted(index=0, id=f"toolu_turn{self.calls:06d}", name="bash")
            yield base.ToolInputDelta(index=0, partial_json=json.dumps({"command": self.command}))
            yield base.BlockStopped(index=0)
            yield base.MessageEnded(stop_reason="tool_use", output_tokens=40)


class Counted(Stamped):
    """Keeps what the figures need of the events (a long session's events would
    otherwise be this process's growing memory): turn endings and compactions."""

    def __init__(self) -> None:
        super().__init__()
        self.ended: list[str] = []
        self.compactions: list[str] = []

    def __call__(self, event: Any) -> None:
        with self._cond:
            if event.type == "turn_ended":
                self.ended.append(str(event.status))
                self._cond.notify_all()
            elif event.type == "compaction":
                self.compactions.append(str(event.state))


def _around(per_turn: list[float], turn: int, half: int = 5) -> list[float]:
    """The CPU ms of the turns around ``turn`` (1-based), as samples."""
    lo = max(0, turn - 1 - half)
    return per_turn[lo : turn + half]


def slope_mb_per_hour(points: list[tuple[int, float]], turns: int) -> float:
    """Least-squares slope of (turn, RSS MB) after the warm-up, in MB per simulated hour."""
    after = [(t, mb) for t, mb in points if t >= turns * WARM_UP]
    if len(after) < 2:
        return 0.0
    hours_per_turn = DAY_HOURS / TURNS  # a turn is the same time however many run
    xs = [t * hours_per_turn for t, _ in after]
    ys = [mb for _, mb in after]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


def measure(turns: int = TURNS, *, log: Any = None) -> dict[str, Any]:
    """Run one session of ``turns`` turns; CPU ms per turn, RSS points, compactions."""
    workspace = Path(tempfile.mkdtemp(prefix="atui-bench-turns-"))
    provider = TurnProvider(COMMAND.format(size=OUTPUT_BYTES))
    journal = Journal(workspace.parent / f"{workspace.name}.jsonl")
    events = Counted()
    host = HostedSession(provider, [BashTool()], workspace, journal=journal,
                         limits=ModelLimits(settings_window=WINDOW), events=events)
    proc = psutil.Process()
    per_turn: list[float] = []
    rss: list[tuple[int, float]] = []
    started = time.monotonic()
    try:
        for n in range(1, turns + 1):
            cpu = time.process_time()
            host.submit(UserMessage(text=f"turn {n}: print the log"))
            if not events.wait(lambda: len(events.ended) >= n, timeout=60):
                raise RuntimeError(f"turn {n} did not end")
            per_turn.append((time.process_time() - cpu) * 1000)
            if n % RSS_EVERY == 0:
                gc.collect()
                rss.append((n, proc.memory_info().rss / 1e6))
            if log and n % 200 == 0:
                log(f"session cost: turn {n}/{turns}, RSS {proc.memory_info().rss / 1e6:.0f} MB")
        statuses = list(events.ended)
        compactions = events.compactions.count("completed")
    finally:
        host.close()
    return {
        "cpu_ms": per_turn, "rss": rss, "compactions": compactions,
        "failed_turns": sum(1 for s in statuses if s != "completed"),
        "seconds": round(time.monotonic() - started, 1), "turns": turns,
        "journal_mb": round(journal.path.stat().st_size / 1e6, 1) if journal.path else 0,
    }


def figures_from(result: dict[str, Any]) -> dict[str, Any]:
    turns = result["turns"]
    late = min(LATE, turns - 5)
    return {
        "early": _around(result["cpu_ms"], EARLY), "late": _around(result["cpu_ms"], late),
        "late_turn": late, "slope": slope_mb_per_hour(result["rss"], turns),
    }


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else TURNS
    out = measure(n, log=lambda m: print(m, file=sys.stderr, flush=True))
    fig = figures_from(out)
    print(json.dumps({"early_ms": statistics.median(fig["early"]),
                      "late_ms": statistics.median(fig["late"]), "late_turn": fig["late_turn"],
                      "slope_mb_h": round(fig["slope"], 2), "rss": out["rss"],
                      "compactions": out["compactions"], "failed": out["failed_turns"],
                      "seconds": out["seconds"], "journal_mb": out["journal_mb"]}))
