"""Consecutive read-only calls (reads, searches) fold into one line of the transcript,
"Read 3 files, searched 2 patterns", as Claude Code folds them; Ctrl+O (or Enter or a
click on it) unfolds the run into its calls.

A run is the calls of the same depth that follow one another with nothing between
(no text, no other call). Its first call draws the line while it is folded, the others
draw nothing; a single call is never folded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text

from agent_tui.protocol.tool_names import facts
from agent_tui.ui.render.states import tool_look
from agent_tui.ui.widgets.transcript_blocks import ToolBlock

if TYPE_CHECKING:
    from textual.strip import Strip

    from agent_tui.ui.widgets.transcript_blocks import Block, Painter


def folds_as(name: str) -> tuple[str, str, str] | None:
    """(the verb of a tool's part of the line, what it counts: one, many), for a tool
    whose calls fold (its ``folds_as``); None for any other."""
    given = facts(name)
    return given.folds_as if given is not None else None


_WORST = ("failed", "denied", "unknown", "cancelled_while_running", "cancelled_before_start",
          "running", "awaiting_approval", "queued", "streaming")


@dataclass(eq=False)
class ReadRun:
    blocks: list[ToolBlock] = field(default_factory=list)
    folded: bool = True

    @property
    def hides(self) -> bool:
        return self.folded and len(self.blocks) > 1

    def words(self) -> str:
        counts: dict[tuple[str, str, str], int] = {}
        for block in self.blocks:
            key = folds_as(block.tool_name)
            assert key is not None  # only such tools' blocks join a run
            counts[key] = counts.get(key, 0) + 1
        verbs: dict[str, list[str]] = {}
        for (verb, one, many), n in counts.items():
            verbs.setdefault(verb, []).append(f"{n} {one if n == 1 else many}")
        text = ", ".join(f"{verb} {' and '.join(parts)}" for verb, parts in verbs.items())
        return text[:1].upper() + text[1:]

    def state(self) -> str:
        states = [block.state for block in self.blocks]
        return next((s for s in _WORST if s in states), states[-1])

    def render(self, block: ToolBlock, painter: Painter) -> list[Strip]:
        """The lines ``block`` draws while the run is folded (the line, or nothing)."""
        if block is not self.blocks[0]:
            return []
        look = tool_look(self.state())
        muted = painter.role("text-muted")
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("  " * block.depth + ("↳ " if block.depth else ""), style=muted)
        line.append("▸ ", style=muted)
        line.append(f"{look.symbol} ", style=painter.role(look.role, bold=True))
        line.append(self.words(), style="bold")
        line.append("  (ctrl+o to unfold)", style=muted)
        return painter.frame(painter.render(line, painter.width - 2)[:1])


def join(blocks: list[Block], new: ToolBlock) -> ReadRun | None:
    """Put ``new`` (about to be added after ``blocks``) in the run the last block is in,
    or start one with it; the run whose lines change, if any."""
    if folds_as(new.tool_name) is None or not blocks:
        return None
    last = blocks[-1]
    if not isinstance(last, ToolBlock) or folds_as(last.tool_name) is None or last.depth != new.depth:
        return None
    if last.run is not None and not last.run.folded:
        return None  # the user unfolded that run: a new call starts no fold in it
    run = last.run if isinstance(last.run, ReadRun) else ReadRun([last])
    last.run = new.run = run
    run.blocks.append(new)
    return run
