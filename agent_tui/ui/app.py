"""The Textual app: hosts the core on a thread worker and renders its Events.

``make_session(emit)`` builds the core's Session with the app's emit callback; the
session runs in a thread worker (``asyncio.run(session.run())``) and its Events reach
the UI through :mod:`agent_tui.ui.bridge`. UI and core share no mutable state: the UI
only calls ``session.submit(op)`` and ``session.interrupt_now()``, both thread-safe.
Quitting submits ``Shutdown`` and waits (bounded) for the core to end what runs.

Screens on top of the main one: the permission prompt, the rewind menu (Esc Esc),
the background jobs (Ctrl+B), the help (F1) and the command palette (Ctrl+P), where
the themes can be switched as well as with ``--theme``.

The first frame waits for none of the core's event models (pydantic), Markdown or the
screens: events are told apart by their ``type`` tag, ops and screens are imported
where they are made, and the rest is preloaded on a thread once the frame is drawn.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import threading
import time
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult, SystemCommand
from textual.screen import Screen
from textual.theme import Theme
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from agent_tui.core.state import ToolState, TurnState
from agent_tui.ui.bridge import CoreEventsReady, EventInbox
from agent_tui.ui.jobs import Jobs
from agent_tui.ui.keys import APP_BINDINGS, CTRL_C_WINDOW, DOUBLE_ESC_WINDOW, DoublePress
from agent_tui.ui.safe_text import clean, first_line
from agent_tui.ui.states import TURN_LOOKS, role_style
from agent_tui.ui.times import default_format_time
from agent_tui.ui.widgets.plan_pane import PlanPane
from agent_tui.ui.widgets.prompt_input import PromptInput
from agent_tui.ui.widgets.queue_pane import QueuePane
from agent_tui.ui.widgets.status_line import StatusLine
from agent_tui.ui.widgets.tools_pane import ToolsPane
from agent_tui.ui.widgets.transcript import Transcript
from agent_tui.protocol.states import HookRunState, TurnStatus

if TYPE_CHECKING:
    # Only for annotations: the first frame must not wait for the core's event models
    # (pydantic); they are imported where ops are built, after the first frame.
    from agent_tui.protocol import (
        BackgroundJobChanged,
        Event,
        Op,
        PermissionRequested,
        Rewound,
        SteerState,
        ToolStateChanged,
        TurnEnded,
    )
    from agent_tui.ui.screens.background import BackgroundScreen
    from agent_tui.ui.screens.permission import PermissionScreen
    from agent_tui.ui.screens.rewind import RewindScreen

# Seconds between renders of streamed text and tool output (and drains of the inbox:
# deltas do not wake the UI). A keystroke that follows a stream frame within a frame
# slot (1/120 s, see ui/__init__.py) waits for the next one; at 10 renders a second
# most keystrokes find a free slot, and streamed text still reads as smooth.
FLUSH_INTERVAL = 0.1
SHUTDOWN_TIMEOUT = 15.0  # how long quitting waits for the core to end what runs

WELCOME = (
    "Type a request and press Enter. Esc stops the running turn; "
    "Enter while it runs queues a steer, Ctrl+G sends it at once; F1 lists every key."
)


class SessionLike(Protocol):
    """What the UI needs of the core's Session."""

    def submit(self, op: Op) -> None: ...
    def interrupt_now(self) -> None: ...
    def past_records(self) -> list[Any]: ...
    async def run(self) -> None: ...


def themes_dir() -> Path:
    """``themes/`` at the repository root (the package is installed editable)."""
    return Path(__file__).resolve().parents[2] / "themes"


HIGH_CONTRAST = Theme(
    name="agent-tui-high-contrast",
    primary="#00D7FF",
    secondary="#FFFFFF",
    accent="#FFFF00",
    warning="#FFD700",
    error="#FF5F5F",
    success="#5FFF5F",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#1C1C1C",
    dark=True,
    text_alpha=1.0,
    luminosity_spread=0.0,
)

# Our theme name -> the Textual theme that gives its colours.
THEMES = {
    "dark": "textual-dark",
    "light": "textual-light",
    "high-contrast": HIGH_CONTRAST.name,
}


THEME_HELP = {
    "dark": "light text on a dark background",
    "light": "dark text on a light background",
    "high-contrast": "black and white, saturated state colours, heavy borders",
}


