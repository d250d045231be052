"""``make chaos`` in the suite: a fixed-seed run of both kinds of trial, in parallel
workers as ``make chaos`` runs them, against the strict fake API.

- 24 interrupt trials (scenario x Esc moment x second Esc; thinking streams among
  the scenarios), see bench/chaos_interrupts.py;
- 24 crash trials (a real agent process SIGKILLed, then ``--continue``; its session
  thinks and compacts), see bench/chaos_crash.py;
- every trial that ever failed (``REGRESSIONS``), run again.

Each must pass every check its kind makes. The seed is chosen so that every
interrupt scenario is drawn, Esc lands mid-thinking, and kills land
at each kind of crash point and within the compaction. The thousands of trials are
``make chaos``'s (docs/bench.md); the suite keeps a sample and every regression.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.chaos import trial_seeds
from bench.chaos_pool import run_parallel

SEED = 20261201
TRIALS = 24
JOBS = 3
# (kind, seed) of every trial that failed once; what it found is fixed and kept here.
REGRESSIONS = [
    ("crash", 444),  # the first line torn by a power cut: a clear refusal, nothing lost
    ("crash", 131595268495),  # killed in write_file: its temporary file stayed behind
    ("crash", 474240220605),  # the same, at the first checkpoint's write
    ("crash", 684994983091),  # the same, in the rewind's restore
    ("crash", 200556811132),  # the same, killed 10 ms after the point went on
    ("crash", 801770843531),  # killed in git update-index: its lock blocked every snapshot
    ("crash", 404207680799),  # the same, in git write-tree
    ("crash", 738323938603),  # killed in git init: a half-made shadow repository
    ("crash", 505991592024),  # a notice mid-resume ended the resume early (the trial's own)
    # Esc after a whole thinking block, before the reply's next block: the model view
    # sent an assistant message ending with thinking (400), in a first and a second step
    ("interrupt", 39073268764),
    ("interrupt", 767387276588),
]


def _failures(outcomes: list[Any]) -> str:
    return "\n".join(f"{o.kind}:{o.seed} ({o.plan}): " + "; ".join(o.failures)
                     for o in outcomes if o.failures)


@pytest.fixture(scope="module")
def outcomes() -> list[Any]:
    work = [(kind, seed) for n, kind in enumerate(("interrupt", "crash"))
            for seed in trial_seeds(SEED + n, TRIALS)]
    return run_parallel([*work, *REGRESSIONS], JOBS, lambda outcome: None)


@pytest.mark.timeout(900)
def test_random_interrupts_leave_a_consistent_session_and_no_processes(
        outcomes: list[Any]) -> None:
    regressions = {seed for _, seed in REGRESSIONS}
    mine = [o for o in outcomes if o.kind == "interrupt" and o.seed not in regressions]
    assert len(mine) == TRIALS
    assert not any(o.failures for o in mine), _failures(mine)


@pytest.mark.timeout(900)
def test_random_crashes_resume_with_every_invariant_kept(outcomes: list[Any]) -> None:
    regressions = {seed for _, seed in REGRESSIONS}
    mine = [o for o in outcomes if o.kind == "crash" and o.seed not in regressions]
    assert len(mine) == TRIALS
    assert not any(o.failures for o in mine), _failures(mine)


@pytest.mark.timeout(900)
def test_every_trial_that_ever_failed_passes_again(outcomes: list[Any]) -> None:
    regressions = {seed for _, seed in REGRESSIONS}
    mine = [o for o in outcomes if o.seed in regressions]
    assert len(mine) == len(REGRESSIONS)
    assert not any(o.failures for o in mine), _failures(mine)


def test_the_seed_draws_every_scenario_and_every_kind_of_kill(outcomes: list[Any]) -> None:
    from bench.chaos_crash import make_plan as crash_plan
    from bench.chaos_interrupts import SCENARIOS, make_plan

    assert {make_plan(s).scenario for s in trial_seeds(SEED, TRIALS)} == set(SCENARIOS)
    plans = [crash_plan(s) for s in trial_seeds(SEED + 1, TRIALS)]
    assert {p.mode for p in plans} == {"point", "time", "compaction"}
    assert any(p.tear for p in plans) and any(p.delay is not None for p in plans)
    landed = {o.status.split()[0] for o in outcomes if o.kind == "crash"}
    assert {"journal.write", "journal.fsync", "git", "timer"} <= landed, landed
    in_compaction = {o.status.split()[0] for o in outcomes
                     if o.kind == "crash" and "(in the compaction)" in o.status}
    assert {"compaction", "journal.write", "journal.fsync"} <= in_compaction, in_compaction
    assert any(o.where == "thinking_delta" for o in outcomes if o.kind == "interrupt")
