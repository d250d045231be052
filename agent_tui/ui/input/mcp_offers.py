"""What MCP servers offer the user in the TUI: resources as ``@server:uri`` mentions
(in the ``@`` picker beside the files) and prompts as ``/mcp__server__prompt [args]``
commands (in the command menu and ``/help``).

The lists are read from the session's MCP servers (the port
:class:`agent_tui.mcp_catalog.port.McpServers`) each time a menu opens (a server
that says its resources or prompts changed is listed again by the manager, so the
next menu shows the new ones). Reading a resource or getting a prompt is a request to
the server, made on the core's loop from a thread worker (never on the UI's thread):
when a message is sent, each resource it mentions is read then and follows the
message as a ``<resource uri="server:uri">`` block (its images beside the text), as
a file mentioned with ``@`` does; a read that fails keeps the message in the input,
with the reason. A prompt's arguments are the words typed after it (quotes keep
spaces), in the order the prompt lists them; its messages are sent as the message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from agent_tui.files import shell_words
from agent_tui.mcp_catalog.offers import (
    PromptArgsError,
    prompt_arguments,
    prompt_command,
    prompt_text,
    prompt_usage,
    resource_mention,
    split_mention,
)
from agent_tui.ui.input.attachments import AttachmentRefused, mentions
from agent_tui.ui.commands.registry import ArgsNeed, Command, CommandKind
from agent_tui.ui.render.safe_text import clean, first_line
from agent_tui.ui.widgets.suggestions import Suggestion

if TYPE_CHECKING:
    from agent_tui.mcp_catalog.port import McpServers
    from agent_tui.protocol import ImageAttachment

#: How long the TUI waits for a resource or a prompt (the manager bounds it too).
WAIT_S = 35.0
MAX_RESOURCE_ITEMS = 50


# -- resources ----------------------------------------------------------------------


class ResourceItem:
    """A resource in the ``@`` picker."""

    def __init__(self, server: str, uri: str) -> None:
        self.server = server
        self.uri = uri

    @property
    def mention(self) -> str:
        return resource_mention(self.server, self.uri)


def resource_suggestions(manager: McpServers | None, query: str) -> list[Suggestion]:
    """The resources whose ``server:uri``, name or title holds ``query`` (every one
    for an empty query), as picker items."""
    if manager is None:
        return []
    q = query.lower()
    items = []
    for server, resource in manager.resources():
        uri = str(resource.uri)
        word = f"{server}:{uri}"
        hay = f"{word} {resource.name} {resource.title or ''}".lower()
        if q and q not in hay:
            continue
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(clean(word), style="bold")
        about = resource.title or resource.name
        if resource.description:
            about = f"{about}: {resource.description}"
        line.append(f"  {first_line(about, 80)}", style="dim")
        line.append("  (MCP resource)", style="dim")
        items.append(Suggestion(word, line, ResourceItem(server, uri)))
        if len(items) >= MAX_RESOURCE_ITEMS:
            break
    return items


def resource_mentions(text: str, manager: McpServers | None) -> list[tuple[str, str]]:
    """The ``@server:uri`` mentions in ``text`` that name one of the manager's servers,
    in the order written, each once."""
    if manager is None:
        return []
    servers = set(manager.servers())
    found: list[tuple[str, str]] = []
    for word in _ordered_mentions(text):
        pair = split_mention(word, servers)
        if pair is not None and pair not in found:
            found.append(pair)
    return found


def _ordered_mentions(text: str) -> list[str]:
    named = mentions(text)
    # mentions() is a set: put them back in the order they are written
    return sorted(named, key=lambda w: text.find(shell_words.escape(w)))


def read_resources(manager: McpServers, wanted: list[tuple[str, str]]) -> tuple[str, list[ImageAttachment]]:
    """Read each resource now (blocking: call it from a thread worker); the blocks to
    add after the message and their images, or AttachmentRefused with the reason."""
    from agent_tui.mcp_catalog import message

    try:
        return manager.from_thread(message.read_resources(manager, wanted)).result(WAIT_S)
    except message.OfferRefused as exc:
        raise AttachmentRefused(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - every failure is told, and nothing sent
        raise AttachmentRefused(f"{', '.join(resource_mention(*w) for w in wanted)}: {_why(exc)}") from None


def with_resources(text: str, blocks: str) -> str:
    return text.rstrip() + "\n\n" + blocks if blocks else text


# -- prompts ------------------------------------------------------------------------


def prompt_commands(manager: McpServers | None) -> list[Command]:
    """Each ready server's prompts as commands of kind ``mcp_prompt``."""
    if manager is None:
        return []
    commands = []
    for server, prompt in manager.prompts():
        required = any(a.required for a in prompt.arguments or [])
        commands.append(Command(
            name=prompt_command(server, prompt.name),
            description=first_line(prompt.description or prompt.title or prompt.name, 120),
            args=prompt_usage(prompt), need=ArgsNeed.REQUIRED if required else ArgsNeed.OPTIONAL,
            kind=CommandKind.MCP_PROMPT, scope=f"MCP {server}", spec=(server, prompt),
        ))
    return commands


def get_prompt(manager: McpServers, command: Command, typed: str) -> tuple[str, list[ImageAttachment]]:
    """The prompt's messages for ``typed`` (blocking: call it from a thread worker);
    raises PromptArgsError with what to type, or AttachmentRefused with why it failed."""
    server, prompt = command.spec
    try:
        arguments = prompt_arguments(prompt, typed)
    except PromptArgsError as exc:
        raise PromptArgsError(f"{exc}: usage {command.usage}") from None
    try:
        result = manager.from_thread(manager.get_prompt(server, prompt.name, arguments)).result(WAIT_S)
    except Exception as exc:  # noqa: BLE001 - told, and the line stays in the input
        raise AttachmentRefused(f"/{command.name}: {_why(exc)}") from None
    text, images = prompt_text(result)
    if not text.strip() and not images:
        raise AttachmentRefused(f"/{command.name}: the server's prompt is empty")
    return text, images


def _why(exc: BaseException) -> str:
    from agent_tui.mcp_catalog.message import why  # pydantic's: once a server answered

    return why(exc, WAIT_S)


__all__ = [
    "ResourceItem",
    "get_prompt",
    "prompt_commands",
    "read_resources",
    "resource_mentions",
    "resource_suggestions",
    "with_resources",
]
