"""A ``session/prompt``'s content blocks as the message the model gets, as in the TUI.

- text: as it is;
- a resource link: its URI (with its name as a Markdown link);
- an embedded text resource: its URI and its text;
- an image (``image`` block, or an embedded resource whose blob is an image): an image
  attachment, checked as stream-json's are (valid base64, the type it says, within the
  size limit);
- image files the text names are attached too, as in the TUI (``files/image_paths.py``).

What cannot be sent (audio, a binary resource that is no image, a refused image, an
empty prompt) is an ``invalid_params`` error naming it: nothing is sent, the prompt can
be sent again without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import RequestError
from pydantic import ValidationError

from agent_tui.protocol import ImageAttachment, UserMessage
from agent_tui.files.image_paths import attach_named
from agent_tui.files.images import ImageRefused


def _refused(details: str) -> RequestError:
    return RequestError.invalid_params({"details": details})


def _image(data: str, mime_type: str | None, shown: str) -> ImageAttachment:
    """An image block as an attachment (checked with the rest by ``attach_named``)."""
    try:
        return ImageAttachment(media_type=mime_type or "", data=data,
                               path=shown)
    except ValidationError:
        raise _refused(f"{shown or 'an image'}: {mime_type!r} is not an image type the model "
                       "takes (png, jpeg, gif, webp)") from None


def prompt_message(blocks: list[Any], workspace: Path) -> tuple[UserMessage, list[str]]:
    """The message, and the reasons image files its text names were not attached."""
    parts: list[str] = []
    images: list[ImageAttachment] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(block.uri if not block.name else f"[{block.name}]({block.uri})")
        elif kind == "image":
            images.append(_image(block.data, block.mime_type, block.uri or ""))
        elif kind == "resource" and hasattr(block.resource, "text"):
            parts.append(f"{block.resource.uri}:\n{block.resource.text}")
        elif kind == "resource" and (block.resource.mime_type or "").startswith("image/"):
            images.append(_image(block.resource.blob, block.resource.mime_type,
                                 block.resource.uri))
        elif kind == "resource":
            raise _refused(f"{block.resource.uri}: a binary resource of type "
                           f"{block.resource.mime_type or 'unknown'} cannot be sent to the "
                           "model (only text and images)")
        else:
            raise _refused(f"content of type {kind!r} is not supported (text, resources "
                           "and images)")
    text = "\n\n".join(p for p in parts if p)
    if not text.strip() and not images:
        raise _refused("the prompt is empty")
    try:
        message, refused = attach_named(UserMessage(text=text, images=images), workspace)
    except ImageRefused as exc:
        raise _refused(f"not sent: {exc}") from None
    return message, refused
