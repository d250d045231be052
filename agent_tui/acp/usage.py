"""Usage over ACP: after each model request, a ``usage_update`` with the context the
conversation fills now (the latest main-conversation request's input, cache and
output tokens) out of the model's window, and the session's cost so far in USD (every
request's, sub-agents' and compaction's too; left out while a model's price is
unknown)."""

from __future__ import annotations

from acp.schema import Cost, UsageUpdate

from agent_tui.protocol import Usage
from agent_tui.protocol.states import RequestPurpose


class UsageTracker:
    def __init__(self) -> None:
        self.used = 0
        self.size = 0
        self.spent = 0.0
        self.priced = True

    def update(self, event: Usage) -> UsageUpdate:
        """The update to send for one request's usage."""
        if event.cost_usd is None:
            self.priced = False
        else:
            self.spent += event.cost_usd
        if event.parent_tool_use_id is None and event.purpose is RequestPurpose.TURN:
            self.used = (event.input_tokens + event.cache_read_input_tokens
                         + event.cache_creation_input_tokens + event.output_tokens)
            self.size = event.context_window or self.size
        cost = Cost(amount=round(self.spent, 6), currency="USD") if self.priced else None
        return UsageUpdate(session_update="usage_update", used=self.used, size=self.size, cost=cost)


__all__ = ["UsageTracker"]
