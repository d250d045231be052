"""What a server offers besides tools: its resources and its prompts.

They are listed when the server is ready (each only when the server's capabilities
say it has them) and again when it says they changed
(``notifications/resources/list_changed``, ``notifications/prompts/list_changed``).
The TUI offers resources as ``@server:uri`` mentions and prompts as
``/mcp__server__prompt`` commands; what a read or a ``prompts/get`` returns becomes
text (and images) for the model here.
"""

from __future__ import annotations

import base64
import shlex
from enum import StrEnum
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agent_tui.providers.images import IMAGE_TYPES, MAX_IMAGE_BASE64
from agent_tui.units import format_bytes

if TYPE_CHECKING:  # the SDK is imported by what talks to a server: the TUI lists and
    # parses without it (its first frame does not pay for the SDK's models)
    import mcp_types as types
    from mcp.client.session import ClientSession

    from agent_tui.protocol import ImageAttachment

_LIST_PAGES = 50
#: The most text one resource may put in a message.
MAX_RESOURCE_CHARS = 100_000
PROMPT_PREFIX = "mcp__"


class Offer(StrEnum):
    """What a list_changed notification names."""

    TOOLS = "tools"
    RESOURCES = "resources"
    PROMPTS = "prompts"


CHANGED: dict[str, Offer] = {
    "notifications/tools/list_changed": Offer.TOOLS,
    "notifications/resources/list_changed": Offer.RESOURCES,
    "notifications/prompts/list_changed": Offer.PROMPTS,
}


async def list_resources(session: ClientSession) -> list[types.Resource]:
    caps = _caps(session)
    if caps is not None and caps.resources is None:
        return []
    return await _every_page(session.list_resources, lambda page: page.resources)


async def list_prompts(session: ClientSession) -> list[types.Prompt]:
    caps = _caps(session)
    if caps is not None and caps.prompts is None:
        return []
    return await _every_page(session.list_prompts, lambda page: page.prompts)


async def _every_page(list_page: Callable[..., Awaitable[Any]],
                      items: Callable[[Any], list[Any]]) -> list[Any]:
    """A paginated list, page after page (at most ``_LIST_PAGES`` of them)."""
    import mcp_types as types

    found: list[Any] = []
    cursor: str | None = None
    for _ in range(_LIST_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await list_page(params=params)
        found.extend(items(page))
        cursor = page.next_cursor
        if not cursor:
            break
    return found


def _caps(session: ClientSession) -> types.ServerCapabilities | None:
    result = session.initialize_result
    return result.capabilities if result is not None else None


# -- prompts as commands ----------------------------------------------------------------


def prompt_command(server: str, prompt: str) -> str:
    """The slash command a prompt is offered as (without the ``/``)."""
    return f"{PROMPT_PREFIX}{server}__{prompt}"


def prompt_usage(prompt: types.Prompt) -> str:
    """How its arguments are written: ``NAME`` when required, ``[NAME]`` when not."""
    return " ".join(a.name if a.required else f"[{a.name}]" for a in prompt.arguments or [])


class PromptArgsError(ValueError):
    """The arguments typed do not fit the prompt; the message says how they should be."""


def prompt_arguments(prompt: types.Prompt, typed: str) -> dict[str, str]:
    """The typed words (split as a shell would, quotes keep spaces) mapped in order to
    the prompt's arguments; the last one takes what is left over."""
    try:
        words = shlex.split(typed)
    except ValueError as exc:
        raise PromptArgsError(f"cannot read the arguments: {exc}") from None
    names = [a.name for a in prompt.arguments or []]
    if len(words) > len(names) and names:
        words = [*words[: len(names) - 1], " ".join(words[len(names) - 1 :])]
    elif words and not names:
        raise PromptArgsError("this prompt takes no arguments")
    values = dict(zip(names, words, strict=False))
    missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in values]
    if missing:
        raise PromptArgsError(f"missing {', '.join(missing)}")
    return values


def prompt_text(result: types.GetPromptResult) -> tuple[str, list[ImageAttachment]]:
    """A prompt's messages as one message to send: their text in order (an assistant
    message marked as such), and their images."""
    parts: list[str] = []
    images: list[ImageAttachment] = []
    for message in result.messages:
        text, found = _content(message.content)
        images.extend(found)
        if text:
            parts.append(text if message.role == "user" else f"(assistant) {text}")
    return "\n\n".join(parts), images


def _content(content: object) -> tuple[str, list[ImageAttachment]]:
    import mcp_types as types

    from agent_tui.protocol import ImageAttachment

    if isinstance(content, types.TextContent):
        return content.text, []
    if isinstance(content, types.ImageContent):
        if content.mime_type in IMAGE_TYPES and len(content.data) <= MAX_IMAGE_BASE64:
            return "", [ImageAttachment(media_type=content.mime_type, data=content.data,
                                        size=len(content.data) * 3 // 4)]
        return f"[image {content.mime_type}, not sent: the model takes PNG, JPEG, GIF and WebP, up to {format_bytes(MAX_IMAGE_BASE64)}]", []
    if isinstance(content, types.EmbeddedResource):
        res = content.resource
        if isinstance(res, types.TextResourceContents):
            return res.text, []
        return f"[resource {res.uri}: {res.mime_type or 'binary'}]", []
    return f"[{getattr(content, 'type', 'content')} not shown]", []


# -- resources as mentions --------------------------------------------------------------


def resource_mention(server: str, uri: str) -> str:
    """How a resource is mentioned in a message: ``@server:uri``."""
    return f"@{server}:{uri}"


def split_mention(word: str, servers: set[str]) -> tuple[str, str] | None:
    """``server:uri`` -> (server, uri) when ``server`` is one of ``servers``."""
    server, sep, uri = word.partition(":")
    if not sep or not uri or server not in servers:
        return None
    return server, uri


def resource_block(server: str, uri: str, result: types.ReadResourceResult) -> tuple[str, list[ImageAttachment]]:
    """A read resource as the block that follows the message (its text, bounded), and
    the images among its contents."""
    import mcp_types as types

    from agent_tui.protocol import ImageAttachment

    texts: list[str] = []
    images: list[ImageAttachment] = []
    for item in result.contents:
        if isinstance(item, types.TextResourceContents):
            texts.append(item.text)
        elif item.mime_type in IMAGE_TYPES and len(item.blob) <= MAX_IMAGE_BASE64:
            images.append(ImageAttachment(media_type=item.mime_type, data=item.blob,
                                          path=f"{server}:{item.uri}", size=len(item.blob) * 3 // 4))
            texts.append(f"[image {item.mime_type}, attached]")
        else:
            size = len(base64.b64decode(item.blob, validate=False)) if item.blob else 0
            texts.append(f"[binary {item.mime_type or 'data'}, {format_bytes(size)}, not shown]")
    body = "\n".join(texts)
    if len(body) > MAX_RESOURCE_CHARS:
        body = body[:MAX_RESOURCE_CHARS] + f"\n… (cut at {MAX_RESOURCE_CHARS} characters)"
    return f'<resource uri="{server}:{uri}">\n{body.rstrip(chr(10))}\n</resource>', images


__all__ = [
    "CHANGED",
    "MAX_RESOURCE_CHARS",
    "Offer",
    "PromptArgsError",
    "list_prompts",
    "list_resources",
    "prompt_arguments",
    "prompt_command",
    "prompt_text",
    "prompt_usage",
    "resource_block",
    "resource_mention",
    "split_mention",
]