def theme_css_paths() -> list[Path]:
    """Every theme's TCSS: each file scopes its rules to ``.-agent-theme-NAME`` on the app
    (Textual itself sets ``-theme-<its theme>``),
    so switching themes is switching one class (and the Textual theme)."""
    return [p for p in (themes_dir() / f"{name}.tcss" for name in THEMES) if p.is_file()]


class AgentApp(App[int]):
    TITLE = "agent-tui"
    BINDINGS = APP_BINDINGS
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self,
        make_session: Callable[[Callable[[Event], None]], SessionLike],
        *,
        theme: str = "dark",
        clock: Callable[[], float] = time.monotonic,
        format_time: Callable[[float], str] = default_format_time,
        title: str = "agent-tui",
        cursor_blink: bool = True,
        welcome: bool = True,
        shutdown_timeout: float = SHUTDOWN_TIMEOUT,
    ) -> None:
        bad_theme = None
        if theme not in THEMES:
            bad_theme, theme = theme, "dark"
        super().__init__(css_path=theme_css_paths() or None)
        self.register_theme(HIGH_CONTRAST)
        self.theme_name = ""
        self.set_theme_name(theme)
        self.title = title
        self.clock = clock
        self.format_time = format_time
        self._make_session = make_session
        self._cursor_blink = cursor_blink
        self._welcome = welcome
        self._shutdown_timeout = shutdown_timeout
        self._startup_notice = (
            f"unknown theme {bad_theme!r}: using dark (choose dark, light or high-contrast)"
            if bad_theme is not None
            else ""
        )
        self.inbox = EventInbox(lambda: self.post_message(CoreEventsReady()))
        self.session: SessionLike | None = None
        self.core_worker: Worker[None] | None = None
        self.turn_state: str = "idle"
        self.turn_id: str | None = None
        self.events_handled = 0  # core events rendered so far, before merging (tests wait on this)
        self.last_turn_status: str | None = None
        self.session_closed = False
        self._esc = DoublePress(DOUBLE_ESC_WINDOW, clock)
        self._ctrl_c = DoublePress(CTRL_C_WINDOW, clock)
        self._permission_queue: list[PermissionRequested] = []
        self._permission_screen: PermissionScreen | None = None
        self._rewind_screen: RewindScreen | None = None
        self._rewound_text: str | None = None  # the input as the latest rewind left it
        self._background_screen: BackgroundScreen | None = None
        self.jobs = Jobs()
        self._shutting_down = False
        self._core_error: str | None = None
        self._core_done = threading.Event()
        self._session_lock = threading.Lock()
        self._pending_ops: list[Op] = []
        self._start_failed = False
        self.last_input = 0.0  # monotonic time of the latest key or mouse event

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent) and not event.is_forwarded:
            self.last_input = time.monotonic()  # background work waits for a pause
        await super().on_event(event)

    # -- layout -------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # Kept as attributes: app.query_one() searches the active screen, which is a
        # modal while a permission prompt or the help is open.
        self.transcript = Transcript(id="transcript", last_input=lambda: self.last_input)
        self.plan_pane = PlanPane(id="todo-plan")
        self.tools_pane = ToolsPane(id="tools", clock=self.clock)
        self.queue_pane = QueuePane(id="queue")
        self.status = StatusLine(id="status", clock=self.clock)
        self.prompt = PromptInput(id="prompt", cursor_blink=self._cursor_blink)
        yield self.transcript
        yield self.plan_pane
        yield self.tools_pane
        yield self.queue_pane
        yield self.status
        yield self.prompt
        yield Footer()

    def on_mount(self) -> None:
        if self._welcome:
            self.transcript.add_welcome(WELCOME)
        if self._startup_notice:
            self.status.set_notice("warning", self._startup_notice)
        self.prompt.focus()
        self.set_interval(FLUSH_INTERVAL, self.flush)
        self.set_interval(1.0, self._tick)  # the retry countdown, running calls' times
        # The session is built on the core's thread: building it may import the model
        # SDK and MCP (about a second), and the first frame must not wait for that,
        # nor share the interpreter with those imports while it is drawn.
        self.call_after_refresh(self._start_core)

    def _tick(self) -> None:
        self.status.tick()
        self.tools_pane.tick()

    def _start_core(self) -> None:
        # What exists after the first frame (modules, classes, the widgets) lives as
        # long as the app: out of the cycle collector's way, so that a full collection
        # while the user types costs a few milliseconds, not tens.
        gc.freeze()
        self.core_worker = self._run_core()
        # What the first frame did without (Markdown, the screens) is imported off the
        # UI's thread now, so that the first answer or prompt does not wait for it.
        threading.Thread(target=_preload, name="agent-tui-preload", daemon=True).start()

    # -- the core's thread ----------------------------------------------------------

    @work(thread=True, exit_on_error=False, name="agent-core", group="core")
    def _run_core(self) -> None:
        try:
            try:
                session = self._make_session(self.inbox.emit)
            except Exception as exc:  # e.g. a session to resume that cannot be read
                self._core_error = str(exc) or repr(exc)
                self._start_failed = True
                try:
                    self.call_from_thread(
                        self.status.set_notice, "error", f"cannot start the session: {self._core_error}"
                    )
                except Exception:
                    pass  # the app is already closing
                return
            records = session.past_records()
            if records:
                try:
                    self.call_from_thread(self._show_past, records)
                except Exception:
                    pass  # the app is already closing
            with self._session_lock:
                self.session = session
                pending, self._pending_ops = self._pending_ops, []
            for op in pending:  # typed (or quit) before the session existed
                session.submit(op)
            asyncio.run(session.run())
        finally:
            self._core_done.set()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self.core_worker or self._start_failed:
            return
        if event.state is WorkerState.ERROR:
            self._core_error = repr(event.worker.error)
            self.status.set_notice("error", f"the agent core stopped: {self._core_error}")
        elif event.state is WorkerState.SUCCESS and not self._shutting_down:
            self.status.set_notice("error", "the agent core stopped")

    def submit(self, op: Op) -> None:
        if not self._shutting_down:
            self._send(op)

    def _send(self, op: Op) -> None:
        """To the session, or kept until it exists (it is built on the core's thread)."""
        with self._session_lock:
            session = self.session
            if session is None:
                if not self._start_failed:
                    self._pending_ops.append(op)
                return
        session.submit(op)

    # -- events from the core ---------------------------------------------------------

    def on_core_events_ready(self, _message: CoreEventsReady) -> None:
        self.handle_pending_events()

    def handle_pending_events(self) -> None:
        """Show every event the core emitted since the last drain, in order."""
        try:
            for event in self.inbox.drain():
                try:
                    self.handle_event(event)
                except Exception as exc:  # a display bug must not take the session down
                    self.log.error(f"cannot show {event!r}: {exc!r}")
                    self.status.set_notice("error", f"cannot show a {event.type} event: {exc!r}")
        finally:
            self.events_handled = self.inbox.drained

    def handle_event(self, event: Event) -> None:
        # Dispatched on the event's ``type`` tag, not its class: the UI then needs the
        # core's event models only where it builds ops (see the module docstring).
        kind = event.type
        self.plan_pane.on_core_event(event)
        if kind == "text_delta":
            self.status.clear_retry()
            if event.parent_tool_use_id is None:  # sub-agent text stays in its task
                self.transcript.append_text(event.text)
        elif kind == "tool_output":
            self.tools_pane.tool_output(event.tool_use_id, event.text)
            self.transcript.tool_output(event.tool_use_id, event.text, turn_id=event.turn_id)
        elif kind == "tool_state":
            self.status.clear_retry()
            self._on_tool_state(event)
        elif kind == "hook":
            if event.tool_use_id is not None:
                self.tools_pane.hook_check(event.tool_use_id, running=event.state is HookRunState.RUNNING)
        elif kind == "turn_started":
            self.turn_id = event.turn_id
            self.turn_state = TurnState.RUNNING
            self.tools_pane.clear()
            self.transcript.add_user(event.text, turn_id=event.turn_id)
            self.status.set_turn(TurnState.RUNNING)
            self.status.clear_retry()
            self.status.clear_notice()
        elif kind == "turn_state":
            self.turn_state = event.state
            self.status.set_turn(event.state, event.detail)
        elif kind == "turn_ended":
            self._on_turn_ended(event)
        elif kind == "permission_requested":
            self._permission_queue.append(event)
            self._show_next_permission()
        elif kind == "steer_state":
            self._on_steer(event)
        elif kind == "retry_scheduled":
            # ``attempt`` counts retries; the request about to be tried is one more.
            self.status.set_retry(event.attempt + 1, event.delay, clean(event.reason))
        elif kind == "notice":
            self.status.set_notice(event.level, event.text, event.code)
        elif kind == "rewind_points":
            if self._rewind_screen is not None:
                self._rewind_screen.show_points(event)
        elif kind == "rewind_plan":
            if self._rewind_screen is not None:
                self._rewind_screen.show_plan(event)
        elif kind == "rewound":
            self._on_rewound(event)
        elif kind == "background_job":
            self.jobs.update(event)
            self.status.set_background(self.jobs.running)
            if self._background_screen is not None:
                self._background_screen.refresh_jobs()
        elif kind == "session_closed":
            self.session_closed = True

    def _on_tool_state(self, event: ToolStateChanged) -> None:
        if event.state is ToolState.STREAMING:
            summary = ""  # arguments still arriving: nothing honest to show yet
        else:
            summary = event.summary
        detail = event.detail
        if event.state in (ToolState.CANCELLED_WHILE_RUNNING, ToolState.FAILED, ToolState.UNKNOWN):
            detail = detail or (event.result or "")
        self.transcript.tool_state(
            event.tool_use_id, event.name, event.state, summary, detail, event.result,
            parent=event.parent_tool_use_id, turn_id=event.turn_id,
        )
        self.tools_pane.tool_state(
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
            self._withdraw_permission(event.tool_use_id)

    def _on_turn_ended(self, event: TurnEnded) -> None:
        self.last_turn_status = event.status
        self.turn_state = event.status
        self.status.clear_retry()
        detail = self.status.detail if self.status.state == event.status else ""
        detail = event.detail or detail
        self.status.set_turn(event.status, detail)
        self.transcript.end_text()
        if event.status is not TurnStatus.COMPLETED:
            self.transcript.add_turn_end(self._turn_end_line(event.status, detail))
        self.render_streamed()

    def _turn_end_line(self, status: str, detail: str) -> Text:
        """How a turn ended, for the transcript (when it did not simply complete)."""
        try:
            look = TURN_LOOKS[TurnState(status)]
        except ValueError:
            look = TURN_LOOKS[TurnState.FAILED]
        line = Text()
        line.append(f"{look.symbol} turn {look.word}", style=role_style(self.theme_variables, look.role, bold=True))
        if detail:
            line.append(": " + clean(detail).replace("_", " "))
        return line

    def _show_past(self, records: list[Any]) -> None:
        """A resumed session: its conversation so far, in the transcript."""
        from agent_tui.ui.replay import show_past

        try:
            show_past(self.transcript, records, self._turn_end_line, self.format_time,
                      remember=self.prompt.remember)
            self.plan_pane.show_records(records)
        except Exception as exc:  # a display problem must not stop the session
            self.status.set_notice("warning", f"cannot show the earlier conversation: {exc!r}")

    def _on_steer(self, event: SteerState) -> None:
        self.queue_pane.steer_state(event.id, event.kind, event.state, event.text)
        if event.state == "applied" and self.turn_state in (TurnState.RUNNING, TurnState.CANCELLING):
            # Injected into the running turn (a steer that starts a new turn shows
            # as that turn's user message instead).
            self.transcript.add_user(event.text, label="steer ›")
        elif event.state == "returned":
            self.prompt.put_back(event.text)
            self.status.set_notice("info", "the turn was interrupted: queued messages are back in the input")

    # -- rewind -------------------------------------------------------------------------

    def open_rewind(self) -> None:
        if self.running:
            self.status.set_notice("info", "a turn is running: stop it (Esc) before rewinding")
            return
        if self._rewind_screen is not None or self._start_failed:
            return
        from agent_tui.ui.screens.rewind import RewindScreen

        screen = RewindScreen(self.submit, self.format_time)
        self._rewind_screen = screen

        def closed(op: Any) -> None:
            if self._rewind_screen is screen:
                self._rewind_screen = None
            if op is not None:
                self.status.set_notice("info", "rewinding…")

        self.push_screen(screen, closed)

    def _on_rewound(self, event: Rewound) -> None:
        # RestoreWhat values (a StrEnum of the core's): both, conversation, code.
        conversation = event.restore != "code"
        code = event.restore != "conversation"
        label = first_line(event.text, 80)
        marked = conversation and self.transcript.mark_rewound(event.checkpoint_id)
        if conversation:
            self.tools_pane.clear()
            self.tools_pane.flush()
        variables = self.theme_variables
        muted = role_style(variables, "text-muted")
        what = {
            "both": "code and conversation",
            "conversation": "conversation only (files unchanged)",
            "code": "code only (conversation unchanged)",
        }[event.restore]
        body = Text()
        body.append("restored: ", style="bold")
        body.append(what)
        if conversation:
            body.append("\n")
            if marked:
                body.append("the dimmed messages above are no longer in the conversation", style=muted)
            else:
                body.append("later messages are no longer in the conversation", style=muted)
            if event.text:
                body.append("; the message is back in the input", style=muted)
        if code:
            body.append(f"\n{len(event.restored)} file(s) restored", style="bold")
            if event.restored:
                body.append(": " + ", ".join(clean(c.path) for c in event.restored[:6]))
                if len(event.restored) > 6:
                    body.append(f" and {len(event.restored) - 6} more")
        if event.skipped_conflicts:
            body.append(f"\nskipped {len(event.skipped_conflicts)} file(s) changed since the checkpoint (kept as they are): ",
                        style=role_style(variables, "warning", bold=True))
            body.append(", ".join(clean(c.path) for c in event.skipped_conflicts[:6]))
        for error in event.errors:
            body.append("\nerror: " + first_line(error, 200), style=role_style(variables, "error"))
        for item in event.not_undoable:
            body.append("\nnot undone: " + first_line(item, 200), style=role_style(variables, "warning"))
        if event.undo_checkpoint_id:
            body.append("\nto undo this rewind: Esc Esc, then the undo point at the top", style=muted)
        title = f"↶ rewound to “{label}”" if label else "↶ rewound"
        self.transcript.add_rewind(title, body)
        if conversation and event.text:
            self.prompt.put_back(event.text)
            self._rewound_text = self.prompt.text  # Esc Esc still rewinds (undo) over it
        self.prompt.focus()
        problems = len(event.skipped_conflicts) + len(event.errors)
        self.status.set_notice(
            "warning" if problems else "info",
            f"rewound ({what})" + (f": {problems} file(s) not restored" if problems else ""),
        )

    # -- background jobs --------------------------------------------------------------------

    def action_background_jobs(self) -> None:
        if self._background_screen is not None:
            return
        from agent_tui.ui.screens.background import BackgroundScreen

        screen = BackgroundScreen(self.jobs, self.submit)
        self._background_screen = screen

        def closed(_result: Any) -> None:
            if self._background_screen is screen:
                self._background_screen = None

        self.push_screen(screen, closed)

    def action_toggle_last_output(self) -> None:
        if self.transcript.toggle_last_tool() is None:
            self.status.set_notice("info", "no tool call to show yet")

    # -- themes and the command palette -------------------------------------------------------

    def set_theme_name(self, name: str) -> None:
        """Switch to one of our themes (``THEMES``): its Textual theme and its TCSS."""
        if name not in THEMES:
            raise ValueError(f"unknown theme {name!r}")
        if self.theme_name:
            self.remove_class(f"-agent-theme-{self.theme_name}")
        self.add_class(f"-agent-theme-{name}")
        self.theme = THEMES[name]
        self.theme_name = name
        if self.is_running:
            self.refresh_css()
            self._redraw_rich_text()

    def _redraw_rich_text(self) -> None:
        """Lines built as Rich text resolve theme colours when built: rebuild them."""
        try:
            self.status._redraw()
            self.tools_pane._dirty = True
            self.tools_pane.flush()
            self.transcript.restyle()
        except Exception:
            pass  # not composed yet

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for name in THEMES:
            mark = " (current)" if name == self.theme_name else ""
            yield SystemCommand(
                f"Theme: {name}{mark}", THEME_HELP[name], lambda name=name: self.set_theme_name(name)
            )
        yield SystemCommand("Background jobs", "list background jobs; k stops one", self.action_background_jobs)
        yield SystemCommand("Rewind", "go back to an earlier message (Esc Esc)", self.open_rewind)
        yield SystemCommand("Show or hide the latest tool output", "Ctrl+O", self.action_toggle_last_output)
        yield SystemCommand("Keys", "every key and what it does (F1)", self.action_help)
        yield SystemCommand("Quit", "stop what runs, then quit", self._quit_from_palette)

    def _quit_from_palette(self) -> None:
        self.run_worker(self.action_quit(), exclusive=False)

    # -- permission prompts -------------------------------------------------------------

    def _show_next_permission(self) -> None:
        if self._permission_screen is not None or not self._permission_queue:
            return
        request = self._permission_queue.pop(0)
        from agent_tui.ui.screens.permission import PermissionScreen

        screen = PermissionScreen(request, self.submit, type_ahead=self.prompt.insert,
                                  typed_at=self.last_input)
        self._permission_screen = screen

        def closed(_result: Any) -> None:
            if self._permission_screen is screen:
                self._permission_screen = None
            self._show_next_permission()

        self.push_screen(screen, closed)

    def _withdraw_permission(self, tool_use_id: str) -> None:
        """The call stopped waiting (decided, or the turn was interrupted)."""
        self._permission_queue = [r for r in self._permission_queue if r.tool_use_id != tool_use_id]
        screen = self._permission_screen
        if screen is not None and screen.tool_use_id == tool_use_id and screen.decided is None:
            self._permission_screen = None
            screen.dismiss(None)

    # -- rendering ------------------------------------------------------------------------

    def flush(self) -> None:
        """Render what streamed in since the last flush (runs every FLUSH_INTERVAL)."""
        if not self.transcript.is_attached:
            return  # shutting down
        self.handle_pending_events()  # deltas do not wake the UI: they wait for this
        self.render_streamed()

    def render_streamed(self) -> None:
        """Render the text and output taken in so far (without draining the inbox)."""
        self.transcript.flush()
        self.tools_pane.flush()

    # -- input ------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.turn_state in (TurnState.RUNNING, TurnState.CANCELLING)

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        from agent_tui.protocol import FollowUp, SendNow, UserMessage

        if event.send_now:
            self.submit(SendNow(text=event.text))
        elif event.follow_up:
            self.submit(FollowUp(text=event.text))
        else:
            self.submit(UserMessage(text=event.text))
        if not self.running:
            self.queue_pane.clear_settled()

    def on_prompt_input_page(self, event: PromptInput.Page) -> None:
        if event.step < 0:
            self.transcript.scroll_page_up(animate=False)
        else:
            self.transcript.scroll_page_down(animate=False)

    def action_interrupt(self) -> None:
        if self.running:
            self._esc.reset()
            if self.turn_state == TurnState.RUNNING:
                self.status.set_turn(TurnState.CANCELLING, "stopping…")
            if self.session is not None:
                self.session.interrupt_now()
            return
        if self.prompt.text.strip() and self.prompt.text != self._rewound_text:
            self._esc.reset()
            return
        if self._esc.press():
            self.open_rewind()

    def action_ctrl_c(self) -> None:
        if self._ctrl_c.press():
            self.status.set_hint("")
            self.run_worker(self.action_quit(), exclusive=False)
            return
        self.status.set_hint("press Ctrl+C again to quit")
        self.set_timer(CTRL_C_WINDOW, self._clear_ctrl_c_hint)

    def _clear_ctrl_c_hint(self) -> None:
        if not self._ctrl_c.armed:
            self.status.set_hint("")

    def action_help(self) -> None:
        from agent_tui.ui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        await self.shutdown_core()
        self.exit(1 if self._core_error else 0)

    async def shutdown_core(self) -> None:
        """Ask the core to stop (ending what runs) and wait for it, bounded."""
        if not self._shutting_down:
            from agent_tui.protocol import Shutdown

            self._shutting_down = True
            self._send(Shutdown())
            try:
                self.status.set_hint("")
                self.status.set_notice("info", "shutting down: stopping what runs…")
            except Exception:
                pass  # the screen is already gone (called while unmounting)
        if self.core_worker is None:
            return
        deadline = time.monotonic() + self._shutdown_timeout
        while not self._core_done.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    @property
    def core_running(self) -> bool:
        return self.core_worker is not None and not self._core_done.is_set()

    async def on_unmount(self) -> None:
        # Every way out (ctrl+q, an exception, a test leaving run_test) stops the core.
        await self.shutdown_core()


def _preload() -> None:
    try:
        import rich.markdown  # noqa: F401

        import agent_tui.ui.screens.background  # noqa: F401
        import agent_tui.ui.screens.help  # noqa: F401
        import agent_tui.ui.screens.permission  # noqa: F401
        import agent_tui.ui.screens.rewind  # noqa: F401
    except Exception:
        pass  # imported again where needed, and any error is reported there


def run_tui(
    make_session: Callable[[Callable[[Event], None]], Any],
    *,
    theme: str = "dark",
    title: str = "agent-tui",
    welcome: bool = True,
) -> int:
    """Run the TUI until the user quits; returns the process exit code (``welcome``:
    the first-run hint above the transcript; a resumed session shows its own past)."""
    app = AgentApp(make_session, theme=theme, title=title, welcome=welcome)
    code = app.run()
    if app.core_running:
        # The core did not stop in time: its thread would keep the process alive.
        sys.stderr.write("agent-tui: the agent core did not stop in time; exiting anyway\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(1)
    if app.return_code not in (None, 0):
        return app.return_code
    return code or 0
