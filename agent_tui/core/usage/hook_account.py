"""What a prompt hook's model request costs: the spending cap is checked before it is
sent, and its usage is recorded like any request's (purpose ``hook``).

A prompt hook (``"type": "prompt"``, ``hooks/prompt_hook.py``) asks the session's
provider outside a turn's request path; :class:`HookAccount` gives it the two things
that path does for money: ``refused`` (past ``--max-budget-usd``, or a price that is
unknown under a cap: the request is not sent, and the hook fails as one that could not
start) and ``report`` (a ``usage`` record and event, in ``/cost`` and the cap's sum, a
cut request marked interrupted).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_tui.core.journal.journal import Journal, JournalWriteError
from agent_tui.core.usage.budget import BudgetReached, RequestBudget
from agent_tui.core.usage.usage import UsageMeter
from agent_tui.protocol import Event, RequestPurpose
from agent_tui.providers.base import UsageCounts


class HookAccount:
    def __init__(self, budget: RequestBudget, meter: UsageMeter, journal: Journal,
                 emit: Callable[[Event], None]) -> None:
        self.budget, self.meter, self.journal, self.emit = budget, meter, journal, emit
        self.turn_id = ""  # the turn the hooks run in (:meth:`observe`), "" before one

    def observe(self, event: Any) -> None:
        """The session's events: which turn is the latest."""
        if getattr(event, "type", "") == "turn_started":
            self.turn_id = str(getattr(event, "turn_id", ""))

    def _record(self, record: Any) -> bool:
        try:
            self.journal.append(record)
        except JournalWriteError as exc:
            self.emit(exc.notice())
            return False
        return True

    def refused(self, model: str) -> str | None:
        """Why a request to ``model`` may not be sent now (None: it may)."""
        try:
            self.budget.check_spend(model, self.meter.prices.lookup(model) is not None)
        except BudgetReached as exc:
            return str(exc)
        return None

    def report(self, model: str, counts: UsageCounts, cut: bool) -> None:
        self.meter.report(self._record, self.emit, turn_id=self.turn_id, model=model,
                          counts=counts, interrupted=cut, purpose=RequestPurpose.HOOK,
                          window=None)
