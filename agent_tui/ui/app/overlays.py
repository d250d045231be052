"""The screens the app opens over the main one (a part of ``ui/app/main.py``): permission
prompts, one at a time in the order asked (an edit's with its diff), the rewind menu,
the background jobs, and the user's own editor for the draft (the app suspends)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from agent_tui.ui.link.core_host import CoreHost, CoreState
from agent_tui.ui.render.diffs import FileDiff, diff_for_call

if TYPE_CHECKING:
    from pathlib import Path

    from agent_tui.protocol import Op, PermissionRequested
    from agent_tui.ui.link.jobs import Jobs
    from agent_tui.ui.app.screen_slots import ScreenSlot
    from agent_tui.ui.widgets.prompt_input import PromptInput
    from agent_tui.ui.widgets.status_line import StatusLine
    from agent_tui.ui.widgets.transcript import Transcript


class ScreensHost(Protocol):
    """What the screens over the main one use of the app."""

    host: CoreHost
    status: StatusLine
    transcript: Transcript
    prompt: PromptInput
    jobs: Jobs
    format_time: Callable[[float], str]
    prompt_diffs: dict[str, FileDiff]
    permission_slot: ScreenSlot[Any]
    rewind_slot: ScreenSlot[Any]
    background_slot: ScreenSlot[Any]
    last_input: float

    @property
    def running(self) -> bool: ...
    def submit(self, op: Op) -> None: ...
    def render_streamed(self) -> None: ...
    def workspace(self) -> Path: ...
    def suspend(self) -> AbstractContextManager[None]: ...


class Overlays:
    """The permission prompts (one at a time, in the order asked), the rewind menu,
    the background jobs, and the draft in the user's editor."""

    def __init__(self, app: ScreensHost) -> None:
        self.app = app
        self.waiting: list[PermissionRequested] = []  # permission requests not shown yet

    # -- rewind -------------------------------------------------------------------------

    def open_rewind(self) -> None:
        if self.app.running:
            self.app.status.set_notice("info", "a turn is running: stop it (Esc) before rewinding")
            return
        if self.app.rewind_slot.is_open or self.app.host.state is CoreState.START_FAILED:
            return
        from agent_tui.ui.screens.rewind import RewindScreen

        def closed(op: Any) -> None:
            if op is not None:
                self.app.status.set_notice("info", "rewinding…")

        self.app.rewind_slot.open(RewindScreen(self.app.submit, self.app.format_time), closed)

    # -- background jobs --------------------------------------------------------------------

    def background_jobs(self) -> None:
        if self.app.background_slot.is_open:
            return
        from agent_tui.ui.screens.background import BackgroundScreen

        self.app.background_slot.open(BackgroundScreen(self.app.jobs, self.app.submit))

    def toggle_last_output(self) -> None:
        if self.app.transcript.toggle_last_tool() is None:
            self.app.status.set_notice("info", "no tool call to show yet")

    # -- permission prompts -------------------------------------------------------------

    def ask_permission(self, event: PermissionRequested) -> None:
        self.waiting.append(event)
        self._show_next_permission()

    def _show_next_permission(self) -> None:
        if self.app.permission_slot.is_open or not self.waiting:
            return
        request = self.waiting.pop(0)
        from agent_tui.ui.screens.approval_answer import answered
        from agent_tui.ui.screens.permission import PermissionScreen

        # The call waits for the answer: the file is as it was, so a write's diff is exact.
        diff = diff_for_call(request.name, request.input, self.app.workspace())
        if diff is not None:
            self.app.prompt_diffs[request.tool_use_id] = diff
            self.app.transcript.tool_diff(request.tool_use_id, diff)
        # What streamed in (the last call's result in the tools pane) is laid out before the
        # prompt measures what stands below the transcript: else its lift jumps when it is.
        self.app.render_streamed()
        screen = PermissionScreen(request, self.app.submit, diff=diff,
                                  type_ahead=self.app.prompt.insert, typed_at=self.app.last_input,
                                  behind=self.app.transcript, workspace=self.app.workspace())

        def closed(_result: object) -> None:
            answered(screen.chosen, screen.decided, self.app.workspace(), self.app.submit, self._tell)
            self._show_next_permission()

        self.app.permission_slot.open(screen, closed)

    def _tell(self, level: str, text: str) -> None:
        """A notice about an answer: in the status line, and in the transcript to stay."""
        from rich.text import Text

        self.app.status.set_notice(level, text)
        self.app.transcript.add_turn_end(Text("  " + text, style="dim" if level == "info" else "bold"))

    def withdraw_permission(self, tool_use_id: str) -> None:
        """The call stopped waiting (decided, or the turn was interrupted)."""
        self.waiting = [r for r in self.waiting if r.tool_use_id != tool_use_id]
        screen = self.app.permission_slot.screen
        if screen is not None and screen.tool_use_id == tool_use_id and screen.decided is None:
            self.app.permission_slot.dismiss(None)

    # -- the draft in the user's editor (Ctrl+X Ctrl+E) ------------------------------------

    def edit_draft(self) -> None:
        from textual.app import SuspendNotSupported

        from agent_tui.ui.input.external_editor import edit

        draft = self.app.prompt.text
        try:
            with self.app.suspend():
                result = edit(draft)
        except SuspendNotSupported:  # no terminal to hand over (a test, a web driver)
            result = edit(draft, attached=False)
        if result.text is None:
            self.app.status.set_notice("warning", result.problem)
        else:
            self.app.prompt.text = result.text
            self.app.prompt.move_cursor(self.app.prompt.document.end)
            self.app.status.set_notice("info", "the draft is back from the editor")
        self.app.prompt.focus()
