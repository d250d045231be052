"""The app's side of what MCP servers offer (a mixin of ``ui/app.py``): a message that
mentions ``@server:uri`` resources is sent once they are read, and an MCP prompt
command (``/mcp__server__prompt``) once the prompt is got. Both wait for the server
on a thread worker, so the UI keeps drawing; what fails is told and the text goes
back to the input (nothing is lost). See ``ui/mcp_offers.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_tui.protocol import ImageAttachment
from agent_tui.tools.mcp.catalog import PromptArgsError
from agent_tui.ui.attachments import AttachmentRefused
from agent_tui.ui.commands.builtin import prompt_op
from agent_tui.ui.commands.registry import Command
from agent_tui.ui.mcp_offers import get_prompt, manager_of, read_resources, with_resources
from agent_tui.ui.widgets.prompt_input import SendMode

if TYPE_CHECKING:
    from agent_tui.protocol import Op
    from agent_tui.ui.core_host import CoreHost
    from agent_tui.ui.widgets.attachment_bar import AttachmentBar
    from agent_tui.ui.widgets.prompt_input import PromptInput
    from agent_tui.ui.widgets.status_line import StatusLine


class McpMixin:
    """Mixin of the app: what it needs of it is declared here."""

    host: CoreHost
    status: StatusLine
    prompt: PromptInput
    attachment_bar: AttachmentBar

    if TYPE_CHECKING:  # the app's own, for the type checker (never shadowing it)
        def submit(self, op: Op) -> None: ...
        def notice(self, level: str, text: str) -> None: ...
        def run_worker(self, work: Any, **kwargs: Any) -> Any: ...
        def call_from_thread(self, fn: Any, *args: Any) -> Any: ...

    def mcp_manager(self) -> Any:
        session = self.host.session
        return manager_of(list(session.background)) if session is not None else None

    def send_with_resources(self, typed: str, text: str, images: list[ImageAttachment],
                            mode: SendMode, wanted: list[tuple[str, str]]) -> None:
        """Read the resources ``typed`` mentions, then send ``text`` with them."""
        manager = self.mcp_manager()
        names = ", ".join(f"{s}:{u}" for s, u in wanted)
        self.notice("info", f"reading {names}…")

        def work() -> None:
            try:
                blocks, found = read_resources(manager, wanted)
            except AttachmentRefused as exc:
                self.call_from_thread(self._mcp_refused, typed, f"not sent: {exc}")
                return
            self.call_from_thread(self._mcp_send, with_resources(text, blocks), [*images, *found], mode)

        self.run_worker(work, thread=True, exclusive=False, group="mcp")

    def run_mcp_prompt(self, command: Command, args: str, mode: SendMode) -> None:
        manager = self.mcp_manager()
        typed = f"/{command.name}" + (f" {args}" if args else "")
        if manager is None:
            self._mcp_refused(typed, f"/{command.name}: the session has no MCP servers")
            return
        self.notice("info", f"getting the prompt {command.name}…")

        def work() -> None:
            try:
                text, images = get_prompt(manager, command, args)
            except (PromptArgsError, AttachmentRefused) as exc:
                self.call_from_thread(self._mcp_refused, typed, str(exc))
                return
            self.call_from_thread(self._mcp_send, text, images, mode)

        self.run_worker(work, thread=True, exclusive=False, group="mcp")

    def _mcp_refused(self, typed: str, why: str) -> None:
        self.notice("warning", why)
        self.prompt.put_back(typed)  # fix it and send again (before what is typed since)

    def _mcp_send(self, text: str, images: list[ImageAttachment], mode: SendMode) -> None:
        self.status.clear_notice()
        self.submit(prompt_op(text, mode, images))
