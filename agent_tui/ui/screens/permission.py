"""The permission prompt: one tool call waits for the user's word.

A plan (``exit_plan_mode``) is shown whole, with the same keys worded for it: y
approves and goes on asking before changes, a approves and accepts edits, n keeps
planning.

y / Enter allow once, a allow for the session, n / Esc deny, d deny with a note
(type it, Enter sends). An edit shows its diff (``ui/render/diffs.py``) before the user
decides. The answer goes to the core as a ``Decide`` op. When the
call stops waiting by itself (the turn was interrupted), the app dismisses the
prompt without an answer.

An answer never comes from type-ahead: the prompt takes answer keys only once it has
been on screen for ``ARM_DELAY`` seconds with no key pressed (before or after it
opened). Until then letters typed go on into the message input underneath, and
other keys are ignored; Esc (deny, never a grant) always works.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from agent_tui.protocol import Decide, PermissionRequested
from agent_tui.protocol import Decision
from agent_tui.ui.render.diffs import FileDiff
from agent_tui.ui.render.diffs import render as render_diff
from agent_tui.ui.render.diffs import summary as diff_summary
from agent_tui.ui.render.safe_text import clean, full_summary
from agent_tui.ui.render.states import role_style

_INPUT_PREVIEW_LINES = 8
PLAN_TOOL = "exit_plan_mode"
KEYS = (
    ("y/enter", "allow once", "success"),
    ("a", "allow for session", "success"),
    ("n/esc", "deny", "error"),
    ("d", "deny with note", "error"),
)
# The same answers for a plan: "allow for session" goes on in accept-edits.
PLAN_KEYS = (
    ("y/enter", "approve, ask before changes", "success"),
    ("a", "approve, accept edits", "success"),
    ("n/esc", "keep planning", "error"),
    ("d", "keep planning, with a note", "error"),
)
#: Seconds the prompt must be shown, with no key pressed, before a key answers it.
ARM_DELAY = 0.5


class PermissionScreen(ModalScreen[Decide | None]):
    DEFAULT_CSS = """
    PermissionScreen { align: center middle; }
    PermissionScreen > #dialog {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 90%;
        border: thick $warning;
        background: $surface;
        padding: 0 1;
    }
    PermissionScreen #title { text-style: bold; color: $warning; }
    PermissionScreen #summary { margin: 1 0 0 0; }
    PermissionScreen #input { color: $text-muted; max-height: 10; }
    PermissionScreen #diff { height: auto; max-height: 20; margin: 1 0 0 0; }
    PermissionScreen #keys { margin: 1 0 0 0; }
    PermissionScreen #note { margin: 1 0 0 0; }
    PermissionScreen #plan { height: auto; max-height: 24; margin: 1 0 0 0; }
    """

    BINDINGS = [
        Binding("y,enter", "allow_once", "allow once", show=False),
        Binding("a", "allow_session", "allow for session", show=False),
        Binding("n,escape", "deny", "deny", show=False),
        Binding("d", "deny_with_note", "deny with note", show=False),
    ]

    # The note field exists only after "d": a focused field would swallow y / a / n.
    AUTO_FOCUS = None

    def __init__(
        self,
        request: PermissionRequested,
        decide: Callable[[Decide], None],
        diff: FileDiff | None = None,
        *,
        type_ahead: Callable[[str], object] = lambda _text: None,
        typed_at: float = float("-inf"),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``type_ahead`` takes the letters typed before the prompt may answer (the app
        puts them in its input); ``typed_at`` is when the latest key before it was
        pressed (``clock``'s time)."""
        super().__init__()
        self.request = request
        self.diff = diff  # an edit's change, shown instead of its raw input
        self._decide = decide
        self.decided: Decide | None = None
        self._type_ahead = type_ahead
        self._clock = clock
        self._last_key = typed_at
        self._shown_at: float | None = None

    @property
    def tool_use_id(self) -> str:
        return self.request.tool_use_id

    @property
    def is_plan(self) -> bool:
        """The model presents a plan (exit_plan_mode): approving it leaves plan mode."""
        return self.request.name == PLAN_TOOL

    def compose(self) -> ComposeResult:
        req = self.request
        if self.is_plan:
            yield from self._compose_plan()
            return
        with Vertical(id="dialog"):
            yield Static(Text(f"Allow {clean(req.name)}?"), id="title")
            summary = Text(full_summary(req.name, req.summary) or clean(req.name))
            yield Static(summary, id="summary")
            if req.reason:
                yield Static(Text("why asked: " + clean(req.reason)), id="reason")
            if self.diff is not None:
                with VerticalScroll(id="diff"):
                    yield Static(Text(diff_summary(self.diff), style="bold"), id="diff-summary")
                    yield Static(render_diff(self.diff, self.app.theme_variables), id="diff-lines")
            else:
                preview = self._input_preview()
                if preview:
                    yield Static(Text(preview), id="input")
            yield Static(self._keys_text(), id="keys")

    def _compose_plan(self) -> ComposeResult:
        plan = self.request.input.get("plan") if isinstance(self.request.input, dict) else None
        with Vertical(id="dialog"):
            yield Static(Text("Approve this plan? Plan mode ends and the changes begin."),
                         id="title")
            with VerticalScroll(id="plan"):
                yield Static(Text(clean(str(plan or self.request.summary))), id="plan-text")
            yield Static(self._keys_text(), id="keys")

    def on_mount(self) -> None:
        self.query_one("#dialog").border_title = "plan" if self.is_plan else "permission"
        self._shown_at = self._clock()

    @property
    def armed(self) -> bool:
        """Whether a key now answers: shown, and no key for ARM_DELAY seconds."""
        if self._shown_at is None:
            return False
        return self._clock() - max(self._shown_at, self._last_key) >= ARM_DELAY

    async def on_key(self, event: events.Key) -> None:
        if event.key == "escape" or self.query("#note") or self.armed:
            return  # the bindings answer
        self._last_key = self._clock()  # still typing: the wait starts again
        event.stop()
        event.prevent_default()
        if event.is_printable and event.character:
            self._type_ahead(event.character)
        if not self.query("#typing"):
            await self.query_one("#dialog").mount(Static(Text(
                "you were typing: that went to the input. Answer once you have read this.",
                style="italic"), id="typing"))

    def _input_preview(self) -> str:
        try:
            text = json.dumps(self.request.input, indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(self.request.input)
        lines = clean(text).split("\n")
        if len(lines) <= 1 and not self.request.input:
            return ""
        if len(lines) > _INPUT_PREVIEW_LINES:
            lines = lines[:_INPUT_PREVIEW_LINES] + [f"… {len(lines) - _INPUT_PREVIEW_LINES} more lines"]
        return "\n".join(lines)

    def _keys_text(self) -> Text:
        variables = self.app.theme_variables
        out = Text()
        for key, what, role in (PLAN_KEYS if self.is_plan else KEYS):
            if out:
                out.append("   ")
            out.append(f"[{key}]", style=role_style(variables, role, bold=True))
            out.append(f" {what}")
        return out

    def _answer(self, decision: Decision, note: str = "") -> None:
        if self.decided is not None:
            return
        self.decided = Decide(tool_use_id=self.tool_use_id, decision=decision, note=note)
        self._decide(self.decided)
        self.dismiss(self.decided)

    def action_allow_once(self) -> None:
        self._answer(Decision.ALLOW_ONCE)

    def action_allow_session(self) -> None:
        self._answer(Decision.ALLOW_SESSION)

    def action_deny(self) -> None:
        notes = self.query("#note").results(Input)
        note = next(notes, None)
        self._answer(Decision.DENY, note.value.strip() if note is not None else "")

    async def action_deny_with_note(self) -> None:
        if self.query("#note"):
            return
        note = Input(placeholder="note for the model (Enter denies with it, Esc denies)", id="note")
        await self.query_one("#dialog").mount(note)
        note.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._answer(Decision.DENY, event.value.strip())
