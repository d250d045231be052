"""What an MCP server's prompts and resources become for the user: a prompt as a
slash command (``/mcp__server__prompt``) whose typed words are its arguments, a
resource as an ``@server:uri`` mention, and what a ``prompts/get`` or a resource read
returns as text (and images) for the model. The front ends use them; the MCP
servers' lists come from :mod:`agent_tui.mcp.catalog`.
"""

from __future__ import annotations

import base64
import shlex
from typing import TYPE_CHECKING

from agent_tui.image_limits import IMAGE_TYPES, MAX_IMAGE_BASE64
from agent_tui.units import format_bytes

if TYPE_CHECKING:  # the SDK's models: imported once a server answered, never for a menu
    import mcp_types as types

    from agent_tui.protocol import ImageAttachment

#: The most text one resource may put in a message.
MAX_RESOURCE_CHARS = 100_000
PROMPT_PREFIX = "mcp__"


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
    "MAX_RESOURCE_CHARS",
    "PROMPT_PREFIX",
    "PromptArgsError",
    "prompt_arguments",
    "prompt_command",
    "prompt_text",
    "prompt_usage",
    "resource_block",
    "resource_mention",
    "split_mention",
]
