"""The model requests of one run: how many the agent made, how long their answers took
to arrive, and the most it may make (``--max-turns``).

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


@dataclass
class RequestBudget:
    limit: int | None = None  # None: no limit
    made: int = 0
    api_seconds: float = 0.0
    stopped: bool = False  # the limit ended a turn

    def spend(self) -> None:
        """Before a step's request: count it, or raise :class:`LimitReached`."""
        if self.limit is not None and self.made >= self.limit:
            self.stopped = True
            raise LimitReached(
                f"reached the limit of {self.limit} model request"
                f"{'s' if self.limit != 1 else ''} for this run (--max-turns {self.limit})"
            )
        self.made += 1
