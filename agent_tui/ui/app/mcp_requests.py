"""The app's side of MCP (a part of ``ui/app/main.py``): a message that mentions
``@server:uri`` resources is sent once they are read, and an MCP prompt command
(``/mcp__server__prompt``) once the prompt is got; a server's question to the user
(elicitation) is a dialog (``ui/screens/elicitation.py``); ``/mcp`` lists the servers with
their actions (log in, reconnect, disable, enable: ``ui/commands/mcp_view.py``). Each waits
for the server on a thread worker, so the UI keeps drawing; what fails is told and
the text goes back to the input (nothing is lost). See ``ui/input/mcp_offers.py``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, assert_never

from rich.text import Text
from textual.message import Message

from agent_tui.mcp_catalog.browser import open_in_browser
from agent_tui.mcp_catalog.offers import PromptArgsError
from agent_tui.mcp_catalog.port import McpServers, servers_of
from agent_tui.ui.input.attachments import AttachmentRefused
from agent_tui.ui.commands.builtin import prompt_op
from agent_tui.ui.commands.registry import Command
from agent_tui.ui.input.mcp_offers import get_prompt, read_resources, with_resources
from agent_tui.ui.commands.mcp_view import DETAILS, McpAction, action_of, intro, mcp_items
from agent_tui.ui.widgets.prompt_input import SendMode

if TYPE_CHECKING:
    from rich.console import RenderableType

    # pydantic models: imported when a server first asks, not before the first frame
    from agent_tui.mcp_catalog.elicitation import ElicitAnswer, Elicitation

    from agent_tui.protocol import ImageAttachment, Op
    from agent_tui.ui.app.screen_slots import ScreenSlot
    from agent_tui.ui.link.core_host import CoreHost
    from agent_tui.ui.widgets.prompt_input import PromptInput
    from agent_tui.ui.widgets.status_line import StatusLine


class McpOffersChanged(Message):
    """An MCP server's state or lists changed (posted from the core's loop)."""


class McpElicitationAsked(Message):
    """An MCP server asks the user (posted from the core's loop); ``answer`` takes the reply."""

    def __init__(self, request: Elicitation, answer: concurrent.futures.Future[ElicitAnswer]) -> None:
        super().__init__()
        self.request = request
        self.answer = answer


class McpHost(Protocol):
    """What the app's side of MCP uses of the app."""

    host: CoreHost
    status: StatusLine
    prompt: PromptInput
    picker_slot: ScreenSlot[Any]

    def submit(self, op: Op) -> None: ...
    def notice(self, level: str, text: str) -> None: ...
    def show_page(self, title: str, body: RenderableType) -> None: ...
    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any: ...
    def post_message(self, message: Message) -> bool: ...
    def push_screen(self, screen: Any, callback: Callable[[Any], None]) -> Any: ...
    def run_worker(self, work: Callable[[], None], *, thread: bool, exclusive: bool, group: str) -> object: ...


class McpRequests:
    """MCP resources and prompts asked for the user, and the ``/mcp`` actions."""

    def __init__(self, app: McpHost) -> None:
        self.app = app
        self.watched: McpServers | None = None  # the servers whose changes refresh an open menu

    def manager(self) -> McpServers | None:
        session = self.app.host.session
        manager = servers_of(session.background) if session is not None else None
        if manager is not None and manager is not self.watched:
            self.watched = manager

            def changed(_what: object) -> None:
                # From the core's loop: posted, never waited for (the UI may be waiting on it).
                self.app.post_message(McpOffersChanged())

            manager.on_status(changed)  # ready, or gone
            manager.on_catalog(changed)  # lists changed
            manager.set_elicitor(self.elicit)
        return manager

    # -- a server asks the user (elicitation) ---------------------------------------

    async def elicit(self, request: Elicitation) -> ElicitAnswer:
        """On the core's loop: show the question, await the answer. Cancelled (the
        server withdrew it, or the call ended): the dialog closes."""
        answer: concurrent.futures.Future[ElicitAnswer] = concurrent.futures.Future()
        self.app.post_message(McpElicitationAsked(request, answer))
        try:
            return await asyncio.wrap_future(answer)
        finally:
            answer.cancel()  # no-op once answered

    def ask(self, message: McpElicitationAsked) -> None:
        """On the app's thread: the dialog, its answer to the waiting server."""
        from agent_tui.ui.screens.elicitation import ElicitationScreen

        if message.answer.done():  # withdrawn before it was shown
            return
        screen = ElicitationScreen(message.request)

        def answered(answer: ElicitAnswer | None) -> None:
            if answer is None or message.answer.done():
                return
            message.answer.set_result(answer)
            from agent_tui.mcp_catalog.elicitation import ElicitAction

            if answer.action is ElicitAction.ACCEPT and message.request.url:
                opened = open_in_browser(lambda text: self.app.notice("info", text), console=False,
                                         why=f"answer MCP server {message.request.server}")
                opened(message.request.url)

        def withdrawn(done: concurrent.futures.Future[ElicitAnswer]) -> None:
            if done.cancelled():
                screen.post_message(ElicitationScreen.Withdrawn())  # thread-safe

        message.answer.add_done_callback(withdrawn)
        self.app.push_screen(screen, answered)

    def offers_changed(self) -> None:
        """A menu open on MCP prompts or resources shows the servers' lists as they are now."""
        completer = getattr(self.app.prompt, "completer", None)
        if completer is not None:
            completer.refresh()

    def send_with_resources(self, typed: str, text: str, images: list[ImageAttachment],
                            mode: SendMode, wanted: list[tuple[str, str]]) -> None:
        """Read the resources ``typed`` mentions, then send ``text`` with them."""
        manager = self.manager()
        if manager is None:  # (mentions name the servers of a session that has some)
            self._refused(typed, "not sent: the session has no MCP servers")
            return
        names = ", ".join(f"{s}:{u}" for s, u in wanted)
        self.app.notice("info", f"reading {names}…")

        def work() -> None:
            try:
                blocks, found = read_resources(manager, wanted)
            except AttachmentRefused as exc:
                self.app.call_from_thread(self._refused, typed, f"not sent: {exc}")
                return
            self.app.call_from_thread(self._send, with_resources(text, blocks), [*images, *found], mode)

        self.app.run_worker(work, thread=True, exclusive=False, group="mcp")

    def run_prompt(self, command: Command, args: str, mode: SendMode) -> None:
        manager = self.manager()
        typed = f"/{command.name}" + (f" {args}" if args else "")
        if manager is None:
            self._refused(typed, f"/{command.name}: the session has no MCP servers")
            return
        self.app.notice("info", f"getting the prompt {command.name}…")

        def work() -> None:
            try:
                text, images = get_prompt(manager, command, args)
            except (PromptArgsError, AttachmentRefused) as exc:
                self.app.call_from_thread(self._refused, typed, str(exc))
                return
            self.app.call_from_thread(self._send, text, images, mode)

        self.app.run_worker(work, thread=True, exclusive=False, group="mcp")

    # -- /mcp ------------------------------------------------------------------------

    def open(self) -> None:
        from agent_tui.ui.screens.picker import PickerScreen

        manager = self.manager()
        if manager is None:
            from agent_tui.ui.commands import reports  # pydantic's: not for the first frame

            self.app.show_page("MCP servers", reports.mcp_report(None))
            return
        statuses = manager.status()
        oauth = {name: manager.uses_oauth(name) for name in manager.servers()}

        def chosen(choice: str | None) -> None:
            if choice is not None:
                self._act(manager, choice)

        if not self.app.picker_slot.is_open:
            self.app.picker_slot.open(PickerScreen("MCP servers", intro(statuses), mcp_items(statuses, oauth),
                                               empty="no MCP servers"), chosen)

    def _act(self, manager: McpServers, choice: str) -> None:
        from agent_tui.mcp_catalog.browser import LOGIN_TIMEOUT_S, open_in_browser

        if choice == DETAILS:
            from agent_tui.ui.commands import reports  # pydantic's: not for the first frame

            self.app.show_page("MCP servers", reports.mcp_report(manager.status()))
            return
        picked = action_of(choice)
        if picked is None:
            return
        action, name = picked
        wait = 60.0
        match action:
            case McpAction.LOGIN:
                show = open_in_browser(lambda text: self.app.call_from_thread(self._login_url, name, text),
                                       console=False)
                work, doing, done, wait = manager.login(name, show), "logging in to", "logged in; connecting again", LOGIN_TIMEOUT_S + 30
            case McpAction.RECONNECT:
                work, doing, done = manager.restart_server(name), "reconnecting", "connecting again"
            case McpAction.DISABLE:
                work, doing, done = manager.set_enabled(name, False), "disabling", "disabled"
            case McpAction.ENABLE:
                work, doing, done = manager.set_enabled(name, True), "enabling", "enabled; starting"
            case _:
                assert_never(action)
        self.app.notice("info", f"MCP: {doing} {name}…")

        def run() -> None:
            try:
                manager.from_thread(work).result(wait)
            except Exception as exc:  # noqa: BLE001 - worded for the user
                self.app.call_from_thread(self.app.notice, "warning", f"MCP server {name}: {exc or type(exc).__name__}")
                return
            self.app.call_from_thread(self.app.notice, "info", f"MCP server {name}: {done}")

        self.app.run_worker(run, thread=True, exclusive=False, group="mcp")

    def _login_url(self, name: str, text: str) -> None:
        self.app.show_page(f"MCP login: {name}", Text(text))

    def _refused(self, typed: str, why: str) -> None:
        self.app.notice("warning", why)
        self.app.prompt.put_back(typed)  # fix it and send again (before what is typed since)

    def _send(self, text: str, images: list[ImageAttachment], mode: SendMode) -> None:
        self.app.status.clear_notice()
        self.app.submit(prompt_op(text, mode, images))
