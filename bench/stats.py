"""Figures (samples beside their reference), targets, the table and the JSON file."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclass
class Figure:
    """One measured quantity: its samples, its reference's samples, and its target."""

    key: str
    title: str
    unit: str  # "ms", "MB", "count"
    samples: list[float] = field(default_factory=list)
    ref_title: str = ""
    ref_samples: list[float] = field(default_factory=list)
    target: str = ""  # the target in words, e.g. "median <= 100 ms"
    # Decides PASS / MISS from the figure; None: no target (the figure is informative).
    check: Callable[[Figure], bool] | None = field(default=None, repr=False, compare=False)
    notes: list[str] = field(default_factory=list)
    skipped: bool = False  # left out on purpose (--quick): no samples is not a miss

    @property
    def runs(self) -> int:
        return len(self.samples)

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def worst(self) -> float | None:
        return max(self.samples) if self.samples else None

    @property
    def ref_median(self) -> float | None:
        return statistics.median(self.ref_samples) if self.ref_samples else None

    @property
    def ref_worst(self) -> float | None:
        return max(self.ref_samples) if self.ref_samples else None

    @property
    def ratio(self) -> float | None:
        """Median over reference median (how many times the reference)."""
        m, r = self.median, self.ref_median
        if m is None or r is None or r <= 0:
            return None
        return m / r

    @property
    def verdict(self) -> str:
        if self.check is None:
            return ""
        if not self.samples:
            return "not run" if self.skipped else "MISS"
        return "PASS" if self.check(self) else "MISS"

    def to_json(self) -> dict:
        data = asdict(self)
        data.pop("check", None)
        data.update(
            runs=self.runs, median=self.median, worst=self.worst, ref_median=self.ref_median,
            ref_worst=self.ref_worst, ratio=self.ratio, verdict=self.verdict,
        )
        return data


# ----------------------------------------------------------------------- targets


def median_at_most(limit: float) -> Callable[[Figure], bool]:
    return lambda f: f.median is not None and f.median <= limit


def worst_at_most(limit: float) -> Callable[[Figure], bool]:
    return lambda f: f.worst is not None and f.worst <= limit


def ratio_at_most(limit: float) -> Callable[[Figure], bool]:
    return lambda f: f.ratio is not None and f.ratio <= limit


def all_zero(f: Figure) -> bool:
    return all(s == 0 for s in f.samples)


# ------------------------------------------------------------------------- output


def _num(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "count":
        return f"{value:g}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}"


def table(figures: list[Figure]) -> str:
    """A plain-text table (also valid Markdown) of every figure."""
    head = ["figure", "runs", "median", "worst", "reference (median / worst)", "ratio",
            "target", ""]
    rows = [head]
    for f in figures:
        ref = "-"
        if f.ref_samples:
            ref = (f"{f.ref_title}: {_num(f.ref_median, f.unit)} / "
                   f"{_num(f.ref_worst, f.unit)} {f.unit}")
        elif f.ref_title:
            ref = f.ref_title
        rows.append([
            f.title,
            str(f.runs),
            f"{_num(f.median, f.unit)} {f.unit}",
            f"{_num(f.worst, f.unit)} {f.unit}",
            ref,
            f"{f.ratio:.2f}x" if f.ratio is not None else "-",
            f.target or "-",
            f.verdict,
        ])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def write_json(figures: list[Figure], name: str, **meta: object) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = RESULTS_DIR / f"{name}-{stamp}.json"
    data = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "loadavg": os.getloadavg(),
        },
        **meta,
        "figures": [f.to_json() for f in figures],
    }
    path.write_text(json.dumps(data, indent=2) + "\n")
    latest = RESULTS_DIR / f"{name}-latest.json"
    latest.write_text(path.read_text())
    return path
