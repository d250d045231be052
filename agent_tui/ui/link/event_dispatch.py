"""Every Event of the core, shown: one exhaustive ``match`` on the event types of
:mod:`agent_tui.protocol`, each case handing the event to the widget that shows it.

A new Event type without a case here fails ``tests/test_ui_app.py`` (every member of
the ``Event`` union is dispatched there) and, for a type checker, ``assert_never``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, assert_never

from agent_tui.protocol import (
    ContextReport,
    HookStateChanged,
    BackgroundJobChanged,
    Compaction,
    ConversationCleared,
    Event,
    ModelChanged,
    PermissionModeChanged,
    Models,
    Notice,
    PermissionRequested,
    RetryScheduled,
    Rewound,
    RewindPlanned,
    RewindPoints,
    SessionClosed,
    SteerState,
    TextDelta,
    ThinkingDelta,
    BASH_MODE_ID_PREFIX,
    ToolOutput,
    ToolStateChanged,
    TurnEnded,
    TurnStarted,
    TurnStateChanged,
    ResponseStarted,
    Usage,
)
from agent_tui.protocol.states import (
    HookEvent,
    HookRunState,
    NoticeCode,
    NoticeLevel,
    SteerStatus,
    ToolState,
    TurnState,
    TurnStatus,
)
from agent_tui.ui.render.diffs import FileDiff, diff_for_call, shows_diff
from agent_tui.ui.render.usage import UsageTally
from agent_tui.ui.render.rewind_report import restores_conversation, rewind_report
from agent_tui.ui.render.safe_text import clean

if TYPE_CHECKING:
    from pathlib import Path

    from rich.text import Text

    from agent_tui.ui.app.queue_editor import QueueEditor
    from agent_tui.ui.app.overlays import Overlays
    from agent_tui.ui.link.jobs import Jobs
    from agent_tui.ui.link.session_view import SessionView
    from agent_tui.ui.app.notify import Notifier
    from agent_tui.ui.app.screen_slots import ScreenSlot
    from agent_tui.ui.widgets.plan_pane import PlanPane
    from agent_tui.ui.widgets.prompt_input import PromptInput
    from agent_tui.ui.widgets.queue_pane import QueuePane
    from agent_tui.ui.widgets.status_line import StatusLine
    from agent_tui.ui.widgets.tools_pane import ToolsPane
    from agent_tui.ui.widgets.transcript import Transcript

# A call that ended in one of these shows what it was told as its detail.
_ENDED_BADLY = (ToolState.CANCELLED_WHILE_RUNNING, ToolState.FAILED, ToolState.UNKNOWN)


class Screen(Protocol):
    """What the dispatch needs of the app."""

    transcript: Transcript
    plan_pane: PlanPane
    tools_pane: ToolsPane
    queue_pane: QueuePane
    status: StatusLine
    prompt: PromptInput
    jobs: Jobs
    rewind_slot: ScreenSlot[Any]
    background_slot: ScreenSlot[Any]
    turn_state: str
    turn_id: str | None
    last_turn_status: str | None
    prompt_diffs: dict[str, FileDiff]  # read by the permission prompt, before the call ran
    notifier: Notifier
    app_focus: bool  # the terminal's focus reports (Textual's)
    clock: Callable[[], float]
    rewound_text: str | None  # the input as the latest rewind left it
    session_ending: bool  # SessionEnd hooks run (quitting waits for them; Esc ends them)
    overlays: Overlays  # the permission prompts
    queue_editor: QueueEditor  # what the queue's edits wait for
    session_view: SessionView  # usage, compaction, models, the permission mode
    usage: UsageTally  # the session's usage, and the lines its edits changed

    @property
    def theme_variables(self) -> dict[str, str]: ...
    def workspace(self) -> Path: ...
    def turn_end_line(self, status: str, detail: str) -> Text: ...
    def alert(self, sequence: str) -> None: ...
    def session_closed_event(self) -> None: ...
    def render_streamed(self) -> None: ...


class EventDispatch:
    """Shows each event on ``screen``."""

    def __init__(self, screen: Screen) -> None:
        self.screen = screen
        self.diffs: dict[str, FileDiff] = {}  # tool_use_id -> the change shown for it
        self.bash_mode: set[str] = set()  # the user's ! commands running now (Esc stops them)
        self.turns_began = False  # until the first turn, warnings are start-up warnings

    def handle(self, event: Event) -> None:
        s = self.screen
        s.plan_pane.on_core_event(event)
        match event:
            case TextDelta():
                s.status.clear_retry()
                if event.parent_tool_use_id is None:  # sub-agent text stays in its task
                    s.transcript.append_text(event.text)
            case ToolOutput():
                s.tools_pane.tool_output(event.tool_use_id, event.text)
                s.transcript.tool_output(event.tool_use_id, event.text, turn_id=event.turn_id)
            case ToolStateChanged():
                s.status.clear_retry()
                self._tool_state(event)
            case TurnStarted():
                self.turns_began = True
                s.notifier.turn_started(s.clock())
                s.turn_id = event.turn_id
                s.turn_state = TurnState.RUNNING
                s.tools_pane.clear()
                s.transcript.add_user(event.text, turn_id=event.turn_id, images=event.images)
                s.status.set_turn(TurnState.RUNNING)
                s.status.clear_retry()
                s.status.clear_notice()
            case TurnStateChanged():
                s.turn_state = event.state
                s.status.set_turn(event.state, event.detail)
            case TurnEnded():
                self._turn_ended(event)
            case PermissionRequested():
                s.overlays.ask_permission(event)
                s.alert(s.notifier.approval_waiting(s.app_focus))
            case SteerState():
                self._steer(event)
            case RetryScheduled():
                # ``attempt`` counts retries; the request about to be tried is one more.
                s.status.set_retry(event.attempt + 1, event.delay, clean(event.reason))
            case Notice():
                s.status.set_notice(event.level, event.text, event.code)
                self._notice(event)
            case RewindPoints():
                if s.rewind_slot.screen is not None:
                    s.rewind_slot.screen.show_points(event)
            case RewindPlanned():
                if s.rewind_slot.screen is not None:
                    s.rewind_slot.screen.show_plan(event)
            case Rewound():
                self._rewound(event)
            case BackgroundJobChanged():
                s.jobs.update(event)
                s.status.set_background(s.jobs.running)
                if s.background_slot.screen is not None:
                    s.background_slot.screen.refresh_jobs()
            case SessionClosed():
                s.session_closed_event()
            case ThinkingDelta():
                s.status.clear_retry()
                if event.parent_tool_use_id is None:  # a sub-agent's stays in its task
                    s.transcript.append_thinking(event.text)
            case Usage():
                s.session_view.usage_event(event)
            case ResponseStarted():
                pass  # the request's usage is shown when it ends (Usage)
            case Compaction():
                s.session_view.compaction_event(event)
            case ModelChanged():
                s.session_view.model_changed(event)
            case PermissionModeChanged():
                s.session_view.permission_mode_changed(event)
            case Models():
                s.session_view.models_listed(event)
            case ConversationCleared():
                s.session_view.conversation_cleared(event)
            case ContextReport():
                s.session_view.context_reported(event)
            case HookStateChanged():
                if event.event is HookEvent.SESSION_END:
                    s.session_ending = event.state is HookRunState.RUNNING
                    if s.session_ending:
                        s.status.set_notice("info", "SessionEnd hooks running (Esc ends them)")
                if event.tool_use_id is not None:
                    s.tools_pane.hook_check(
                        event.tool_use_id, running=event.state is HookRunState.RUNNING)
            case _:
                assert_never(event)

    def _notice(self, event: Notice) -> None:
        """A fork, and each warning of the start-up (a settings file's unknown keys, a
        bad rule, hooks not run...), are said whole in the transcript, where they stay:
        the status line shows only the latest notice, cut to its width."""
        from rich.text import Text

        from agent_tui.ui.render.states import role_style

        s = self.screen
        if event.code is NoticeCode.SESSION_FORKED:  # said once: whole, where it stays
            s.transcript.add_turn_end(Text(f"⑂ {clean(event.text)}", style="bold"))
        elif not self.turns_began and event.level in (NoticeLevel.WARNING, NoticeLevel.ERROR):
            role = "error" if event.level is NoticeLevel.ERROR else "warning"
            line = Text(f"⚠ {event.level}: ", style=role_style(s.theme_variables, role, bold=True))
            line.append(clean(event.text))
            s.transcript.add_turn_end(line)

    def _tool_state(self, event: ToolStateChanged) -> None:
        s = self.screen
        if event.tool_use_id.startswith(BASH_MODE_ID_PREFIX):
            if event.state is ToolState.RUNNING:
                self.bash_mode.add(event.tool_use_id)
            else:
                self.bash_mode.discard(event.tool_use_id)
        # Arguments still arriving: nothing honest to show yet.
        summary = "" if event.state is ToolState.STREAMING else event.summary
        detail = event.detail
        if event.state in _ENDED_BADLY:
            detail = detail or (event.result or "")
        s.transcript.tool_state(
            event.tool_use_id, event.name, event.state, summary, detail, event.result,
            parent=event.parent_tool_use_id, turn_id=event.turn_id,
        )
        if shows_diff(event.name) and event.state is not ToolState.STREAMING:
            self._diff(event)
            diff = self.diffs.get(event.tool_use_id)
            if event.state is ToolState.SUCCEEDED and diff is not None:  # the status line's
                s.usage.count_lines(event.tool_use_id, diff.added, diff.removed)
        s.tools_pane.tool_state(
            event.tool_use_id,
            event.name,
            event.state,
            summary=summary,
            detail=detail,
            exit_code=event.exit_code,
            signal=event.signal,
            residue=len(event.residue),
            parent=event.parent_tool_use_id,
            result=event.result,
            ended_by=event.ended_by,
        )
        if event.state is not ToolState.AWAITING_APPROVAL:
            s.overlays.withdraw_permission(event.tool_use_id)

    def _diff(self, event: ToolStateChanged) -> None:
        """An edit's change, once its input is complete (the permission prompt's, read
        from the file while the call waited, is the better one for a write)."""
        known = self.diffs.get(event.tool_use_id)
        if known is not None and not known.content_only:
            return
        better = self.screen.prompt_diffs.get(event.tool_use_id)
        # Before it runs, the file is as the call will find it: read it (exact numbers,
        # a new file known as new); after, only the call's input tells.
        before = event.state in (ToolState.QUEUED, ToolState.AWAITING_APPROVAL)
        diff = better or known or diff_for_call(event.name, event.input,
                                                self.screen.workspace() if before else None)
        if diff is not None and diff is not known:
            self.diffs[event.tool_use_id] = diff
            self.screen.transcript.tool_diff(event.tool_use_id, diff)

    def _turn_ended(self, event: TurnEnded) -> None:
        s = self.screen
        s.last_turn_status = event.status
        s.turn_state = event.status
        s.status.clear_retry()
        detail = s.status.detail if s.status.state == event.status else ""
        detail = event.detail or detail
        s.status.set_turn(event.status, detail)
        s.transcript.end_text()
        if event.status is not TurnStatus.COMPLETED:
            s.transcript.add_turn_end(s.turn_end_line(event.status, detail))
        s.render_streamed()
        s.alert(s.notifier.turn_ended(s.clock(), event.status, s.app_focus))

    def _steer(self, event: SteerState) -> None:
        s = self.screen
        s.queue_pane.steer_state(event.id, event.kind, event.state, event.text)
        s.queue_editor.answered(event)
        if event.state is SteerStatus.APPLIED and s.turn_state in (TurnState.RUNNING, TurnState.CANCELLING):
            # Injected into the running turn (a steer that starts a new turn shows
            # as that turn's user message instead).
            s.transcript.add_user(event.text, label="steer ›", images=event.images)
        elif event.state is SteerStatus.RETURNED:
            s.prompt.put_back(event.text)
            s.status.set_notice("info", "the turn was interrupted: queued messages are back in the input")

    def _rewound(self, event: Rewound) -> None:
        s = self.screen
        conversation = restores_conversation(event.restore)
        marked = conversation and s.transcript.mark_rewound(event.checkpoint_id)
        if conversation:
            s.tools_pane.clear()
            s.tools_pane.flush()
        report = rewind_report(event, s.theme_variables, marked=marked)
        s.transcript.add_rewind(report.title, report.body)
        if conversation and event.text:
            s.prompt.put_back(event.text)
            s.rewound_text = s.prompt.text  # Esc Esc still rewinds (undo) over it
        s.prompt.focus()
        s.status.set_notice(report.notice_level, report.notice)
