"""The model requests of one run: how many the agent made, how long their answers took
to arrive, what they cost, and the most it may make (``--max-turns``) or spend
(``--max-budget-usd``, ``maxBudgetUsd``).

A request is one step of the agent loop: a retry of the same step is not another one,
nor is a compaction's summary request. Only the main agent's steps count (a
sub-agent's are part of the ``task`` call that started it); the time counts every
agent's. When the limit is reached the turn ends before the next request, as failed,
with the tool results of the last step kept: the journal stays a valid conversation.
"""

from __future__ import annotations

from dataclasses import dataclass


class LimitReached(Exception):
    """The run has made as many model requests as it may."""


class BudgetReached(LimitReached):
    """The run has spent what it may (or a price is unknown, so the spend is)."""


@dataclass
class RequestBudget:
    limit: int | None = None  # None: no limit
    made: int = 0
    api_seconds: float = 0.0
    stopped: bool = False  # the limit ended a turn
    max_usd: float | None = None  # None: no spending cap
    spent_usd: float = 0.0
    unpriced: str | None = None  # a model whose request cost is unknown
    over_budget: bool = False  # the cap ended a turn

    def charge(self, model: str, cost: float | None) -> None:
        """After each request of any purpose, its cost (None: unknown)."""
        if cost is None:
            self.unpriced = self.unpriced or model
        else:
            self.spent_usd += cost

    def check_spend(self, model: str, priced: bool) -> None:
        """Before any request to ``model``: with a cap, raise :class:`BudgetReached` once
        the spend reached it, or when it cannot be known (an unknown price is never 0)."""
        cap = self.max_usd
        if cap is None:
            return
        why = None
        if not priced:
            self.unpriced = self.unpriced or model
        if self.unpriced is not None:
            why = (f"the price of {self.unpriced} is unknown, so the spend cannot be held "
                   f"under --max-budget-usd {cap:g} (give it a price in the provider's "
                   "settings)")
        elif self.spent_usd >= cap:
            why = (f"reached the spending cap: ${self.spent_usd:.4f} of ${cap:g} "
                   "(--max-budget-usd / maxBudgetUsd); no more requests are sent")
        if why is not None:
            self.over_budget = True
            raise BudgetReached(why)

    def spend(self) -> None:
        """Before a step's request: count it, or raise :class:`LimitReached`."""
        if self.limit is not None and self.made >= self.limit:
            self.stopped = True
            raise LimitReached(
                f"reached the limit of {self.limit} model request"
                f"{'s' if self.limit != 1 else ''} for this run (--max-turns {self.limit})"
            )
        self.made += 1
