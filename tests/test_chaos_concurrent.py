"""Concurrent-resume chaos in the suite: a fixed-seed run of two and three agents on one
session, some SIGKILLed (bench/chaos_concurrent.py), every invariant checked."""

from __future__ import annotations

import pytest

from bench.chaos import trial_seeds
from bench.chaos_pool import run_parallel

SEED = 20261201
TRIALS = 8


@pytest.mark.timeout(600)
def test_agents_on_one_session_fork_keep_their_own_journals_and_lose_nothing() -> None:
    outcomes = run_parallel([("concurrent", s) for s in trial_seeds(SEED, TRIALS)], 2,
                            lambda outcome: None)
    failed = [f"{o.seed} ({o.plan}): " + "; ".join(o.failures) for o in outcomes if o.failures]
    assert failed == []
    statuses = [o.status for o in outcomes]
    # The seed draws three agents, forks, and kills (a lock a kill must release).
    assert any(s.startswith("3 agents") for s in statuses), statuses
    assert sum(int(s.split(", ")[1].split()[0]) for s in statuses) >= TRIALS // 2, statuses
    assert sum(int(s.split(", ")[2].split()[0]) for s in statuses) >= 3, statuses
