"""An MCP server asks the user something (elicitation): a form, or a page to open.

A form shows one field per line (its title, what it takes, ``*`` when required); Enter
goes to the next field and sends the form from the last one, after checking each value
against the server's schema (a field in error says why, and nothing is sent). A URL
shows the server's message and the whole address, so the user sees where it leads; y
opens it (accept), n declines.

Esc cancels (the server is told ``cancel``); ctrl+r declines a form. When the server
withdraws its question (the call was cancelled), the dialog closes by itself
(:class:`ElicitationScreen.Withdrawn`). An answer never comes from type-ahead: Enter and
y answer only once the dialog has been shown for ``ARM_DELAY`` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from agent_tui.mcp_catalog.elicitation import (
    ElicitAction,
    ElicitAnswer,
    Elicitation,
    ElicitMode,
    FieldKind,
    FormField,
    Value,
    check,
    parse_value,
)
from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.screens.permission import ARM_DELAY

_HINTS = {
    FieldKind.STRING: "text",
    FieldKind.NUMBER: "a number",
    FieldKind.INTEGER: "a whole number",
    FieldKind.BOOLEAN: "yes or no",
}


class ElicitationScreen(ModalScreen[ElicitAnswer | None]):
    DEFAULT_CSS = """
    ElicitationScreen { align: center middle; }
    ElicitationScreen > #dialog {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 90%;
        border: thick $accent;
        background: $surface;
        padding: 0 1;
    }
    ElicitationScreen #title { text-style: bold; color: $accent; }
    ElicitationScreen #message { margin: 1 0 0 0; }
    ElicitationScreen #url { margin: 1 0 0 0; text-style: bold; }
    ElicitationScreen #fields { height: auto; max-height: 30; }
    ElicitationScreen .label { margin: 1 0 0 0; }
    ElicitationScreen .problem { color: $error; display: none; }
    ElicitationScreen .problem.shown { display: block; }
    ElicitationScreen Input { height: 3; }
    ElicitationScreen #keys { margin: 1 0 0 0; color: $text-muted; }
    """

    BINDINGS = [
        Binding("escape", "cancel", "cancel", show=False, priority=True),
        Binding("ctrl+r", "decline", "decline", show=False, priority=True),
        Binding("y", "open_url", "open", show=False),
        Binding("n", "url_decline", "decline", show=False),
    ]

    class Withdrawn(Message):
        """The server no longer waits for the answer."""

    def __init__(self, request: Elicitation, *, clock: Callable[[], float] = time.monotonic,
                 title: str | None = None, border: str = "MCP question") -> None:
        super().__init__()
        self.request = request
        self.title_text = title or f"MCP server {clean(request.server)} asks"
        self.border_text = border
        self._clock = clock
        self._shown_at: float | None = None
        self.answer: ElicitAnswer | None = None

    @property
    def is_form(self) -> bool:
        return self.request.mode is ElicitMode.FORM

    def compose(self) -> ComposeResult:
        req = self.request
        with Vertical(id="dialog"):
            yield Static(Text(self.title_text), id="title")
            yield Static(Text(clean(req.message)), id="message")
            if self.is_form:
                with VerticalScroll(id="fields"):
                    for index, field in enumerate(req.fields):
                        yield Static(self._label(field), classes="label")
                        yield Input(value=_shown(field.default), placeholder=self._hint(field),
                                    id=f"field-{index}", password=field.secret)
                        yield Static("", classes="problem", id=f"problem-{index}")
                keys = "[enter] next field, sends from the last   [ctrl+r] decline   [esc] cancel"
            else:
                yield Static(Text(clean(req.url or "")), id="url")
                keys = "[y] open it in your browser   [n] decline   [esc] cancel"
            yield Static(Text(keys), id="keys")

    def on_mount(self) -> None:
        self.query_one("#dialog").border_title = self.border_text
        self._shown_at = self._clock()
        inputs = list(self.query(Input))
        if inputs:
            inputs[0].focus()

    @property
    def armed(self) -> bool:
        return self._shown_at is not None and self._clock() - self._shown_at >= ARM_DELAY

    def _label(self, field: FormField) -> Text:
        text = Text(clean(field.label), style="bold")
        if field.required:
            text.append(" *")
        if field.description:
            text.append(f"  {clean(field.description)}", style="italic")
        if field.choices:
            text.append(f"  ({', '.join(clean(c) for c in field.choices)})")
        return text

    def _hint(self, field: FormField) -> str:
        if field.kind in (FieldKind.CHOICE, FieldKind.CHOICES):
            shown = [clean(c) for c in field.choices]
            return ("one of: " if field.kind is FieldKind.CHOICE else "comma-separated, of: ") + ", ".join(shown)
        return _HINTS[field.kind]

    # -- answering ------------------------------------------------------------------

    def _answer(self, answer: ElicitAnswer) -> None:
        if self.answer is None:
            self.answer = answer
            self.dismiss(answer)

    def action_cancel(self) -> None:
        self._answer(ElicitAnswer(action=ElicitAction.CANCEL))

    def action_decline(self) -> None:
        self._answer(ElicitAnswer(action=ElicitAction.DECLINE))

    def action_url_decline(self) -> None:
        self.action_decline()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("open_url", "url_decline"):
            return not self.is_form  # in a form, y and n are letters for its fields
        return True

    def action_open_url(self) -> None:
        if not self.is_form and self.armed:
            self._answer(ElicitAnswer(action=ElicitAction.ACCEPT))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        inputs = list(self.query(Input))
        at = inputs.index(event.input) if event.input in inputs else len(inputs) - 1
        if at < len(inputs) - 1:
            inputs[at + 1].focus()
            return
        if self.armed:
            self._send(inputs)

    def _send(self, inputs: list[Input]) -> None:
        content: dict[str, Value] = {}
        problems: dict[str, str] = {}
        for field, box in zip(self.request.fields, inputs, strict=True):
            try:
                content[field.name] = parse_value(field, box.value)
            except ValueError as exc:
                problems[field.name] = str(exc) or "not understood"
        content = {k: v for k, v in content.items() if v is not None}
        problems = {**check(self.request.fields, content), **problems}
        for index, field in enumerate(self.request.fields):
            problem = self.query_one(f"#problem-{index}", Static)
            problem.update(Text(problems.get(field.name, "")))
            problem.set_class(field.name in problems, "shown")
        if problems:
            first = next(i for i, f in enumerate(self.request.fields) if f.name in problems)
            inputs[first].focus()
            return
        self._answer(ElicitAnswer(action=ElicitAction.ACCEPT, content=content))

    def on_elicitation_screen_withdrawn(self, _message: Withdrawn) -> None:
        if self.answer is None:
            self.answer = ElicitAnswer(action=ElicitAction.CANCEL)
            self.dismiss(None)


def _shown(value: Value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(value)
    return str(value)


__all__ = ["ElicitationScreen"]
