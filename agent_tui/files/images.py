"""Images the model can look at: PNG, JPEG, GIF and WebP, as image content blocks.

Recognised by their first bytes, never by the file name; sent base64-encoded, within
the API's 5 MB limit on the encoded image and its 8000x8000 pixels (read from the
header: ``image_limits.py``); a larger one is described, not sent.
The same checks serve ``read_file`` and the images a user attaches to a message
(:func:`attachment_from`, :func:`check_attachment`).
"""

from __future__ import annotations

import base64
import binascii
import io
import os
from typing import TYPE_CHECKING, Any, BinaryIO

from agent_tui.image_limits import MAX_EDGE, MAX_IMAGE_BASE64, pixel_size
from agent_tui.units import format_bytes

if TYPE_CHECKING:  # the model is imported where one is made: not for the first frame
    from agent_tui.protocol import ImageAttachment

MAX_ENCODED = MAX_IMAGE_BASE64
MAX_RAW = MAX_ENCODED * 3 // 4
SNIFF_BYTES = 16
TYPES_WORDED = "a PNG, JPEG, GIF or WebP image"


class ImageRefused(Exception):
    """The image cannot be sent; the message says why, for the user."""


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
    encoded = base64.b64encode(data).decode("ascii")
    from agent_tui.protocol import ImageAttachment

    return ImageAttachment(media_type=media_type, data=encoded).block()


def _too_large(shown: str, size: int) -> str:
    return (f"{shown}: {format_bytes(size)}, larger than the {MAX_ENCODED // 2**20} MB "
            "the model can be sent")


def _too_many_pixels(fh: BinaryIO) -> str | None:
    """Why the image is too large in pixels for the model, or None."""
    size = pixel_size(fh)
    if size is None or max(size) <= MAX_EDGE:
        return None
    return (f"{size[0]}x{size[1]} pixels, larger than the {MAX_EDGE}x{MAX_EDGE} the model "
            "can be sent")


def read_image(fh: BinaryIO, size: int, media_type: str) -> tuple[str, list[dict[str, Any]] | None]:
    """(the text the model is told, the image block or None when too large)."""
    if size > MAX_RAW:
        return (f"{media_type} image, {size} bytes: larger than the {MAX_ENCODED // 2**20} MB "
                "the model can be sent (not shown)"), None
    too_large = _too_many_pixels(fh)
    if too_large is not None:
        return f"{media_type} image, {size} bytes, {too_large} (not shown)", None
    fh.seek(0)
    data = fh.read(MAX_RAW + 1)
    return f"{media_type} image, {len(data)} bytes (shown to you below)", [image_block(data, media_type)]


def probe(fh: BinaryIO, shown: str) -> tuple[str, int]:
    """(media type, size) of the image ``fh`` holds, from its first bytes; raises
    :class:`ImageRefused` when it is no image the model takes or is too large (in bytes,
    or in pixels: its header says)."""
    size = os.fstat(fh.fileno()).st_size
    media = sniff_image(fh.read(SNIFF_BYTES))
    if media is None:
        raise ImageRefused(f"{shown}: not {TYPES_WORDED}")
    if size > MAX_RAW:
        raise ImageRefused(_too_large(shown, size))
    too_large = _too_many_pixels(fh)
    if too_large is not None:
        raise ImageRefused(f"{shown}: {too_large}")
    return media, size


def attachment_from(fh: BinaryIO, shown: str) -> ImageAttachment:
    """The image ``fh`` holds, to send with a message (``shown``: its name for people)."""
    media, _size = probe(fh, shown)
    fh.seek(0)
    data = fh.read(MAX_RAW + 1)
    if len(data) > MAX_RAW:  # it grew since its size was read
        raise ImageRefused(_too_large(shown, len(data)))
    from agent_tui.protocol import ImageAttachment

    return ImageAttachment(media_type=media, data=base64.b64encode(data).decode("ascii"),
                           path=shown, size=len(data))


def check_attachment(image: ImageAttachment) -> ImageAttachment:
    """An image a client sent as data: valid base64, within the limit, and of the type
    it says (the API refuses any other, and the journal would keep sending it)."""
    shown = image.label
    if len(image.data) > MAX_ENCODED:
        raise ImageRefused(_too_large(shown, len(image.data) * 3 // 4))
    try:
        raw = base64.b64decode(image.data, validate=True)
    except (binascii.Error, ValueError):
        raise ImageRefused(f"{shown}: its data is not valid base64") from None
    media = sniff_image(raw[:SNIFF_BYTES])
    if media is None:
        raise ImageRefused(f"{shown}: not {TYPES_WORDED}")
    if media != image.media_type:
        raise ImageRefused(f"{shown}: its bytes are {media}, not {image.media_type}")
    too_large = _too_many_pixels(io.BytesIO(raw))
    if too_large is not None:
        raise ImageRefused(f"{shown}: {too_large}")
    return image.model_copy(update={"size": len(raw)})
