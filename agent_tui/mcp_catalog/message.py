"""A message that uses what MCP servers offer, made ready to send where no menu helps
(print mode, an ACP client): ``/mcp__server__prompt args`` becomes the prompt's
messages, and each ``@server:uri`` it mentions is read and follows the message as a
``<resource>`` block, as in the TUI (``ui/input/mcp_offers.py``).

Servers still starting are waited for (bounded): print mode sends its prompt at once.
What fails is an :class:`OfferRefused` with the reason, and nothing is sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from agent_tui.mcp_catalog.offers import (
    PROMPT_PREFIX,
    PromptArgsError,
    prompt_arguments,
    prompt_command,
    prompt_text,
    prompt_usage,
    resource_block,
    resource_mention,
)

if TYPE_CHECKING:
    from agent_tui.mcp_catalog.port import McpServers
    from agent_tui.protocol import ImageAttachment

M = TypeVar("M", bound=BaseModel)
#: How long a message waits for servers still starting.
START_WAIT_S = 30.0
_MENTION = re.compile(r"(?<!\S)@([A-Za-z0-9_-]+):(\S+)")


class OfferRefused(ValueError):
    """A prompt or a resource the message asks for cannot be had; nothing is sent."""


def uses_offers(text: str) -> bool:
    """Whether ``text`` may name a prompt or a resource (cheap: no server is asked)."""
    return text.lstrip().startswith("/" + PROMPT_PREFIX) or _MENTION.search(text) is not None


def mentioned(text: str, servers: set[str]) -> list[tuple[str, str]]:
    """The ``@server:uri`` mentions of ``servers`` in ``text``, in order, each once."""
    found: list[tuple[str, str]] = []
    for match in _MENTION.finditer(text):
        pair = (match.group(1), match.group(2))
        if pair[0] in servers and pair not in found:
            found.append(pair)
    return found


async def expand(manager: McpServers, text: str, *, wait_s: float = START_WAIT_S) -> tuple[str, list[ImageAttachment]]:
    """``text`` with its MCP prompt got and its resources read (on the servers' loop);
    raise :class:`OfferRefused`."""
    stripped = text.lstrip()
    wanted = mentioned(text, set(manager.servers()))
    if not stripped.startswith("/" + PROMPT_PREFIX) and not wanted:
        return text, []
    await manager.wait_started(wait_s)
    if stripped.startswith("/" + PROMPT_PREFIX):
        return await _prompt(manager, stripped[1:])
    blocks, images = await read_resources(manager, wanted)
    return text.rstrip() + "\n\n" + blocks, images


async def read_resources(manager: McpServers, wanted: list[tuple[str, str]]) -> tuple[str, list[ImageAttachment]]:
    """Each resource read now (on the servers' loop): the blocks that follow the
    message and their images; raise :class:`OfferRefused` naming the one that failed."""
    blocks: list[str] = []
    images: list[ImageAttachment] = []
    for server, uri in wanted:
        try:
            result = await manager.read_resource(server, uri)
        except Exception as exc:  # noqa: BLE001 - told, and nothing sent
            raise OfferRefused(f"{resource_mention(server, uri)}: {why(exc)}") from None
        block, found = resource_block(server, uri, result)
        blocks.append(block)
        images.extend(found)
    return "\n\n".join(blocks), images


async def _prompt(manager: McpServers, line: str) -> tuple[str, list[ImageAttachment]]:
    name, _, typed = line.partition(" ") if " " in line.split("\n", 1)[0] else line.partition("\n")
    offered = {prompt_command(server, p.name): (server, p) for server, p in manager.prompts()}
    if name not in offered:
        known = ", ".join(f"/{n}" for n in sorted(offered)) or "none"
        raise OfferRefused(f"/{name}: no such MCP prompt (the servers offer: {known})")
    server, prompt = offered[name]
    try:
        arguments = prompt_arguments(prompt, typed)
    except PromptArgsError as exc:
        raise OfferRefused(f"/{name}: {exc}: usage /{name} {prompt_usage(prompt)}".rstrip()) from None
    try:
        result = await manager.get_prompt(server, prompt.name, arguments)
    except Exception as exc:  # noqa: BLE001 - told, and nothing sent
        raise OfferRefused(f"/{name}: {why(exc)}") from None
    text, images = prompt_text(result)
    if not text.strip() and not images:
        raise OfferRefused(f"/{name}: the server's prompt is empty")
    return text, images


async def with_offers(background: Iterable[object] | None, op: M, refused: Callable[[str], None]) -> M | None:
    """A message op (``text``, ``images``) made ready by :func:`expand` with the
    session's servers (among its ``background`` work); None when refused (``refused``
    is told why)."""
    from agent_tui.mcp_catalog.port import servers_of

    text = getattr(op, "text", "")
    manager = servers_of(background)
    if manager is None or not uses_offers(text):
        return op
    try:
        text, images = await expand(manager, text)
    except OfferRefused as exc:
        refused(str(exc))
        return None
    return op.model_copy(update={"text": text, "images": [*getattr(op, "images", []), *images]})


def why(exc: BaseException, waited: float | None = None) -> str:
    """A failed read or get, in a few words for the user."""
    if isinstance(exc, TimeoutError):
        return f"no answer within {waited:g} s" if waited is not None else "no answer in time"
    message = getattr(exc, "message", None)
    from agent_tui.mcp_catalog.errors import short

    return str(message) if isinstance(message, str) and message else short(exc)


__all__ = ["START_WAIT_S", "OfferRefused", "expand", "mentioned", "read_resources", "uses_offers", "why",
           "with_offers"]
