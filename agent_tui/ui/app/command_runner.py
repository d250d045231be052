"""The app's side of slash commands (a part of ``ui/app/main.py``): sending a line from
the input (a command runs, a message goes to the core), the commands in force (built-in
and custom, read again when their files changed, looked at each time the menu opens
or a command runs), and what commands open: pages, the theme and session pickers, and
switching to a saved session (``/resume``). The command runner is what the built-in
commands run against (``commands/builtin.py``'s ``CommandHost``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import RenderableType
from rich.text import Text
from textual.app import SystemCommand
from textual.screen import Screen

from agent_tui.ui.app.preferences import Preferences
from agent_tui.ui.commands.builtin import BUILTIN, prompt_op, run_command
from agent_tui.ui.link.core_host import CoreState
from agent_tui.ui.input.mcp_offers import prompt_commands, resource_mentions
from agent_tui.ui.commands.registry import ArgsNeed, Command, CommandLine, Commands, parse_command_line
from agent_tui.ui.render.safe_text import clean, first_line
from agent_tui.ui.render.themes import THEME_HELP, THEMES
from agent_tui.ui.widgets.prompt_input import PromptInput, SendMode

if TYPE_CHECKING:
    from textual.timer import Timer

    from agent_tui.commands.reload import CommandSet
    from agent_tui.protocol import Op
    from agent_tui.ui.app.mcp_requests import McpRequests
    from agent_tui.ui.app.overlays import Overlays
    from agent_tui.ui.link.core_host import CoreHost, MakeSession, SessionDirectory
    from agent_tui.ui.render.usage import UsageTally
    from agent_tui.ui.input.file_source import FileSource
    from agent_tui.ui.widgets.attachment_bar import AttachmentBar
    from agent_tui.ui.app.screen_slots import ScreenSlot
    from agent_tui.ui.widgets.queue_pane import QueuePane
    from agent_tui.ui.widgets.status_line import StatusLine


class CommandsHost(Protocol):
    """What the app's side of slash commands uses of the app."""

    host: CoreHost
    status: StatusLine
    prompt: PromptInput
    queue_pane: QueuePane
    attachment_bar: AttachmentBar
    files: FileSource
    picker_slot: ScreenSlot[Any]
    sessions: SessionDirectory | None
    theme_name: str
    format_time: Callable[[float], str]
    usage: UsageTally

    @property
    def running(self) -> bool: ...
    def submit(self, op: Op) -> None: ...
    def workspace(self) -> Path: ...
    def notice(self, level: str, text: str) -> None: ...
    def show_page(self, title: str, body: RenderableType) -> None: ...
    def set_theme_name(self, name: str) -> None: ...
    def switch_session(self, make: MakeSession) -> None: ...
    def action_help(self) -> None: ...
    def action_background_jobs(self) -> None: ...
    def action_toggle_last_output(self) -> None: ...
    async def action_quit(self) -> None: ...
    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any: ...
    def set_interval(self, interval: float, callback: Callable[[], None]) -> Timer: ...
    def run_worker(self, work: Any, *, thread: bool = False, exclusive: bool = False, group: str = "default") -> object: ...


