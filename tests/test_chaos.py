"""A fixed-seed chaos run as part of ``make test``: 30 random trials (scenario x Esc
moment x second Esc) against the strict fake API must all pass. See bench/chaos_interrupts.py."""

from __future__ import annotations

import asyncio

from bench.chaos import trial_seeds
from bench.chaos_interrupts import run_trials

SEED = 20261129
TRIALS = 30


def test_thirty_random_interrupts_leave_a_consistent_session_and_no_processes() -> None:
    outcomes = asyncio.run(run_trials(trial_seeds(SEED, TRIALS)))
    failed = [o for o in outcomes if o.failures]
    assert len(outcomes) == TRIALS
    assert not failed, "\n".join(
        f"seed {o.seed} ({o.plan}): " + "; ".join(o.failures) for o in failed
    )


def test_every_scenario_is_drawn_with_this_seed() -> None:
    from bench.chaos_interrupts import SCENARIOS, make_plan

    drawn = {make_plan(seed).scenario for seed in trial_seeds(SEED, TRIALS)}
    assert drawn == set(SCENARIOS)
