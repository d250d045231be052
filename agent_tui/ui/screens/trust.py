"""The trust dialog: the first time agent-tui opens a folder whose own files would
change what runs, the user says whether to trust it, before the session starts.

Shown before the core builds the session (``AgentApp`` waits for the answer). ``y`` /
``1`` trusts the folder (remembered for it), ``n`` / ``2`` / Esc goes on without trust:
the folder's deny and ask rules and its hooks still apply, what it would grant does
not. An answer never comes from type-ahead: keys answer only once the dialog has been
shown for ``ARM_DELAY`` seconds (Esc, which grants nothing, always works).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from agent_tui.ui.render.safe_text import clean

#: Seconds the dialog must be shown before a key other than Esc answers it.
ARM_DELAY = 0.5


@dataclass
class TrustQuestion:
    """What the dialog asks about, and where its answer goes (True: trusted)."""

    workspace: Path
    found: list[str] = field(default_factory=list)  # the folder's own files, as names
    answer: Callable[[bool], None] = lambda yes: None


class TrustScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    TrustScreen { align: center middle; }
    TrustScreen > #trust {
        width: 90%;
        max-width: 90;
        height: auto;
        border: thick $warning;
        background: $surface;
        padding: 0 1;
    }
    TrustScreen #title { text-style: bold; color: $warning; }
    TrustScreen #body { margin: 1 0 0 0; }
    TrustScreen #keys { margin: 1 0 0 0; }
    """

    BINDINGS = [Binding("escape", "answer(False)", "no", show=False)]

    def __init__(self, question: TrustQuestion, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.question = question
        self._clock = clock
        self._shown_at = clock()

    def compose(self) -> ComposeResult:
        with Vertical(id="trust"):
            yield Static("Do you trust the files in this folder?", id="title")
            yield Static(self._body(), id="body")
            yield Static(self._keys(), id="keys")

    def _body(self) -> Text:
        text = Text()
        text.append(clean(str(self.question.workspace)), style="bold")
        text.append("\n\nIt holds its own configuration: ")
        text.append(", ".join(clean(name) for name in self.question.found) or "none")
        text.append(
            ".\nTrusted, its settings may allow commands, set variables for them, turn "
            "the sandbox on and choose the permission mode, as your own do. Not trusted, "
            "it can only take away: its deny and ask rules apply and its hooks run; the "
            "rest is ignored and named.\nOnly trust a folder whose files you have read "
            "or whose authors you trust.")
        return text

    @staticmethod
    def _keys() -> Text:
        keys = Text()
        keys.append("1/y", style="bold")
        keys.append(" yes, trust this folder (remembered)   ")
        keys.append("2/n/esc", style="bold")
        keys.append(" no, go on without its settings")
        return keys

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            return  # the binding answers
        event.stop()
        if self._clock() - self._shown_at < ARM_DELAY:
            return  # type-ahead never answers
        if event.key in ("1", "y"):
            self.action_answer(True)
        elif event.key in ("2", "n"):
            self.action_answer(False)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def ask_trust(app: App[Any], question: TrustQuestion | None, then: Callable[[], object]) -> None:
    """Ask ``question`` in the dialog, if there is one, then ``then`` (the core starts)."""
    if question is None:
        then()
        return

    def answered(yes: bool | None) -> None:
        question.answer(bool(yes))
        then()

    app.push_screen(TrustScreen(question), answered)