class CommandRunner:
    """The lines sent from the input, the commands in force, and what commands open;
    the ``CommandHost`` the built-in commands run against."""

    def __init__(self, app: CommandsHost, mcp: McpRequests, overlays: Overlays) -> None:
        self.app = app
        self.mcp = mcp
        self.overlays = overlays
        self._command_problems: list[str] = []  # the custom commands' problems last told
        self._command_set: CommandSet | None = None  # the workspace's, re-read when a file changes
        self.preferences = Preferences(app)  # /vim, /output-style, /keybindings

    # -- the input ----------------------------------------------------------------------

    def submitted(self, event: PromptInput.Submitted) -> None:
        if event.text.startswith("!"):
            self._run_shell(event.text)
            return
        line = parse_command_line(event.text)
        if line is not None:
            if not run_command(self, self.commands(), line, event.mode):
                self.app.prompt.put_back(event.text)  # an unknown command stays to be fixed
        else:
            from agent_tui.files.image_paths import find_images
            from agent_tui.ui.input.attachments import AttachmentRefused, expand, images

            text = event.text
            try:
                if self.app.attachment_bar.items:
                    text = expand(text, self.app.attachment_bar.items, self.app.workspace(), self.app.files.listing)
                attached = images(event.text, self.app.attachment_bar.items, self.app.workspace())
            except AttachmentRefused as exc:
                self.notice("warning", f"not sent: {exc}")
                self.app.prompt.put_back(event.text)  # nothing is lost: fix it and send again
                return
            named = find_images(event.text, self.app.workspace())  # pasted paths, read now
            self.app.attachment_bar.clear()
            wanted = resource_mentions(event.text, self.mcp.manager())
            if wanted:  # @server:uri: sent once read (ui/app/mcp_requests.py)
                self.mcp.send_with_resources(event.text, text, [*attached, *named.images],
                                             event.mode, wanted)
            else:
                self.app.submit(prompt_op(text, event.mode, [*attached, *named.images]))
            if named.refused:  # the path stays in the text; only the image is not sent
                self.notice("warning", "image not attached: " + "; ".join(named.refused))
        if not self.app.running:
            self.app.queue_pane.clear_settled()

    def _run_shell(self, text: str) -> None:
        """Bash mode: ``!cmd`` runs at once, outside any turn (no model request)."""
        from agent_tui.protocol import RunShell

        command = text[1:].strip()
        if not command:
            return
        if self.app.running:
            self.notice("info", "a turn is running: stop it (Esc) before a ! command")
            self.app.prompt.put_back(text)
            return
        self.app.submit(RunShell(command=command))

    def text_changed(self, event: Any) -> None:
        if event.text_area is self.app.prompt:
            from agent_tui.files.image_paths import preview_images

            self.app.attachment_bar.prune(self.app.prompt.text)
            self.app.attachment_bar.set_named(*preview_images(self.app.prompt.text, self.app.workspace()))

    def commands(self) -> Commands:
        # The custom commands' files are read when the menu opens or a command runs:
        # not for the first frame.
        from agent_tui.commands.reload import CommandSet
        from agent_tui.ui.commands.custom import as_command

        workspace = self.app.workspace()
        if self._command_set is None or self._command_set.workspace != workspace:
            self._command_set = CommandSet(workspace, taken=frozenset(c.name for c in BUILTIN))
        loaded, reloaded = self._command_set.current()  # a stat per file; read again on a change
        mcp = prompt_commands(self.mcp.manager())
        commands = Commands(BUILTIN, [*(as_command(c) for c in loaded.commands), *mcp], loaded.problems)
        if commands.problems and commands.problems != self._command_problems:
            new = [p for p in commands.problems if p not in self._command_problems]
            first = (new or commands.problems)[0]  # what an edit broke comes first
            more = len(commands.problems) - 1
            self._command_problems = commands.problems  # said once, not at every "/"
            self.app.status.set_notice("warning", (f"{reloaded}; " if reloaded else "")
                                   + f"custom commands: {first}" + (f" (and {more} more)" if more else ""))
        elif reloaded:
            self._command_problems = commands.problems
            self.app.status.set_notice("info", reloaded)
        return commands

    # -- what commands need of the app (builtin.CommandHost) -------------------------------

    @property
    def usage(self) -> UsageTally:
        return self.app.usage

    @property
    def running(self) -> bool:
        return self.app.running

    def submit(self, op: Op) -> None:
        self.app.submit(op)

    def notice(self, level: str, text: str) -> None:
        self.app.notice(level, text)

    def show_page(self, title: str, body: RenderableType) -> None:
        self.app.show_page(title, body)

    def action_help(self) -> None:
        self.app.action_help()

    def set_theme_name(self, name: str) -> None:
        self.app.set_theme_name(name)

    def open_rewind(self) -> None:
        self.overlays.open_rewind()

    def open_mcp(self) -> None:
        self.mcp.open()

    def run_mcp_prompt(self, command: Command, args: str, mode: SendMode) -> None:
        self.mcp.run_prompt(command, args, mode)

    def session_parts(self) -> tuple[Any, list[Any], Path] | None:
        session = self.app.host.session
        if session is None:
            return None
        return session.policy, list(session.background), self.app.workspace()

    def current_session(self) -> Any:
        return self.app.host.session

    def when_session(self, then: Callable[[], None]) -> None:
        def check() -> None:
            if self.app.host.session is not None:
                timer.stop()
                then()
            elif self.app.host.state in (CoreState.START_FAILED, CoreState.CRASHED,
                                     CoreState.STOPPING, CoreState.CLOSED):
                timer.stop()  # it never will: the start failure is shown already

        timer = self.app.set_interval(0.05, check)

    def quit_app(self) -> None:
        self.app.run_worker(self.app.action_quit(), exclusive=False)

    def open_theme_picker(self) -> None:
        from agent_tui.ui.screens.picker import PickerScreen, PickItem

        items = [PickItem(name, Text(f"{name:<14} {THEME_HELP[name]}")) for name in THEMES]

        def chosen(name: str | None) -> None:
            if name is not None:
                self.app.set_theme_name(name)

        if not self.app.picker_slot.is_open:
            self.app.picker_slot.open(PickerScreen("theme", "Colours for the whole screen.", items,
                                               current=self.app.theme_name), chosen)

    # -- the command palette (Ctrl+P) -------------------------------------------------------

    def system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for name in THEMES:
            mark = " (current)" if name == self.app.theme_name else ""
            yield SystemCommand(
                f"Theme: {name}{mark}", THEME_HELP[name], lambda name=name: self.app.set_theme_name(name)
            )
        yield SystemCommand("Background jobs", "list background jobs; k stops one", self.app.action_background_jobs)
        yield SystemCommand("Show or hide the latest tool output or thinking", "Ctrl+O", self.app.action_toggle_last_output)
        yield SystemCommand("Keys", "every key and what it does (F1)", self.app.action_help)
        # The slash commands, the same as the menu ``/`` opens.
        for command in self.commands().all():
            yield SystemCommand(command.usage, command.description,
                                lambda command=command: self._from_palette(command))

    def _from_palette(self, command: Command) -> None:
        if command.need is ArgsNeed.REQUIRED:
            self.app.prompt.text = f"/{command.name} "  # it needs more: typed in the input
            self.app.prompt.move_cursor(self.app.prompt.document.end)
            self.app.prompt.focus()
            return
        run_command(self, self.commands(), CommandLine(command.name, ""), SendMode.MESSAGE)

    # -- /resume ---------------------------------------------------------------------------

    def open_resume(self) -> None:
        if self.app.sessions is None:
            self.notice("info", "no saved sessions here")
            return
        if self.app.running:
            self.notice("info", "a turn is running: stop it (Esc) before /resume")
            return
        if self.app.picker_slot.is_open:
            return
        self.notice("info", "reading the saved sessions…")
        self.app.run_worker(self._list_sessions, thread=True, exclusive=True, group="resume")

    def _list_sessions(self) -> None:
        directory = self.app.sessions
        assert directory is not None
        session = self.app.host.session
        this = getattr(session, "session_id", None) if session is not None else None
        try:  # this session is the one open: never offered to itself
            saved = [s for s in directory.saved_sessions() if s.id != this]
        except Exception as exc:  # an unreadable store: say so, keep the session
            self.app.call_from_thread(self.notice, "error", f"cannot list the saved sessions: {exc!r}")
            return
        self.app.call_from_thread(self._pick_session, saved)

    def _pick_session(self, saved: list[Any]) -> None:
        from agent_tui.ui.screens.picker import PickerScreen, PickItem

        self.app.status.clear_notice()
        items = []
        for info in saved:
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{self.app.format_time(info.updated):>12}  ", style="dim")
            line.append(f"{clean(info.last_status) or '-':<9}  ", style="dim")
            if getattr(info, "name", ""):  # /rename
                line.append(f"{first_line(info.name, 40)}  ", style="bold")
            line.append(first_line(info.first_message, 80) or "(no message)",
                        style="" if getattr(info, "name", "") else "bold")
            line.append(f"  {clean(info.workspace)}", style="dim")
            items.append(PickItem(info.id, line, search=f"{getattr(info, 'name', '')} {info.first_message} "
                                                        f"{info.workspace} {info.id}"))

        def chosen(session_id: str | None) -> None:
            if session_id is None:
                return
            if self.app.running:
                self.notice("info", "a turn is running: stop it (Esc) before /resume")
                return
            assert self.app.sessions is not None
            self.app.switch_session(self.app.sessions.session_maker(session_id))

        self.app.picker_slot.open(PickerScreen("resume", "Open a saved session: its conversation goes on here.",
                                           items, empty="no saved sessions yet"), chosen)

