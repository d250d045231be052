"""The app's side of slash commands (a mixin of ``ui/app.py``): sending a line from
the input (a command runs, a message goes to the core), the commands in force (built-in
and custom, read again when their files changed, looked at each time the menu opens
or a command runs), and what commands open: pages, the theme and session pickers, and
switching to a saved session (``/resume``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.text import Text
from textual.app import SystemCommand
from textual.screen import Screen

from agent_tui.ui.commands.builtin import BUILTIN, prompt_op, run_command
from agent_tui.ui.core_host import CoreState
from agent_tui.ui.mcp_offers import prompt_commands, resource_mentions
from agent_tui.ui.commands.registry import ArgsNeed, Command, CommandLine, Commands, parse_command_line
from agent_tui.ui.safe_text import clean, first_line
from agent_tui.ui.themes import THEME_HELP, THEMES
from agent_tui.ui.widgets.prompt_input import PromptInput, SendMode

if TYPE_CHECKING:
    from agent_tui.commands.reload import CommandSet
    from agent_tui.protocol import Op
    from agent_tui.ui.core_host import CoreHost, MakeSession, SessionDirectory
    from agent_tui.ui.file_source import FileSource
    from agent_tui.ui.widgets.attachment_bar import AttachmentBar
    from agent_tui.ui.screen_slots import ScreenSlot
    from agent_tui.ui.widgets.queue_pane import QueuePane
    from agent_tui.ui.widgets.status_line import StatusLine


class CommandsMixin:
    """Mixin of the app: what it needs of it is declared here."""

    host: CoreHost
    status: StatusLine
    prompt: PromptInput
    queue_pane: QueuePane
    attachment_bar: AttachmentBar
    files: FileSource
    info_slot: ScreenSlot[Any]
    picker_slot: ScreenSlot[Any]
    sessions: SessionDirectory | None
    workspace_default: Path
    _command_problems: list[str] = []  # the custom commands' problems last told
    _command_set: CommandSet | None = None  # the workspace's, re-read when a file changes
    theme_name: str
    format_time: Any

    if TYPE_CHECKING:  # the app's own, for the type checker (never shadowing it)
        @property
        def running(self) -> bool: ...
        def submit(self, op: Op) -> None: ...
        def set_theme_name(self, name: str) -> None: ...
        def switch_session(self, make: MakeSession) -> None: ...

    # -- the input ----------------------------------------------------------------------

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        if event.text.startswith("!"):
            self._run_shell(event.text)
            return
        line = parse_command_line(event.text)
        if line is not None:
            if not run_command(self, self.commands(), line, event.mode):  # type: ignore[arg-type]
                self.prompt.put_back(event.text)  # an unknown command stays to be fixed
        else:
            from agent_tui.files.image_paths import find_images
            from agent_tui.ui.attachments import AttachmentRefused, expand, images

            text = event.text
            try:
                if self.attachment_bar.items:
                    text = expand(text, self.attachment_bar.items, self.workspace(), self.files.listing)
                attached = images(event.text, self.attachment_bar.items, self.workspace())
            except AttachmentRefused as exc:
                self.notice("warning", f"not sent: {exc}")
                self.prompt.put_back(event.text)  # nothing is lost: fix it and send again
                return
            named = find_images(event.text, self.workspace())  # pasted paths, read now
            self.attachment_bar.clear()
            wanted = resource_mentions(event.text, self.mcp_manager())  # type: ignore[attr-defined]
            if wanted:  # @server:uri: sent once read (ui/app_mcp.py)
                self.send_with_resources(event.text, text, [*attached, *named.images],  # type: ignore[attr-defined]
                                         event.mode, wanted)
            else:
                self.submit(prompt_op(text, event.mode, [*attached, *named.images]))
            if named.refused:  # the path stays in the text; only the image is not sent
                self.notice("warning", "image not attached: " + "; ".join(named.refused))
        if not self.running:
            self.queue_pane.clear_settled()

    def _run_shell(self, text: str) -> None:
        """Bash mode: ``!cmd`` runs at once, outside any turn (no model request)."""
        from agent_tui.protocol import RunShell

        command = text[1:].strip()
        if not command:
            return
        if self.running:
            self.notice("info", "a turn is running: stop it (Esc) before a ! command")
            self.prompt.put_back(text)
            return
        self.submit(RunShell(command=command))

    def on_text_area_changed(self, event: Any) -> None:
        if event.text_area is self.prompt:
            from agent_tui.files.image_paths import preview_images

            self.attachment_bar.prune(self.prompt.text)
            self.attachment_bar.set_named(*preview_images(self.prompt.text, self.workspace()))

    def commands(self) -> Commands:
        # The custom commands' files are read when the menu opens or a command runs:
        # not for the first frame.
        from agent_tui.commands.reload import CommandSet
        from agent_tui.ui.commands.custom import as_command

        workspace = self.workspace()
        if self._command_set is None or self._command_set.workspace != workspace:
            self._command_set = CommandSet(workspace, taken=frozenset(c.name for c in BUILTIN))
        loaded, reloaded = self._command_set.current()  # a stat per file; read again on a change
        mcp = prompt_commands(self.mcp_manager())  # type: ignore[attr-defined]
        commands = Commands(BUILTIN, [*(as_command(c) for c in loaded.commands), *mcp], loaded.problems)
        if commands.problems and commands.problems != self._command_problems:
            new = [p for p in commands.problems if p not in self._command_problems]
            first = (new or commands.problems)[0]  # what an edit broke comes first
            more = len(commands.problems) - 1
            self._command_problems = commands.problems  # said once, not at every "/"
            self.status.set_notice("warning", (f"{reloaded}; " if reloaded else "")
                                   + f"custom commands: {first}" + (f" (and {more} more)" if more else ""))
        elif reloaded:
            self._command_problems = commands.problems
            self.status.set_notice("info", reloaded)
        return commands

    def workspace(self) -> Path:
        session = self.host.session
        return Path(session.workspace) if session is not None else self.workspace_default

    # -- what commands need of the app (builtin.CommandHost) -------------------------------

    def notice(self, level: str, text: str) -> None:
        self.status.set_notice(level, text)

    def show_page(self, title: str, body: RenderableType) -> None:
        from agent_tui.ui.screens.info import InfoScreen

        self.info_slot.dismiss()
        self.info_slot.open(InfoScreen(title, body))

    def session_parts(self) -> tuple[Any, list[Any], Path] | None:
        session = self.host.session
        if session is None:
            return None
        return session.policy, list(session.background), self.workspace()

    def current_session(self) -> Any:
        return self.host.session

    def when_session(self, then: Callable[[], None]) -> None:
        def check() -> None:
            if self.host.session is not None:
                timer.stop()
                then()
            elif self.host.state in (CoreState.START_FAILED, CoreState.CRASHED,
                                     CoreState.STOPPING, CoreState.CLOSED):
                timer.stop()  # it never will: the start failure is shown already

        timer = self.set_interval(0.05, check)  # type: ignore[attr-defined]

    def quit_app(self) -> None:
        self.run_worker(self.action_quit(), exclusive=False)  # type: ignore[attr-defined]

    def open_theme_picker(self) -> None:
        from agent_tui.ui.screens.picker import PickerScreen, PickItem

        items = [PickItem(name, Text(f"{name:<14} {THEME_HELP[name]}")) for name in THEMES]

        def chosen(name: str | None) -> None:
            if name is not None:
                self.set_theme_name(name)

        if not self.picker_slot.is_open:
            self.picker_slot.open(PickerScreen("theme", "Colours for the whole screen.", items,
                                               current=self.theme_name), chosen)

    # -- the command palette (Ctrl+P) -------------------------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for name in THEMES:
            mark = " (current)" if name == self.theme_name else ""
            yield SystemCommand(
                f"Theme: {name}{mark}", THEME_HELP[name], lambda name=name: self.set_theme_name(name)
            )
        yield SystemCommand("Background jobs", "list background jobs; k stops one", self.action_background_jobs)  # type: ignore[attr-defined]
        yield SystemCommand("Show or hide the latest tool output or thinking", "Ctrl+O", self.action_toggle_last_output)  # type: ignore[attr-defined]
        yield SystemCommand("Keys", "every key and what it does (F1)", self.action_help)  # type: ignore[attr-defined]
        # The slash commands, the same as the menu ``/`` opens.
        for command in self.commands().all():
            yield SystemCommand(command.usage, command.description,
                                lambda command=command: self._from_palette(command))

    def _from_palette(self, command: Command) -> None:
        if command.need is ArgsNeed.REQUIRED:
            self.prompt.text = f"/{command.name} "  # it needs more: typed in the input
            self.prompt.move_cursor(self.prompt.document.end)
            self.prompt.focus()
            return
        run_command(self, self.commands(), CommandLine(command.name, ""), SendMode.MESSAGE)  # type: ignore[arg-type]

    # -- /resume ---------------------------------------------------------------------------

    def open_resume(self) -> None:
        if self.sessions is None:
            self.notice("info", "no saved sessions here")
            return
        if self.running:
            self.notice("info", "a turn is running: stop it (Esc) before /resume")
            return
        if self.picker_slot.is_open:
            return
        self.notice("info", "reading the saved sessions…")
        self.run_worker(self._list_sessions, thread=True, exclusive=True, group="resume")  # type: ignore[attr-defined]

    def _list_sessions(self) -> None:
        directory = self.sessions
        assert directory is not None
        try:
            saved = directory.saved_sessions()
        except Exception as exc:  # an unreadable store: say so, keep the session
            self.call_from_thread(self.notice, "error", f"cannot list the saved sessions: {exc!r}")  # type: ignore[attr-defined]
            return
        self.call_from_thread(self._pick_session, saved)  # type: ignore[attr-defined]

    def _pick_session(self, saved: list[Any]) -> None:
        from agent_tui.ui.screens.picker import PickerScreen, PickItem

        self.status.clear_notice()
        items = []
        for info in saved:
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{self.format_time(info.updated):>12}  ", style="dim")
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
            if self.running:
                self.notice("info", "a turn is running: stop it (Esc) before /resume")
                return
            assert self.sessions is not None
            self.switch_session(self.sessions.session_maker(session_id))

        self.picker_slot.open(PickerScreen("resume", "Open a saved session: its conversation goes on here.",
                                           items, empty="no saved sessions yet"), chosen)

