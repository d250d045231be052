"""One chaos trial's outcome, as every kind of trial reports it to ``make chaos``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Outcome:
    seed: int
    plan: str
    failures: list[str]
    seconds: float
    # interrupt: how the first turn ended (cancelled, or completed when Esc came late);
    # crash: where the kill landed (a crash point's kind, "timer", or "no kill")
    status: str = ""
    kind: str = "interrupt"
    points: int = 0  # crash: the crash points the killed run passed
    where: str = ""  # interrupt: the kind of the last event before Esc
