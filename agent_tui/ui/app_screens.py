"""The screens the app opens over the main one (a mixin of ``ui/app.py``): permission
prompts, one at a time in the order asked (an edit's with its diff), the rewind menu,
the background jobs, and the user's own editor for the draft (the app suspends)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_tui.ui.core_host import CoreHost, CoreState
from agent_tui.ui.diffs import FileDiff, diff_for_call

if TYPE_CHECKING:
    from pathlib import Path

    from agent_tui.protocol import Op, PermissionRequested
    from agent_tui.ui.jobs import Jobs
    from agent_tui.ui.screen_slots import ScreenSlot
    from agent_tui.ui.widgets.prompt_input import PromptInput
    from agent_tui.ui.widgets.status_line import StatusLine
    from agent_tui.ui.widgets.transcript import Transcript


class ScreensMixin:
    """Mixin of the app: what it needs of it is declared here."""

    host: CoreHost
    status: StatusLine
    transcript: Transcript
    prompt: PromptInput
    jobs: Jobs
    format_time: Any
    prompt_diffs: dict[str, FileDiff]
    _permission_queue: list[PermissionRequested]
    permission_slot: ScreenSlot[Any]
    rewind_slot: ScreenSlot[Any]
    background_slot: ScreenSlot[Any]
    last_input: float

    if TYPE_CHECKING:  # the app's own, for the type checker (never shadowing it)
        @property
        def running(self) -> bool: ...
        def submit(self, op: Op) -> None: ...
        def workspace(self) -> Path: ...

    # -- rewind -------------------------------------------------------------------------

    def open_rewind(self) -> None:
        if self.running:
            self.status.set_notice("info", "a turn is running: stop it (Esc) before rewinding")
            return
        if self.rewind_slot.is_open or self.host.state is CoreState.START_FAILED:
            return
        from agent_tui.ui.screens.rewind import RewindScreen

        def closed(op: Any) -> None:
            if op is not None:
                self.status.set_notice("info", "rewinding…")

        self.rewind_slot.open(RewindScreen(self.submit, self.format_time), closed)

    # -- background jobs --------------------------------------------------------------------

    def action_background_jobs(self) -> None:
        if self.background_slot.is_open:
            return
        from agent_tui.ui.screens.background import BackgroundScreen

        self.background_slot.open(BackgroundScreen(self.jobs, self.submit))

    def action_toggle_last_output(self) -> None:
        if self.transcript.toggle_last_tool() is None:
            self.status.set_notice("info", "no tool call to show yet")

    # -- permission prompts -------------------------------------------------------------

    def ask_permission(self, event: PermissionRequested) -> None:
        self._permission_queue.append(event)
        self._show_next_permission()

    def _show_next_permission(self) -> None:
        if self.permission_slot.is_open or not self._permission_queue:
            return
        request = self._permission_queue.pop(0)
        from agent_tui.ui.screens.permission import PermissionScreen

        # The call waits for the answer: the file is as it was, so a write's diff is exact.
        diff = diff_for_call(request.name, request.input, self.workspace())
        if diff is not None:
            self.prompt_diffs[request.tool_use_id] = diff
            self.transcript.tool_diff(request.tool_use_id, diff)
        self.permission_slot.open(PermissionScreen(request, self.submit, diff=diff,
                                                   type_ahead=self.prompt.insert,
                                                   typed_at=self.last_input),
                                  lambda _result: self._show_next_permission())

    def withdraw_permission(self, tool_use_id: str) -> None:
        """The call stopped waiting (decided, or the turn was interrupted)."""
        self._permission_queue = [r for r in self._permission_queue if r.tool_use_id != tool_use_id]
        screen = self.permission_slot.screen
        if screen is not None and screen.tool_use_id == tool_use_id and screen.decided is None:
            self.permission_slot.dismiss(None)

    # -- the draft in the user's editor (Ctrl+X Ctrl+E) ------------------------------------

    def on_prompt_input_editor_requested(self, _event: PromptInput.EditorRequested) -> None:
        from textual.app import SuspendNotSupported

        from agent_tui.ui.external_editor import edit

        draft = self.prompt.text
        try:
            with self.suspend():  # type: ignore[attr-defined]
                result = edit(draft)
        except SuspendNotSupported:  # no terminal to hand over (a test, a web driver)
            result = edit(draft, attached=False)
        if result.text is None:
            self.status.set_notice("warning", result.problem)
        else:
            self.prompt.text = result.text
            self.prompt.move_cursor(self.prompt.document.end)
            self.status.set_notice("info", "the draft is back from the editor")
        self.prompt.focus()
