"""The permission prompt: one tool call waits for the user's word.

It sits inline at the foot of the window, over the input, and the transcript stays
visible above it (the screen is see-through). It shows the call as a person reads it
(``call_preview.py``; an edit's numbered diff, ``ui/render/diff_view.py``; a
plan whole), why it asks (the rule or the mode), and numbered answers
(``approval_choices.py``): ``1. Yes``, ``2. Yes, and don't ask again for: npm test *``,
``3. No``. A digit answers at once; arrows move and Enter confirms; the old letters
still work (y allow once, a the second answer, n deny, d deny with a note). Esc (and
"No") denies and stops the turn, as in Claude Code (``approval_answer.py``).
Tab amends: a command is edited in place (Enter runs it as edited, checked by the
rules again), any other call gets a note for the model (Enter denies with it: the model
reads what to do instead). Shift+Tab on an edit allows it and accepts edits from now on; ctrl+o unfolds
a long diff, or a long command (any call folded, ``call_preview.py``), and folds it again; ctrl+e explains the call in plain words (``approval_explain.py``: read from
the call, not a model's opinion). PageUp, PageDown and the mouse wheel scroll the
transcript behind the prompt, as in Claude Code; the prompt keeps the focus and its keys.
While it is open the transcript is lifted so that its end sits just above it, and the
answers always show: what is asked scrolls above them when it needs more room.

The answer goes to the core as a ``Decide`` op (with the rules chosen to last); the app
saves those rules and switches the mode (``ui/app/overlays.py``). When the call stops
waiting by itself (the turn was interrupted), the app dismisses the prompt without an
answer.

It shows itself once it has fitted itself to the window and lifted the transcript, so
that neither moves under the reader's eyes. An answer never comes from type-ahead: the
prompt takes answer keys only once it has been on screen for ``ARM_DELAY`` seconds with no key pressed (before or after it
opened). Until then letters typed go on into the message input underneath, and
other answer keys are ignored; Esc (deny, never a grant) always works, and so do the
keys that answer nothing (:data:`FREE_KEYS`: scrolling, unfolding, explaining), which
do not restart the wait either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size, Spacing
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.widgets import Input, Static

from agent_tui.protocol import Decide, PermissionRequested
from agent_tui.protocol.tool_names import runs_command
from agent_tui.ui.screens import call_preview
from agent_tui.ui.render.diff_view import render as render_diff
from agent_tui.ui.render.diffs import FileDiff, Tense
from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.render.states import role_style
from agent_tui.ui.screens.approval_choices import (
    Act, Choice, choices_for, leaves_plan, question, why)
from agent_tui.ui.screens.approval_explain import explain

#: Seconds the prompt must be shown, with no key pressed, before a key answers it.
ARM_DELAY = 0.5
#: Seconds between two looks at the room the transcript needs above the prompt.
LIFT_CHECK = 0.25
#: Keys that answer nothing: they work at once, armed or not.
FREE_KEYS = frozenset({"pageup", "pagedown", "ctrl+o", "ctrl+e"})
__all__ = ["ARM_DELAY", "FREE_KEYS", "PermissionScreen"]


class PermissionScreen(ModalScreen[Decide | None]):
    DEFAULT_CSS = """
    PermissionScreen { align: left bottom; background: $background 0%; }
    PermissionScreen > #dialog {
        width: 100%;
        height: auto;
        border-top: round $warning;
        border-title-color: $warning;
        background: $surface;
        padding: 0 1;
    }
    PermissionScreen > #dialog.fitting { offset-y: 100vh; }
    PermissionScreen #body { height: auto; max-height: 12; }
    PermissionScreen #answers { height: auto; }
    PermissionScreen #title { text-style: bold; color: $warning; }
    PermissionScreen #call { height: auto; max-height: 14; margin: 1 0 0 2; }
    PermissionScreen #call.unfolded { max-height: initial; }
    PermissionScreen #why { color: $text-muted; margin: 1 0 0 0; }
    PermissionScreen #diff { height: auto; max-height: 16; margin: 1 0 0 0; }
    PermissionScreen #diff.unfolded { max-height: 60; }
    PermissionScreen #question { margin: 1 0 0 0; }
    PermissionScreen #explain { height: auto; margin: 1 0 0 2; }
    PermissionScreen #keys { color: $text-muted; margin: 1 0 0 0; }
    PermissionScreen #plan { height: auto; max-height: 24; margin: 1 0 0 0; }
    """

    BINDINGS = [
        Binding("1", "choose(0)", show=False),
        Binding("2", "choose(1)", show=False),
        Binding("3", "choose(2)", show=False),
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("enter", "confirm", show=False),
        Binding("y", "letter('y')", "allow once", show=False),
        Binding("a", "letter('a')", "the second answer", show=False),
        Binding("n,escape", "deny", "deny", show=False),
        Binding("d", "deny_with_note", "deny with note", show=False),
        Binding("tab", "amend", "amend", show=False),
        Binding("shift+tab", "accept_edits", show=False),
        Binding("ctrl+o", "unfold", show=False),
        Binding("ctrl+e", "explain", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
    ]

    # The note field exists only after "d" or Tab: a focused field would swallow keys.
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
        behind: ScrollView | None = None,
        workspace: Path | None = None,
    ) -> None:
        """``type_ahead`` takes the letters typed before the prompt may answer (the app
        puts them in its input); ``typed_at`` is when the latest key before it was
        pressed (``clock``'s time). ``behind`` is the transcript the scrolling keys and
        the wheel move; ``workspace`` the folder the explanation measures paths by."""
        super().__init__()
        self.request = request
        self.diff = diff  # an edit's change, shown instead of its raw input
        self._decide = decide
        self.decided: Decide | None = None
        self.chosen: Choice | None = None  # the answer given (the app acts on its rules)
        self.choices = choices_for(request)
        self.highlighted = 0
        self._type_ahead = type_ahead
        self._clock = clock
        self._last_key = typed_at
        self._shown_at: float | None = None
        self._behind = behind
        self._behind_margin: Spacing | None = None  # the transcript's own, put back on close
        self._workspace = workspace
        self.fold: call_preview.CallFold | None = None  # the call shown folded or whole (ctrl+o)
        self._fitted_for: Size | None = None  # the window's size the prompt was fitted to
        self._refolded_for: int | None = None  # the room a fold was last begun again for

    @property
    def tool_use_id(self) -> str:
        return self.request.tool_use_id

    @property
    def is_plan(self) -> bool:
        """The model presents a plan (exit_plan_mode): approving it leaves plan mode."""
        return leaves_plan(self.request.name)

    # -- what it shows ----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        req = self.request
        variables = self.app.theme_variables
        with Vertical(id="dialog", classes="fitting"):  # shown once fitted (``_reveal``)
            # What is asked scrolls; the answers below it always show (``_fit``).
            with VerticalScroll(id="body", can_focus=False):
                if self.is_plan:
                    yield Static(Text("Ready to code? Here is the plan:"), id="title")
                    plan = req.input.get("plan") if isinstance(req.input, dict) else None
                    with VerticalScroll(id="plan", can_focus=False):
                        yield Static(Text(clean(str(plan or req.summary))), id="plan-text")
                else:
                    yield from self._call(variables)
            with Vertical(id="answers"):
                yield Static(Text(question(req, self.diff)), id="question")
                yield Static(self._choices_text(), id="choices")
                yield Static(self._keys_text(), id="keys")

    def _call(self, variables: dict[str, str]) -> ComposeResult:
        req = self.request
        yield Static(Text(self._title()), id="title")
        if self.diff is not None:
            yield Static(Text(clean(req.input.get("path", "") or self.diff.path)), id="call")
            with VerticalScroll(id="diff", can_focus=False):
                yield Static(render_diff(self.diff, variables, tense=Tense.WILL), id="diff-lines")
        else:
            self.fold = call_preview.CallFold(req.name, req.input, variables)
            yield Static(self.fold.text(), id="call")
        reason = why(req)
        if reason:
            yield Static(Text("Asks because " + reason), id="why")

    def _title(self) -> str:
        new_file = self.diff is not None and self.diff.new_file
        return call_preview.title(self.request.name, new_file=new_file)

    def _choices_text(self) -> Text:
        variables = self.app.theme_variables
        out = Text()
        for i, choice in enumerate(self.choices):
            out.append("\n" if out else "")
            here = i == self.highlighted
            role = "error" if choice.act is Act.DENY else "success"
            out.append("❯ " if here else "  ", style=role_style(variables, role, bold=True))
            out.append(f"{i + 1}. {choice.label}",
                       style=role_style(variables, role, bold=True) if here else "")
        return out

    def _keys_text(self) -> Text:
        no = self.choices[self.highlighted].act is Act.DENY
        tab = ("tab: no, with a note for the model" if no else "tab: edit the command"
               if self.amends_command else "tab: yes, with a note for the model")
        esc = "esc: keep planning" if self.is_plan else "esc: no, stop"
        keys = f"↑↓ and enter, or 1-3 · {tab} · {esc} · ctrl+e: explain"
        if self.diff is not None and not self.diff.short:
            keys += " · ctrl+o: all lines"
        elif self.fold is not None and self._folds():
            keys += " · ctrl+o: fold it again, pgup/pgdn: scroll it" if self.whole else " · ctrl+o: show it all"
        return Text(keys)

    def _show_keys(self) -> bool:
        """Bring the line of keys up to date; whether it changed."""
        keys = self._keys_text()
        shown = self.query_one("#keys", Static)
        if str(shown.content) == keys.plain:
            return False
        shown.update(keys)
        return True

    @property
    def whole(self) -> bool:
        """Whether ctrl+o shows the call whole."""
        return self.fold is not None and self.fold.whole

    def _folds(self) -> bool:
        call = next(self.query("#call").results(Static), None)
        width = call.size.width if call is not None else 0
        return self.fold is not None and self.fold.folds(width, self.app.console)

    def _refold(self) -> None:
        """Show the call as its fold now is."""
        if self.fold is not None:
            self.query_one("#call", Static).update(self.fold.text())

    def on_mount(self) -> None:
        self.query_one("#dialog").border_title = "plan" if self.is_plan else "permission"
        self.call_after_refresh(self._fit)
        self.set_interval(LIFT_CHECK, self._lift_behind)

    def on_resize(self, event: events.Resize) -> None:
        if event.size == self._fitted_for:
            return
        if self.fold is not None and self.fold.again():  # fold again for the new size
            self._refold()
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Give what is asked the room the answers leave of three quarters of the window
        (all of it once ctrl+o shows a call whole): a long diff or plan scrolls, a folded
        command folds smaller (its fold's last line says what it hides, so it must show),
        and the answers never fall off the screen."""
        if not self.is_attached:
            return
        self._fitted_for = self.size
        answers = self.query_one("#answers")
        share = self.size.height if self.whole else self.size.height * 3 // 4
        room = max(share - answers.outer_size.height - 1, 3)  # 1: the border
        body = self.query_one("#body")
        body.styles.max_height = room
        over = body.virtual_size.height - room
        if over < 0 and room != self._refolded_for and self.fold is not None and self.fold.again():
            # Room to spare under a fold made for less room (measured before the line of
            # keys settled): fold again from the start, once for this room.
            self._refolded_for = room
            self._refold()
            self.call_after_refresh(self._fit)
            return
        smaller = self.fold is not None and self.fold.smaller(over)
        if smaller:
            self._refold()
        if self._show_keys() or smaller:
            self.call_after_refresh(self._fit)  # the call's width is known now: it may fold
            return
        self.call_after_refresh(self._reveal)

    def _reveal(self) -> None:
        """Lift the transcript, then show the prompt (the first time): its first frame
        is already in place, and the transcript does not jump under a prompt on show.
        The wait before a key answers starts now, when it can be read."""
        if not self.is_attached:
            return
        self._lift_behind()
        dialog = self.query_one("#dialog")
        if dialog.has_class("fitting"):
            dialog.remove_class("fitting")
            self._shown_at = self._clock()

    def _lift_behind(self) -> None:
        """Raise the transcript's foot above the prompt, as if the prompt sat under it:
        else its last lines (what the model just said, the call itself) lie behind the
        prompt, where no scrolling brings them. Put back when the prompt closes.

        Measured from what stands below the transcript (its own height is what the lift
        changes, and the screen underneath is laid out on its own time), again every
        ``LIFT_CHECK`` seconds: what stands below may grow or shrink meanwhile."""
        behind = self._behind
        if behind is None or behind.parent is None or not behind.is_attached or not self.is_attached:
            return
        if self._behind_margin is None:
            self._behind_margin = behind.styles.margin
        siblings = list(behind.parent.children)
        below = sum(w.outer_size.height for w in siblings[siblings.index(behind) + 1:] if w.display)
        top, right, bottom, left = self._behind_margin
        over = self.query_one("#dialog").outer_size.height - below - bottom  # it sits at the foot
        lifted = Spacing(top, right, bottom + max(0, over), left)
        if behind.styles.margin != lifted:
            behind.styles.margin = lifted

    def on_unmount(self) -> None:
        if self._behind is not None and self._behind_margin is not None:
            self._behind.styles.margin = self._behind_margin

    # -- keys ---------------------------------------------------------------------------

    @property
    def armed(self) -> bool:
        """Whether a key now answers: shown, and no key for ARM_DELAY seconds."""
        if self._shown_at is None:
            return False
        return self._clock() - max(self._shown_at, self._last_key) >= ARM_DELAY

    async def on_key(self, event: events.Key) -> None:
        if event.key == "escape" or event.key in FREE_KEYS or self.query("#note") or self.armed:
            return  # the bindings answer (or scroll, unfold, explain)
        self._last_key = self._clock()  # still typing: the wait starts again
        event.stop()
        event.prevent_default()
        if event.is_printable and event.character:
            self._type_ahead(event.character)
        if not self.query("#typing"):
            await self._mount_answer_part(Static(Text(
                "you were typing: that went to the input. Answer once you have read this.",
                style="italic"), id="typing"))

    def _answer(self, choice: Choice, note: str = "", updated: dict[str, Any] | None = None) -> None:
        if self.decided is not None:
            return
        self.chosen = choice
        # "No" with no note stops the turn too, as in Claude Code (a plan's keeps planning).
        stop = choice.act is Act.DENY and not note and not self.is_plan
        self.decided = choice.decide(self.tool_use_id, note).model_copy(
            update={"updated_input": updated, "stop": stop})
        self._decide(self.decided)
        self.dismiss(self.decided)

    def action_choose(self, index: int) -> None:
        if 0 <= index < len(self.choices):
            self._answer(self.choices[index])

    def action_move(self, step: int) -> None:
        self.highlighted = (self.highlighted + step) % len(self.choices)
        self.query_one("#choices", Static).update(self._choices_text())
        self._show_keys()  # what Tab does follows the answer chosen

    def action_confirm(self) -> None:
        self._answer(self.choices[self.highlighted])

    def action_letter(self, letter: str) -> None:
        choice = next((c for c in self.choices if c.letter == letter), None)
        if choice is not None:
            self._answer(choice)

    def action_accept_edits(self) -> None:
        choice = next((c for c in self.choices if c.act is Act.ACCEPT_EDITS), None)
        if choice is not None:
            self._answer(choice)

    def action_unfold(self) -> None:
        """Show the whole of a long diff or call, or fold it again."""
        if self.query("#diff"):
            self.query_one("#diff").toggle_class("unfolded")
            return
        if self.fold is None or not self._folds():
            return
        self.fold.whole = not self.fold.whole
        self._refold()
        self.query_one("#call").set_class(self.whole, "unfolded")
        self._show_keys()
        self.call_after_refresh(self._fit)

    def action_explain(self) -> None:
        """Show (or hide again) the call explained in plain words."""
        if self.query("#explain"):
            self.query_one("#explain").remove()
            return
        text = explain(self.request, self._workspace, self.app.theme_variables)
        body = self.query_one("#body", VerticalScroll)
        shown = Static(text, id="explain")
        body.mount(shown)
        body.call_after_refresh(shown.scroll_visible, animate=False)

    def action_page(self, step: int) -> None:
        """Scroll the call shown whole, while it overflows; else the transcript behind."""
        body = self.query_one("#body", VerticalScroll)
        if self.whole and body.max_scroll_y > 0:  # at once: the next key reads where it went
            page = body.scrollable_content_region.height
            body.scroll_to(y=body.scroll_y + step * page, animate=False, immediate=True)
        elif self._behind is not None:
            if step < 0:
                self._behind.scroll_page_up(animate=False)
            else:
                self._behind.scroll_page_down(animate=False)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._wheel(event, -1)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._wheel(event, 1)

    def _wheel(self, event: events.MouseEvent, step: int) -> None:
        """The wheel anywhere the prompt does not scroll itself moves the transcript."""
        if self._behind is not None:
            event.stop()
            self._behind.scroll_relative(y=step * self.app.scroll_sensitivity_y, animate=False)

    def action_deny(self) -> None:
        notes = self.query("#note").results(Input)
        note = next(notes, None)
        if note is not None and note.has_class("yes"):  # a note to go with a yes: kept in the input
            if note.value.strip():
                self._type_ahead(note.value.strip())
            note = None
        self._answer(self._deny_choice(), note.value.strip() if note is not None else "")

    def _deny_choice(self) -> Choice:
        return next(c for c in self.choices if c.act is Act.DENY)

    @property
    def amends_command(self) -> bool:
        """Tab edits the command itself (a command call), else adds a note."""
        return runs_command(self.request.name) and isinstance(self.request.input.get("command"), str)

    async def action_amend(self) -> None:
        """Tab: with "No" chosen, deny with a note; else edit a command, or (any other
        call) allow with a note, which the model reads after the call's result (Claude
        Code's "Yes, and tell Claude what to do next")."""
        if self.choices[self.highlighted].act is Act.DENY:
            await self.action_deny_with_note()
            return
        if self.query("#note"):
            return
        if not self.amends_command:
            note = Input(placeholder="what the model should do next (Enter allows the call with it, "
                         "Esc denies)", id="note", classes="yes")
            await self._mount_answer_part(note, before="#keys")
            note.focus()
            return
        field = Input(str(self.request.input["command"]), id="note", classes="command",
                      select_on_focus=False)
        field.border_title = "edit the command: Enter runs it as edited, Esc denies"
        await self._mount_answer_part(field, before="#keys")
        field.focus()

    async def action_deny_with_note(self) -> None:
        if self.query("#note"):
            return
        note = Input(placeholder="what the model should do instead (Enter denies with it, Esc denies)",
                     id="note")
        await self._mount_answer_part(note, before="#keys")
        note.focus()

    async def _mount_answer_part(self, widget: Static | Input, before: str | None = None) -> None:
        """Add to the answers (a note, the command to edit, a word on typing), then fit."""
        await self.query_one("#answers").mount(widget, before=before)
        self.call_after_refresh(self._fit)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.has_class("yes"):
            self._answer(self.choices[self.highlighted], event.value.strip())
            return
        if not event.input.has_class("command"):
            self._answer(self._deny_choice(), event.value.strip())
            return
        command = event.value.strip()
        if not command:
            return  # nothing to run: Esc denies
        changed = command != self.request.input.get("command")
        self._answer(self.choices[0], updated={**self.request.input, "command": command} if changed else None)
