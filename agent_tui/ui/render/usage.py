"""What the session's model requests used, from ``usage`` events (and, for a resumed
session, the ``usage`` records of its journal): per turn, with interrupted requests
counted apart (they are billed too), the session's totals, and the context in use.

The context in use is the last request of purpose ``turn`` of the main agent (not a
sub-agent's, not a compaction's): its input, cache read and cache creation tokens,
against its context window. A completed compaction sets it to the tokens after; a
cleared conversation to nothing. A request whose price is unknown (``cost_usd`` None)
makes every sum of money "unknown price", never a number that is too low.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_tui.protocol.states import RequestPurpose

if TYPE_CHECKING:
    from agent_tui.protocol import Usage


@dataclass
class Totals:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cost_usd: float = 0.0
    unpriced: int = 0  # requests whose price is unknown
    web_search_requests: int = 0  # searches the API ran (billed per search, in cost_usd)
    estimated: int = 0  # requests whose input is agent-tui's estimate

    def add(self, usage: Usage) -> None:
        self.requests += 1
        self.estimated += int(usage.estimated)
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_read_input_tokens += usage.cache_read_input_tokens
        self.cache_creation_input_tokens += usage.cache_creation_input_tokens
        self.web_search_requests += usage.web_search_requests
        if usage.cost_usd is None:
            self.unpriced += 1
        else:
            self.cost_usd += usage.cost_usd

    def merge(self, other: Totals) -> None:
        for name in ("requests", "input_tokens", "output_tokens", "cache_read_input_tokens",
                     "cache_creation_input_tokens", "cost_usd", "unpriced",
                     "web_search_requests", "estimated"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def tokens(self) -> int:
        return (self.input_tokens + self.output_tokens + self.cache_read_input_tokens
                + self.cache_creation_input_tokens)

    @property
    def price_known(self) -> bool:
        return self.unpriced == 0


@dataclass
class TurnUsage:
    turn_id: str
    finished: Totals = field(default_factory=Totals)  # requests that ran to their end
    interrupted: Totals = field(default_factory=Totals)
    compaction: Totals = field(default_factory=Totals)


@dataclass(frozen=True)
class ContextUse:
    used: int
    window: int | None


class UsageTally:
    def __init__(self) -> None:
        self.turns: dict[str, TurnUsage] = {}
        self.context: ContextUse | None = None
        self.window: int | None = None  # the latest context window heard of
        # lines the agent's edits added and removed, per call that succeeded
        self._lines: dict[str, tuple[int, int]] = {}

    def count_lines(self, call_id: str, added: int, removed: int) -> None:
        """A file edit that succeeded, counted once however often it is told."""
        self._lines[call_id] = (added, removed)

    @property
    def lines_added(self) -> int:
        return sum(added for added, _ in self._lines.values())

    @property
    def lines_removed(self) -> int:
        return sum(removed for _, removed in self._lines.values())

    def add(self, usage: Usage) -> None:
        turn = self.turns.get(usage.turn_id)
        if turn is None:
            turn = self.turns[usage.turn_id] = TurnUsage(usage.turn_id)
        if usage.interrupted:
            turn.interrupted.add(usage)
        elif usage.purpose is RequestPurpose.COMPACTION:
            turn.compaction.add(usage)
        else:
            turn.finished.add(usage)
        if usage.context_window:
            self.window = usage.context_window
        if usage.purpose is RequestPurpose.TURN and usage.parent_tool_use_id is None:
            used = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
            self.context = ContextUse(used, usage.context_window or self.window)

    def add_records(self, records: list[Any]) -> int:
        """A resumed session's ``usage`` journal records; how many were taken."""
        from agent_tui.protocol import Usage

        taken = 0
        for record in records:
            if getattr(record, "kind", None) != "usage":
                continue
            fields = {name: getattr(record, name) for name in Usage.model_fields
                      if name != "type" and hasattr(record, name)}
            try:
                self.add(Usage(**fields))
            except Exception:
                continue  # a record of another shape: not counted, nothing else lost
            taken += 1
        return taken

    def compacted(self, tokens_after: int) -> None:
        self.context = ContextUse(tokens_after, self.window)

    def cleared(self) -> None:
        self.context = None

    def set_window(self, window: int | None) -> None:
        if window:
            self.window = window
            if self.context is not None:
                self.context = ContextUse(self.context.used, window)

    def total(self) -> Totals:
        out = Totals()
        for turn in self.turns.values():
            out.merge(turn.finished)
            out.merge(turn.interrupted)
            out.merge(turn.compaction)
        return out

    def interrupted(self) -> Totals:
        out = Totals()
        for turn in self.turns.values():
            out.merge(turn.interrupted)
        return out


def tokens_short(n: int) -> str:
    """12, 1.2k, 45k, 1.2M."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def money(totals: Totals) -> str:
    if not totals.price_known:
        return "unknown price"
    if totals.cost_usd and totals.cost_usd < 0.01:
        return "<$0.01"
    return f"${totals.cost_usd:.2f}"
