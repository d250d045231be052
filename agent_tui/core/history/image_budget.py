"""The images of a model view, within what one Messages request may hold.

A conversation gathers images (pasted, attached, read by tools) and the API refuses a
request that holds more than ``MAX_IMAGES``, one over ``MANY_IMAGES`` that holds an
image larger than ``MANY_IMAGES_EDGE`` pixels, or one of more than
``MAX_REQUEST_BYTES`` (``image_limits.py``). Such a request would be refused
again with every message after, so the view leaves the oldest images out, each
replaced by a line that says what was there and why it is left out; the journal keeps
them all. :func:`fit_images` returns what it left out, for the user to be told.
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
import json
from dataclasses import dataclass
from typing import Any

from agent_tui.image_limits import (
    MANY_IMAGES,
    MANY_IMAGES_EDGE,
    MAX_IMAGE_TOKENS,
    MAX_IMAGES,
    MAX_REQUEST_BYTES,
    image_tokens,
    pixel_size,
)

# What the rest of a request takes besides its messages (system prompt, tools): kept
# free of images.
RESERVED_BYTES = 2_000_000
# The most text a view holds: a full context window (1M tokens is about 4 MB), twice over.
TEXT_BYTES = 8_000_000
_HEADER_CHARS = 4 * 65536  # base64 read for a header (a JPEG's frame may follow Exif)


@functools.lru_cache(maxsize=256)
def image_pixels(data: str) -> tuple[int, int] | None:
    """The pixel size of a base64 image, from its header."""
    try:
        head = base64.b64decode(data[: _HEADER_CHARS], validate=False)
    except (binascii.Error, ValueError):
        return None
    return pixel_size(io.BytesIO(head))


def block_image_tokens(block: dict[str, Any]) -> int:
    """What an image block costs in tokens (the most an image costs when its size
    cannot be read)."""
    source = block.get("source") or {}
    data = source.get("data") if isinstance(source, dict) else None
    size = image_pixels(data) if isinstance(data, str) else None
    return image_tokens(*size) if size is not None else MAX_IMAGE_TOKENS


@dataclass
class _Image:
    holder: list[dict[str, Any]]  # the content list it is in
    at: int
    chars: int
    size: tuple[int, int] | None
    media: str


def _images(messages: list[dict[str, Any]]) -> list[_Image]:
    """The view's images, oldest first: in user messages and in tool results."""
    found = []
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message["content"]
        for at, block in enumerate(content):
            if block.get("type") == "image":
                found.append(_image(content, at))
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                inner = block["content"]
                found.extend(_image(inner, k) for k, item in enumerate(inner)
                             if item.get("type") == "image")
    return found


def _image(holder: list[dict[str, Any]], at: int) -> _Image:
    source = holder[at].get("source") or {}
    data = source.get("data", "") if isinstance(source, dict) else ""
    size = image_pixels(data) if isinstance(data, str) and data else None
    return _Image(holder, at, len(data) if isinstance(data, str) else 0, size,
                  str(source.get("media_type", "image")) if isinstance(source, dict) else "image")


def _leave_out(image: _Image, why: str) -> str:
    pixels = f", {image.size[0]}x{image.size[1]} pixels" if image.size else ""
    said = f"{image.media}{pixels}"
    image.holder[image.at] = {
        "type": "text", "text": f"[An image ({said}) was here; it is left out of this request: {why}.]"}
    return f"{said}: {why}"


def fit_images(messages: list[dict[str, Any]]) -> list[str]:
    """Leave the oldest images out of ``messages`` (changed in place; their content
    lists must be the view's own) until the request fits; what was left out, and why."""
    images = _images(messages)
    if not images:
        return []
    left: list[str] = []
    kept = list(images)
    while len(kept) > MAX_IMAGES:
        left.append(_leave_out(kept.pop(0), f"a request holds at most {MAX_IMAGES} images"))
    for image in list(kept):
        if len(kept) <= MANY_IMAGES:
            break
        if image.size is not None and max(image.size) > MANY_IMAGES_EDGE:
            kept.remove(image)
            left.append(_leave_out(image, (
                f"a request of more than {MANY_IMAGES} images holds none larger than "
                f"{MANY_IMAGES_EDGE}x{MANY_IMAGES_EDGE} pixels")))
    if sum(i.chars for i in kept) + RESERVED_BYTES + TEXT_BYTES <= MAX_REQUEST_BYTES:
        return left  # far from the limit whatever the text: no need to measure it
    total = len(json.dumps(messages, ensure_ascii=False)) + RESERVED_BYTES
    while total > MAX_REQUEST_BYTES and kept:
        image = kept.pop(0)
        total -= image.chars
        left.append(_leave_out(image, f"the request would pass the API's "
                                      f"{MAX_REQUEST_BYTES // 1_000_000} MB"))
    return left
