"""The app's user messages, in Claude Code's shape, as agent-tui's Ops.

``{"type": "user", "message": {"role": "user", "content": TEXT | [blocks]},
"parent_tool_use_id": null, "session_id": ...}``: text blocks are joined, image blocks
(base64) go with the message as images. ``client_composed: true`` (the SDK's
``verbatim_prompts``) sends the text as written: no slash command runs, no image path
it names is attached.
"""

from __future__ import annotations

from typing import Any, get_args

from agent_tui.files.images import ImageRefused, check_attachment
from agent_tui.protocol import ImageAttachment, UserMessage
from agent_tui.protocol.ops import ImageMediaType


class BadMessage(Exception):
    """A user message agent-tui cannot read (said on stderr; nothing is sent)."""


def user_message(line: dict[str, Any]) -> tuple[UserMessage, bool]:
    """The message and whether it is to be sent as written (``client_composed``)."""
    message = line.get("message")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        raise BadMessage("a user line needs \"message\": {\"role\": \"user\", \"content\": ...}")
    content = message.get("content")
    if isinstance(content, str):
        return UserMessage(text=content), bool(line.get("client_composed"))
    if not isinstance(content, list):
        raise BadMessage("message.content must be a string or a list of content blocks")
    texts: list[str] = []
    images: list[ImageAttachment] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "image":
            images.append(_image(block))
        else:
            raise BadMessage(f"content block of type {kind!r}: agent-tui takes text and image "
                             "blocks in a user message")
    return UserMessage(text="\n\n".join(texts), images=images), bool(line.get("client_composed"))


def _image(block: dict[str, Any]) -> ImageAttachment:
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        raise BadMessage("an image block needs a base64 source (a URL is not fetched)")
    media_type = source.get("media_type")
    if media_type not in get_args(ImageMediaType):
        raise BadMessage(f"image media_type {media_type!r}: use one of "
                         f"{', '.join(get_args(ImageMediaType))}")
    try:  # valid base64, of the type it says, within the API's limits
        return check_attachment(ImageAttachment(media_type=media_type,
                                                data=str(source.get("data", ""))))
    except ImageRefused as exc:
        raise BadMessage(f"image not sent: {exc}") from None
