"""How each tool-call and turn state looks: a symbol, a word, and a colour role.

A state is never shown by colour alone: the symbol and the word carry the meaning,
the colour (a theme role, resolved against the running theme) only helps.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style

from agent_tui.protocol import ToolState, TurnState
from agent_tui.protocol.states import PlanItemState
from agent_tui.protocol.tool_names import ResultShown, facts_of
from agent_tui.ui.render.safe_text import clean


@dataclass(frozen=True)
class Look:
    symbol: str
    word: str
    role: str  # a theme variable name: success, error, warning, accent, text-muted ...


TOOL_LOOKS: dict[ToolState, Look] = {
    ToolState.STREAMING: Look("…", "receiving", "text-muted"),
    ToolState.QUEUED: Look("○", "queued", "text-muted"),
    ToolState.AWAITING_APPROVAL: Look("?", "awaiting approval", "warning"),
    ToolState.RUNNING: Look("▶", "running", "primary"),
    ToolState.SUCCEEDED: Look("✓", "succeeded", "success"),
    ToolState.FAILED: Look("✗", "failed", "error"),
    ToolState.DENIED: Look("⊘", "denied", "warning"),
    ToolState.CANCELLED_BEFORE_START: Look("–", "cancelled before start", "text-muted"),
    ToolState.CANCELLED_WHILE_RUNNING: Look("■", "cancelled while running", "warning"),
    ToolState.UNKNOWN: Look("‽", "unknown", "error"),
}

TURN_LOOKS: dict[TurnState | str, Look] = {
    "idle": Look("·", "idle", "text-muted"),
    TurnState.RUNNING: Look("▶", "running", "primary"),
    TurnState.CANCELLING: Look("◼", "stopping", "warning"),
    TurnState.CANCELLED: Look("■", "cancelled", "warning"),
    TurnState.COMPLETED: Look("✓", "completed", "success"),
    TurnState.FAILED: Look("✗", "failed", "error"),
}

STEER_LOOKS: dict[str, Look] = {
    "queued": Look("…", "queued", "warning"),
    "edited": Look("…", "queued (edited)", "warning"),
    "applied": Look("✓", "applied", "success"),
    "returned": Look("↩", "returned to input", "text-muted"),
    "removed": Look("✗", "removed", "text-muted"),
    # asked of the core, not answered yet
    "editing": Look("✎", "editing…", "accent"),
    "removing": Look("✗", "removing…", "accent"),
}

PLAN_LOOKS: dict[PlanItemState, Look] = {
    PlanItemState.PENDING: Look("○", "pending", "text-muted"),
    PlanItemState.IN_PROGRESS: Look("▶", "in progress", "primary"),
    PlanItemState.COMPLETED: Look("✓", "done", "success"),
    PlanItemState.INTERRUPTED: Look("■", "interrupted", "warning"),
}

def shows_headline(name: str) -> bool:
    """Whether the tool's result's first line is its outcome in the tools pane (a
    headline such as "Found 12 matching lines in 3 files"), where other tools show an
    exit code (``Tool.result_shown``)."""
    return facts_of(name).result_shown is ResultShown.HEADLINE

NOTICE_ROLES = {"info": "text-muted", "warning": "warning", "error": "error"}


def tool_look(state: ToolState | str) -> Look:
    try:
        return TOOL_LOOKS[ToolState(state)]
    except ValueError:
        return Look("?", str(state), "text")


def role_style(variables: dict[str, str], role: str, *, bold: bool = False) -> Style:
    """A Rich style for a theme role (``app.theme_variables``); plain if unknown."""
    if role == "text-muted":  # Textual gives "auto 60%", which Rich cannot use
        return Style(dim=True, bold=bold)
    color = variables.get(role)
    try:
        return Style(color=color, bold=bold) if color else Style(bold=bold)
    except Exception:  # a colour Rich cannot parse (e.g. with alpha): use no colour
        return Style(bold=bold)


def exit_words(signal: str | None, exit_code: int | None) -> list[str]:
    """How a process ended, in words: ["signal SIGTERM", "exit -15"] (what is known)."""
    words = [f"signal {clean(signal)}"] if signal else []
    if exit_code is not None:
        words.append(f"exit {exit_code}")
    return words
