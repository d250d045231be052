"""``make bench-peers``: agent-tui beside Claude Code, pi and opencode, in one run.

    python -m bench.peers [--runs N] [--only NAME,...] [--skip-install]

The peers are installed from npm (pinned, :data:`bench.peers_setup.PINS`) into a cache
outside the repo, each pointed at its own fake API on 127.0.0.1 with a throwaway home.
Every peer and every figure runs in its own try with its own timeout: a peer that
cannot install or start is a line of the report, and the run goes on. The load average
is taken before and after. The table (Markdown) goes to stdout, last.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field

from bench.peers_setup import CACHE, PEERS, Peer, install

FIGURES = (  # key, title, unit, floor
    ("close", "Esc in a stalled stream -> the server sees the connection closed", "ms",
     "raw client closes"),
    ("shown", "Esc -> first stop line on screen", "ms", ""),
    ("final", "Esc -> the turn's final state on screen (a TERM-ignoring child)", "ms", ""),
    ("print", "`-p`, time per turn of a short scripted session", "s", ""),
    ("idle", "bytes/s to an idle terminal", "B/s", "0"),
    ("left", "processes left 5 s after Esc (plain, TERM-ignoring, setsid, double-forked)",
     "count", "0 (killpg + reap)"),
)


@dataclass
class Column:
    """One program's samples, figure by figure, and what went wrong."""

    peer: str
    version: str
    samples: dict[str, list[float]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)

    def add(self, key: str, value: float | None) -> None:
        if value is not None:
            self.samples.setdefault(key, []).append(value)

    def note(self, key: str, text: str) -> None:
        if text not in self.notes.setdefault(key, []):
            self.notes[key].append(text)


def cell(column: Column, key: str, unit: str) -> str:
    """A median (with the number of samples when there are several), or why not."""
    values = column.samples.get(key)
    notes = column.notes.get(key, [])
    if not values:
        return "- (" + "; ".join(notes) + ")" if notes else "-"
    median = statistics.median(values)
    text = f"{median:,.0f} {unit}" if unit in ("ms", "B/s") else (
        f"{median:.2f} {unit}" if unit == "s" else f"{median:g}")
    if unit == "count" and len(values) > 1:
        text += f" (worst {max(values):g})"
    if notes:
        text += " (" + "; ".join(notes) + ")"
    return text


def table(columns: list[Column], floors: dict[str, str]) -> str:
    names = [f"{c.peer} {c.version}" for c in columns]
    lines = ["| figure | " + " | ".join(names) + " | floor |",
             "|---|" + "---|" * (len(columns) + 1)]
    for key, title, unit, floor in FIGURES:
        row = [cell(c, key, unit) for c in columns]
        lines.append(f"| {title} | " + " | ".join(row) + f" | {floors.get(key, floor) or '-'} |")
    return "\n".join(lines)


def log(msg: str) -> None:
    print(f"[bench-peers {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__


def measure(peer: Peer, runs: int, column: Column) -> None:
    """Every figure of one program, each in its own try."""
    from bench.peers_measure import PeerTui, print_turns

    try:
        for took in print_turns(peer, CACHE, runs):
            column.add("print", took)
    except Exception as exc:  # a peer that fails is a note, the run goes on
        column.note("print", short(exc))
        log(f"{peer.name} -p: {short(exc)}")
    app = None
    try:
        app = PeerTui(peer, CACHE)
        app.ready()
        column.add("idle", app.idle_bps())
        for _ in range(runs):
            result = app.esc()
            column.add("close", result["close_ms"])
            column.add("shown", result["shown_ms"])
            if result["shown_ms"] is None:
                column.note("shown", "no stop word seen")
        for text in app.notes:
            column.note("close", text)
        left, final = app.tree()
        column.add("left", left)
        column.add("final", final)
    except Exception as exc:
        for key in ("idle", "close", "shown", "left", "final"):
            if key not in column.samples:
                column.note(key, short(exc))
        log(f"{peer.name} TUI: {short(exc)}")
        if os.environ.get("BENCH_PEERS_DEBUG"):
            traceback.print_exc()
    finally:
        if app is not None:
            app.close()


def close_floor(runs: int) -> str:
    """A raw client reads a stalled stream's first bytes and closes: median ms."""
    from bench.interrupts import stalled_close_reference_ms
    from tests.fake_api import FakeAnthropicServer

    srv = FakeAnthropicServer().start()
    try:
        return f"{statistics.median(stalled_close_reference_ms(srv) for _ in range(runs)):.0f} ms"
    finally:
        srv.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.peers")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="names, comma separated (agent-tui, ...)")
    parser.add_argument("--skip-install", action="store_true")
    args = parser.parse_args(argv)
    wanted = {n.strip().lower() for n in args.only.split(",") if n.strip()}
    load_before = os.getloadavg()
    if not args.skip_install:
        log(install())
    floors: dict[str, str] = {}
    try:
        floors["close"] = close_floor(args.runs)
    except Exception as exc:
        log(f"floor: {short(exc)}")
    columns: list[Column] = []
    for peer in PEERS:
        if wanted and peer.name.lower() not in wanted:
            continue
        column = Column(peer.name, peer.version)
        columns.append(column)
        if peer.package and not (CACHE / "node_modules" / ".bin" / peer.binary).exists():
            for key, *_ in FIGURES:
                column.note(key, "not installed")
            continue
        log(f"{peer.name}: measuring")
        measure(peer, args.runs, column)
    load_after = os.getloadavg()
    print(f"{time.strftime('%Y-%m-%d')}, {args.runs} runs a figure, load average "
          f"{load_before[0]:.2f} before and {load_after[0]:.2f} after (1 min), "
          f"{os.cpu_count()} cores")
    print(table(columns, floors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
