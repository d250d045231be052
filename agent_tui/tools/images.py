"""Images the model can look at: PNG, JPEG, GIF and WebP, as image content blocks.

Recognised by their first bytes, never by the file name; sent base64-encoded, within
the API's 5 MB limit on the encoded image (a larger one is described, not sent).
"""

from __future__ import annotations

import base64
from typing import Any, BinaryIO

MAX_ENCODED = 5 * 1024 * 1024
MAX_RAW = MAX_ENCODED * 3 // 4


def sniff_image(head: bytes) -> str | None:
    """The image's media type from its first bytes, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_block(data: bytes, media_type: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type,
                                        "data": base64.b64encode(data).decode("ascii")}}


def read_image(fh: BinaryIO, size: int, media_type: str) -> tuple[str, list[dict[str, Any]] | None]:
    """(the text the model is told, the image block or None when too large)."""
    if size > MAX_RAW:
        return (f"{media_type} image, {size} bytes: larger than the {MAX_ENCODED // 2**20} MB "
                "the model can be sent (not shown)"), None
    fh.seek(0)
    data = fh.read(MAX_RAW + 1)
    return f"{media_type} image, {len(data)} bytes (shown to you below)", [image_block(data, media_type)]
