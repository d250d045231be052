"""The Textual app: the main screen, the keys, and the screens on top of it.

The core is hosted by :mod:`agent_tui.ui.link.core_host` (a thread worker with its own
loop); its Events are shown by :mod:`agent_tui.ui.link.event_dispatch`. Quitting asks the
core to shut down and waits (bounded) for it to end what runs.

Screens on top of the main one, each held by a :class:`ScreenSlot`: the permission
prompt, the rewind menu (Esc Esc), the background jobs (Ctrl+B), the help (F1) and the
command palette (Ctrl+P, where themes switch too, as with ``--theme``). Markdown and
the screens are imported when first needed, preloaded on a thread after the first frame.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Footer
from textual.worker import Worker

from agent_tui.protocol.states import PermissionMode, TurnState
from agent_tui.ui.app.command_runner import CommandRunner
from agent_tui.ui.app.core_run import CoreRun
from agent_tui.ui.app.mcp_requests import McpElicitationAsked, McpOffersChanged, McpRequests
from agent_tui.ui.app.queue_editor import QueueEditor
from agent_tui.ui.app.overlays import Overlays
from agent_tui.ui.link.bridge import CoreEventsReady, EventInbox
from agent_tui.ui.commands.menu import CommandSource
from agent_tui.ui.input.completion import Completion, MenuKind
from agent_tui.ui.render.diffs import FileDiff
from agent_tui.ui.link.core_host import CoreHost, CoreState, MakeSession, SessionDirectory, SessionLike
from agent_tui.ui.input.file_source import FileSource
from agent_tui.ui.link.jobs import Jobs
from agent_tui.ui.input.mcp_offers import resource_suggestions
from agent_tui.ui.app.notify import Notifier, NotifySettings
from agent_tui.ui.input.keys import APP_BINDINGS, CTRL_C_WINDOW, DOUBLE_ESC_WINDOW, DoublePress
from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.app.screen_slots import ScreenSlot
from agent_tui.ui.link.session_view import SessionView
from agent_tui.ui.link.status_refresh import MakeStatusLine, StatusRefresh
from agent_tui.ui.render.states import TURN_LOOKS, role_style
from agent_tui.ui.render.themes import HIGH_CONTRAST, THEMES, theme_class, theme_css_paths
from agent_tui.ui.render.times import default_format_time
from agent_tui.ui.render.usage import UsageTally
from agent_tui.ui.widgets.plan_pane import PlanPane
from agent_tui.ui.widgets.prompt_input import PromptInput
from agent_tui.ui.widgets.queue_pane import QueuePane
from agent_tui.ui.widgets.status_command import StatusCommandLine
from agent_tui.ui.widgets.status_line import StatusLine
from agent_tui.ui.widgets.attachment_bar import AttachmentBar
from agent_tui.ui.widgets.suggestions import SuggestionList
from agent_tui.ui.widgets.tools_pane import ToolsPane
from agent_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.app import SystemCommand
    from textual.screen import Screen

    from agent_tui.mcp_catalog.port import McpServers
    from agent_tui.protocol import Event, Op
    from agent_tui.ui.commands.registry import Commands
    from agent_tui.ui.link.event_dispatch import EventDispatch
    from agent_tui.ui.screens.background import BackgroundScreen
    from agent_tui.ui.screens.trust import TrustQuestion
    from agent_tui.ui.screens.permission import PermissionScreen
    from agent_tui.ui.screens.rewind import RewindScreen

__all__ = ["AgentApp", "SessionLike"]

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


class AgentApp(App[int]):
    TITLE = "agent-tui"
    BINDINGS = APP_BINDINGS
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self,
        make_session: MakeSession,
        *,
        theme: str = "dark",
        clock: Callable[[], float] = time.monotonic,
        format_time: Callable[[float], str] = default_format_time,
        title: str = "agent-tui",
        cursor_blink: bool = False,
        welcome: bool = True,
        shutdown_timeout: float = SHUTDOWN_TIMEOUT,
        sessions: SessionDirectory | None = None,
        workspace: Path | None = None,
        notify: NotifySettings = NotifySettings(),
        status_line: MakeStatusLine | None = None,
        trust: Callable[[], TrustQuestion | None] | None = None,
    ) -> None:
        self._make_status_line = status_line  # the user's statusLine command, if any
        bad_theme = None
        if theme not in THEMES:
            bad_theme, theme = theme, "dark"
        css: list[str | PurePath] = [*theme_css_paths()]
        super().__init__(css_path=css or None)
        self.register_theme(HIGH_CONTRAST)
        self.theme_name = ""
        self.set_theme_name(theme)
        self.title = title
        self.clock = clock
        self.format_time = format_time
        self._cursor_blink = cursor_blink
        self._welcome = welcome
        self._startup_notice = (
            f"unknown theme {bad_theme!r}: using dark (choose dark, light or high-contrast)"
            if bad_theme is not None
            else ""
        )
        self.host = CoreHost(make_session, lambda: self.post_message(CoreEventsReady()))
        self._trust = trust  # asked after the first frame, before the session is built
        self.turn_state: str = "idle"
        self.turn_id: str | None = None
        self.events_handled = 0  # core events rendered so far, before merging (tests wait on this)
        self.last_turn_status: str | None = None
        self.session_ending = False
        self._esc = DoublePress(DOUBLE_ESC_WINDOW, clock)
        self._ctrl_c = DoublePress(CTRL_C_WINDOW, clock)
        self.permission_slot: ScreenSlot[PermissionScreen] = ScreenSlot(self)
        self.rewind_slot: ScreenSlot[RewindScreen] = ScreenSlot(self)
        self.background_slot: ScreenSlot[BackgroundScreen] = ScreenSlot(self)
        self.info_slot: ScreenSlot[Any] = ScreenSlot(self)
        self.picker_slot: ScreenSlot[Any] = ScreenSlot(self)
        self.model_slot: ScreenSlot[Any] = ScreenSlot(self)
        self.queue_edit_slot: ScreenSlot[Any] = ScreenSlot(self)
        self.jobs = Jobs()
        self.prompt_diffs: dict[str, FileDiff] = {}
        self.rewound_text: str | None = None  # the input as the latest rewind left it
        self.usage = UsageTally()
        self.sessions = sessions  # where /resume finds saved sessions
        self.workspace_default = (workspace or Path.cwd()).resolve()  # until the session says
        self.notifier = Notifier(notify)  # off unless asked (run_tui reads the environment)
        self._dispatch: EventDispatch | None = None  # made with the first event
        self.last_input = 0.0  # monotonic time of the latest key or mouse event
        # Its parts, each given what it uses of the app (a protocol in its module):
        self.session_view = SessionView(self)
        self.queue_editor = QueueEditor(self)
        self.overlays = Overlays(self)
        self.mcp_requests = McpRequests(self)
        self.command_runner = CommandRunner(self, self.mcp_requests, self.overlays)
        self.core_run = CoreRun(self, shutdown_timeout)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent) and not event.is_forwarded:
            self.last_input = time.monotonic()  # background work waits for a pause
            if self.command_runner.preferences.take_key(event):
                return  # a user's chord took the key (ui/input/chords.py)
        await super().on_event(event)

    @property
    def dispatch(self) -> EventDispatch:
        """What shows the core's events (its module holds every Event model: imported
        once there is an event to show, after the first frame)."""
        if self._dispatch is None:
            from agent_tui.ui.link.event_dispatch import EventDispatch

            self._dispatch = EventDispatch(self)
        return self._dispatch

    # -- the hosted core (see core_host.py) --------------------------------------------

    @property
    def inbox(self) -> EventInbox:
        return self.host.inbox

    @property
    def session(self) -> SessionLike | None:
        return self.host.session

    @property
    def session_closed(self) -> bool:
        return self.host.state is CoreState.CLOSED

    @property
    def core_running(self) -> bool:
        return self.core_run.worker is not None and not self.host.done

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
        self.prompt.on_up_when_empty = self.queue_editor.pull_back_newest
        self.suggestions = SuggestionList(id="suggestions")
        self.attachment_bar = AttachmentBar(id="attachments")
        self.status_command = StatusCommandLine(id="status-command")
        self.status_refresh = StatusRefresh(
            self, self._make_status_line, self.status_command.show,
            lambda text: self.status.set_notice("warning", text), lambda: self.status.model)
        self.files = FileSource(self.workspace, self.core_run.from_core(lambda fn: fn()), self.attachment_bar.add,
                                lambda why: self.status.set_notice("warning", why),
                                lambda query: resource_suggestions(self.mcp_requests.manager(), query))
        self.prompt.completer = Completion(self.prompt, self.suggestions, {
            MenuKind.COMMAND: CommandSource(self.commands),
            MenuKind.FILE: self.files,
        })
        yield self.transcript
        yield self.plan_pane
        yield self.tools_pane
        yield self.queue_pane
        yield self.status
        yield self.suggestions
        yield self.attachment_bar
        yield self.prompt
        yield self.status_command
        yield Footer()

    def on_mount(self) -> None:
        if self._welcome:
            self.transcript.add_welcome(WELCOME)
        if self._startup_notice:
            self.status.set_notice("warning", self._startup_notice)
        self.prompt.focus()
        self.command_runner.preferences.start(self, self.workspace())  # vim mode, keybindings
        self.set_interval(FLUSH_INTERVAL, self.flush)
        self.set_interval(1.0, self._tick)  # the retry countdown, running calls' times
        if self._make_status_line is not None:
            self.set_interval(0.1, self.status_refresh.tick)
        # The session is built on the core's thread: building it may import the model
        # SDK and MCP (about a second), and the first frame must not wait for that,
        # nor share the interpreter with those imports while it is drawn.
        self.call_after_refresh(self._ask_trust)

    def _ask_trust(self) -> None:
        """The trust dialog (ui/screens/trust.py) if the folder needs an answer, then the core."""
        from agent_tui.ui.screens.trust import ask_trust

        question = self._trust() if self._trust is not None else None
        ask_trust(self, question, then=self._start_core)

    def _start_core(self) -> None:  # after the trust dialog, if it came
        self.prompt.focus()
        self.core_run.start()

    def _tick(self) -> None:
        self.status.tick()
        self.tools_pane.tick()

    def session_started(self, badges: list[str], mode: PermissionMode) -> None:
        self.status.set_badges(badges)
        self.session_view.session_modes(mode)
        self.mcp_requests.manager()  # its servers may ask the user from now on

    def start_failed(self, error: str) -> None:
        self.status.set_notice("error", f"cannot start the session: {error}")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.core_run.worker_state_changed(event)

    def submit(self, op: Op) -> None:
        self.host.submit(op)

    # -- events from the core ---------------------------------------------------------

    def on_core_events_ready(self, _message: CoreEventsReady) -> None:
        self.handle_pending_events()

    def handle_pending_events(self) -> None:
        """Show every event the core emitted since the last drain, in order."""
        inbox = self.host.inbox
        try:
            for event in inbox.drain():
                try:
                    self.dispatch.handle(event)
                except Exception as exc:  # a display bug must not take the session down
                    self.log.error(f"cannot show {event!r}: {exc!r}")
                    self.status.set_notice("error", f"cannot show a {event.type} event: {exc!r}")
        finally:
            self.events_handled = inbox.drained

    def alert(self, sequence: str) -> None:
        """Write a notification (``ui/app/notify.py``) to the terminal, between frames."""
        if sequence and self._driver is not None:
            self._driver.write(sequence)
            self._driver.flush()

    def session_closed_event(self) -> None:
        self.host.closed()

    def turn_end_line(self, status: str, detail: str) -> Text:
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

    def show_past(self, records: list[Any]) -> None:
        """A resumed session: its conversation so far, in the transcript."""
        from agent_tui.ui.render.replay import show_past

        if self.usage.add_records(records):
            self.status.set_usage(self.usage)
        try:
            show_past(self.transcript, records, self.turn_end_line, self.format_time,
                      remember=self.prompt.remember)
            self.plan_pane.show_records(records)
        except Exception as exc:  # a display problem must not stop the session
            self.status.set_notice("warning", f"cannot show the earlier conversation: {exc!r}")

    def switch_session(self, make: MakeSession) -> None:
        self.core_run.switch(make)

    # -- what the parts ask of the app, and the keys and messages they take -----------------

    def workspace(self) -> Path:
        session = self.host.session
        return Path(session.workspace) if session is not None else self.workspace_default

    def notice(self, level: str, text: str) -> None:
        self.status.set_notice(level, text)

    def show_page(self, title: str, body: RenderableType) -> None:
        from agent_tui.ui.screens.info import InfoScreen

        self.info_slot.dismiss()
        self.info_slot.open(InfoScreen(title, body))

    def commands(self) -> Commands:
        return self.command_runner.commands()

    def mcp_manager(self) -> McpServers | None:
        return self.mcp_requests.manager()

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        self.command_runner.submitted(event)

    def on_text_area_changed(self, event: Any) -> None:
        self.command_runner.text_changed(event)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        return self.command_runner.system_commands(screen)

    def on_mcp_offers_changed(self, _message: McpOffersChanged) -> None:
        self.mcp_requests.offers_changed()

    def on_mcp_elicitation_asked(self, message: McpElicitationAsked) -> None:
        self.mcp_requests.ask(message)

    def on_prompt_input_editor_requested(self, _event: PromptInput.EditorRequested) -> None:
        self.overlays.edit_draft()

    def action_background_jobs(self) -> None:
        self.overlays.background_jobs()

    def action_toggle_last_output(self) -> None:
        self.overlays.toggle_last_output()

    def on_queue_pane_edit_requested(self, event: QueuePane.EditRequested) -> None:
        self.queue_editor.edit_requested(event)

    def on_queue_pane_remove_requested(self, event: QueuePane.RemoveRequested) -> None:
        self.queue_editor.remove_requested(event)

    def on_queue_pane_leave(self, _event: QueuePane.Leave) -> None:
        self.queue_editor.leave()

    def action_focus_queue(self) -> None:
        self.queue_editor.focus_queue()

    def action_cycle_mode(self) -> None:
        self.session_view.cycle_mode()

    # -- themes -------------------------------------------------------

    def set_theme_name(self, name: str) -> None:
        """Switch to one of our themes (``THEMES``): its Textual theme and its TCSS."""
        if name not in THEMES:
            raise ValueError(f"unknown theme {name!r}")
        if self.theme_name:
            self.remove_class(theme_class(self.theme_name))
        self.add_class(theme_class(name))
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

    def on_prompt_input_page(self, event: PromptInput.Page) -> None:
        if event.step < 0:
            self.transcript.scroll_page_up(animate=False)
        else:
            self.transcript.scroll_page_down(animate=False)

    def action_interrupt(self) -> None:
        if self.host.state is CoreState.STOPPING:  # quitting: Esc ends SessionEnd hooks
            self.host.interrupt_now()
            return
        if self.dispatch.bash_mode and not self.running:  # a ! command: Esc stops it
            self.host.interrupt_now()
            return
        if self.running:
            self._esc.reset()
            if self.turn_state == TurnState.RUNNING:
                self.status.set_turn(TurnState.CANCELLING, "stopping… (Esc again: kill now)")
            elif self.turn_state == TurnState.CANCELLING:
                # the second Esc: what is still in its grace is killed now
                self.status.set_turn(TurnState.CANCELLING, "killing what is left…")
            self.host.interrupt_now()
            return
        if self.prompt.text.strip() and self.prompt.text != self.rewound_text:
            self._esc.reset()
            return
        if self._esc.press():
            self.overlays.open_rewind()

    def action_ctrl_c(self) -> None:
        if self.host.state is CoreState.STOPPING:  # quitting: Ctrl+C ends SessionEnd hooks
            self.host.interrupt_now()
            return
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
            self.push_screen(HelpScreen([(c.usage, c.description) for c in self.commands().all()]))

    def action_quit_soon(self) -> None:
        """Ctrl+Q, in a worker: keys still reach the app (Esc ends SessionEnd hooks)."""
        self.run_worker(self.action_quit(), exclusive=False)

    async def action_quit(self) -> None:
        await self.core_run.shutdown()
        self.exit(1 if self.host.error else 0)

    async def on_unmount(self) -> None:
        # Every way out (ctrl+q, an exception, a test leaving run_test) stops the core.
        await self.core_run.shutdown()

