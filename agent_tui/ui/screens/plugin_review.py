"""What a plugin will run, shown before it is enabled (``/plugin enable``, ``/plugin
install``): its hooks, its MCP servers and its commands' ``!`` lines, as ``agent-tui
plugin enable`` prints them (``plugins/review.py``). It scrolls; ``y`` enables, ``n``
or Esc does not. Dismissed with True for a yes.

``y`` counts only once the dialog has been shown for ``ARM_DELAY`` seconds, as in the
permission prompt: a key typed ahead is no yes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.screens.permission import ARM_DELAY


def home_short(line: str) -> str:
    """``line`` with the home folder's paths written ``~/...``."""
    home = str(Path.home()).rstrip("/")
    return line.replace(home + "/", "~/") if home else line


class PluginReviewScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    PluginReviewScreen { align: center middle; }
    PluginReviewScreen > #dialog {
        width: 100;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: thick $warning;
        background: $surface;
        padding: 0 1;
    }
    PluginReviewScreen #review { height: auto; max-height: 20; }
    PluginReviewScreen #keys { margin: 1 0 0 0; }
    """

    BINDINGS = [
        Binding("y", "answer(True)", "enable", show=False),
        Binding("n,escape", "answer(False)", "don't", show=False),
    ]

    def __init__(self, plugin_id: str, lines: list[str], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.plugin_id = plugin_id
        self.lines = lines
        self._clock = clock
        self._shown_at: float | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            with VerticalScroll(id="review"):
                yield Static(Text("\n".join(clean(home_short(line)) for line in self.lines)))
            question = Text(f"Enable {clean(self.plugin_id)}? ", style="bold")
            question.append("[y] yes, new sessions use it   [n] / esc no", style="dim")
            yield Static(question, id="keys")

    def on_mount(self) -> None:
        self.query_one("#dialog").border_title = "enable a plugin: what it will run"
        self._shown_at = self._clock()

    @property
    def armed(self) -> bool:
        return self._shown_at is not None and self._clock() - self._shown_at >= ARM_DELAY

    def plain(self) -> str:
        return "\n".join(self.lines)

    def action_answer(self, yes: bool) -> None:
        if yes and not self.armed:
            return  # typed ahead: not an answer
        self.dismiss(yes)
