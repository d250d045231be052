"""Each model request's usage: a journal record and a ``usage`` event with its cost.

The counts are the API's own (``message_start``, then the cumulative
``message_delta``). A request the user interrupted is billed too: it is reported with
what ``message_start`` said and the output so far, marked interrupted. The meter also
remembers the last turn request's size, which decides automatic compaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_tui.core.journal.records import UsageRecord
from agent_tui.core.usage.pricing import PriceTable
from agent_tui.protocol import Event, RequestPurpose, Usage
from agent_tui.providers.base import UsageCounts

# Compact before the next request once the last one filled this share of the window
# (its input, cached or not, plus its output). docs/compaction.md says why.
COMPACT_AT = 0.85


class UsageMeter:
    def __init__(self, prices: PriceTable | None = None,
                 on_cost: Callable[[str, float | None], None] | None = None) -> None:
        self.prices = prices or PriceTable()
        self.on_cost = on_cost  # the run's spending cap counts every request
        self.last: UsageCounts | None = None  # the last request of purpose "turn"

    def report(
        self,
        record: Callable[[Any], bool],
        emit: Callable[[Event], None],
        *,
        turn_id: str,
        model: str,
        counts: UsageCounts,
        interrupted: bool,
        purpose: RequestPurpose,
        window: int | None,
        parent_tool_use_id: str | None = None,
        stop_reason: str | None = None,
    ) -> None:
        cost = self.prices.cost(
            model,
            input_tokens=counts.input_tokens,
            output_tokens=counts.output_tokens,
            cache_read_input_tokens=counts.cache_read_input_tokens,
            cache_creation_input_tokens=counts.cache_creation_input_tokens,
            web_search_requests=counts.web_search_requests,
        )
        if self.on_cost is not None:
            self.on_cost(model, cost)
        fields = counts.model_dump()
        record(UsageRecord(turn_id=turn_id, model=model, interrupted=interrupted,
                           purpose=purpose, cost_usd=cost, **fields))
        emit(Usage(turn_id=turn_id, model=model, interrupted=interrupted, purpose=purpose,
                   cost_usd=cost, context_window=window,
                   parent_tool_use_id=parent_tool_use_id, stop_reason=stop_reason, **fields))
        if purpose is RequestPurpose.TURN:
            self.last = counts

    def forget(self) -> None:
        """After a compaction or a clear: the last size no longer says anything."""
        self.last = None

    def needs_compaction(self, window: int) -> bool:
        last = self.last
        if last is None or window <= 0:
            return False
        return last.context_tokens + last.output_tokens >= COMPACT_AT * window
