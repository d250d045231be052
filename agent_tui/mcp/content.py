"""A tool result's content blocks, as the model gets them: text, plus images.

- text: as is;
- images the model can read (PNG, JPEG, GIF, WebP) up to ``MAX_IMAGE_BYTES`` each and
  ``MAX_IMAGES`` per result become image blocks inside the ``tool_result``; the text
  says where each one was. Other images, and those over the caps, are named with their
  type and size;
- embedded resources: their text; a binary one is named with its URI, type and size;
- audio and resource links are named.

The text is bounded (``MAX_CONTENT_CHARS``); the structured content stands in for an
empty result.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
from typing import Any

import mcp_types as types

from agent_tui.image_limits import IMAGE_TYPES, MAX_EDGE, MAX_IMAGE_BASE64, pixel_size
from agent_tui.units import format_bytes

MAX_CONTENT_CHARS = 100_000
#: The Messages API's image types and its 5 MB cap (on the base64 text, the larger of
#: the two measures) and pixel size: ``image_limits.py``.
MAX_IMAGE_BYTES = MAX_IMAGE_BASE64
MAX_IMAGES = 8


def _pixel_size(data: str) -> tuple[int, int] | None:
    try:
        return pixel_size(io.BytesIO(base64.b64decode(data)))
    except (binascii.Error, ValueError):
        return None  # the API says what is wrong with it


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")


def render_content(result: types.CallToolResult) -> tuple[str, list[dict[str, Any]]]:
    """The result's text for the model (bounded), and its image blocks."""
    parts: list[str] = []
    images: list[dict[str, Any]] = []
    for block in result.content or []:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent):
            parts.append(_image(block, images))
        elif isinstance(block, types.AudioContent):
            parts.append(f"[audio {block.mime_type}, {_decoded_size(block.data)} bytes]")
        elif isinstance(block, types.ResourceLink):
            parts.append(f"[resource link {block.uri}]")
        elif isinstance(block, types.EmbeddedResource):
            res = block.resource
            if isinstance(res, types.TextResourceContents):
                parts.append(res.text)
            else:
                kind = res.mime_type or "binary"
                parts.append(f"[resource {res.uri}: {kind}, {_decoded_size(res.blob)} bytes]")
        else:
            parts.append(f"[{getattr(block, 'type', 'content')}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts)
    if len(text) > MAX_CONTENT_CHARS:
        cut = len(text) - MAX_CONTENT_CHARS
        text = text[:MAX_CONTENT_CHARS] + f"\n[... {cut} more characters cut]"
    return text, images


def _image(block: types.ImageContent, images: list[dict[str, Any]]) -> str:
    size = _decoded_size(block.data)
    named = f"[image {block.mime_type}, {size} bytes"
    if block.mime_type not in IMAGE_TYPES:
        return f"{named}: a type the model cannot read]"
    if len(block.data) > MAX_IMAGE_BYTES:
        return f"{named}: too large to pass on (at most {format_bytes(MAX_IMAGE_BYTES)})]"
    pixels = _pixel_size(block.data)
    if pixels is not None and max(pixels) > MAX_EDGE:
        return (f"{named}, {pixels[0]}x{pixels[1]} pixels: too large to pass on (at most "
                f"{MAX_EDGE}x{MAX_EDGE} pixels)]")
    if len(images) >= MAX_IMAGES:
        return f"{named}: not passed on (at most {MAX_IMAGES} images per result)]"
    images.append({
        "type": "image",
        "source": {"type": "base64", "media_type": block.mime_type, "data": block.data},
    })
    return f"{named}, attached as image {len(images)}]"


__all__ = ["MAX_CONTENT_CHARS", "MAX_IMAGES", "MAX_IMAGE_BYTES", "render_content"]
