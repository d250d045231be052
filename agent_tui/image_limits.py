"""What the Messages API takes in images, and what an image costs it.

The facts (Anthropic's vision guide): PNG, JPEG, GIF and WebP; at most 5 MB each
(base64); at most 8000x8000 pixels, or 2000x2000 once a request holds more than 20
images; at most 100 images a request; and a request of at most 32 MB. An image costs
about ``width * height / 750`` tokens, after the API scales one whose long edge passes
1568 pixels down to it (so one costs at most about 1600 tokens).

The pixel size is read from the image's header alone (PNG ``IHDR``, GIF's screen
descriptor, JPEG's first ``SOF`` marker, WebP's ``VP8``/``VP8L``/``VP8X`` chunk), never
by decoding it: :func:`pixel_size`.
"""

from __future__ import annotations

import math
import struct
from typing import BinaryIO

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGE_BASE64 = 5 * 1024 * 1024  # bytes of base64 text, per image
MAX_EDGE = 8000  # pixels, either side
MANY_IMAGES = 20  # a request with more images than this ...
MANY_IMAGES_EDGE = 2000  # ... takes none larger than this, either side
MAX_IMAGES = 100  # per request
MAX_REQUEST_BYTES = 32_000_000  # the whole request body ("32 MB")
PIXELS_PER_TOKEN = 750
SCALED_EDGE = 1568  # a longer edge is scaled down to this before the image is seen
MAX_IMAGE_TOKENS = 1600  # what a scaled image costs at most (about)

_JPEG_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7,
                       0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})  # TEM, RSTn: no length
_JPEG_MAX_SEGMENTS = 1000


def image_tokens(width: int, height: int) -> int:
    """The tokens an image of ``width`` x ``height`` pixels costs, as the API counts."""
    scale = min(1.0, SCALED_EDGE / max(width, height, 1))
    pixels = (width * scale) * (height * scale)
    return max(1, min(MAX_IMAGE_TOKENS, math.ceil(pixels / PIXELS_PER_TOKEN)))


def pixel_size(fh: BinaryIO) -> tuple[int, int] | None:
    """(width, height) of the PNG, GIF, JPEG or WebP image ``fh`` holds, from its
    header (``fh`` is read from its start); None when the header does not say."""
    fh.seek(0)
    head = fh.read(32)
    size: tuple[int, int] | None = None
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        if len(head) >= 24 and head[12:16] == b"IHDR":
            size = struct.unpack(">II", head[16:24])
    elif head[:6] in (b"GIF87a", b"GIF89a"):
        if len(head) >= 10:
            size = struct.unpack("<HH", head[6:10])
    elif head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        size = _webp(head)
    elif head.startswith(b"\xff\xd8"):
        size = _jpeg(fh)
    if size is None or not (size[0] and size[1]):
        return None
    return size


def _webp(head: bytes) -> tuple[int, int] | None:
    if len(head) < 30:
        return None
    chunk = head[12:16]
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":  # a key frame's start code
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and head[20] == 0x2F:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


def _jpeg(fh: BinaryIO) -> tuple[int, int] | None:
    """The first frame header's size, walking the segments from the start of image."""
    fh.seek(2)
    for _ in range(_JPEG_MAX_SEGMENTS):
        byte = fh.read(1)
        if byte != b"\xff":
            return None  # not at a marker: a damaged file
        marker = fh.read(1)
        while marker == b"\xff":  # fill bytes
            marker = fh.read(1)
        if not marker:
            return None
        code = marker[0]
        if code in _JPEG_STANDALONE:
            continue
        if code in (0xD9, 0xDA):  # end of image, or the scan data before any frame
            return None
        length_bytes = fh.read(2)
        if len(length_bytes) < 2:
            return None
        (length,) = struct.unpack(">H", length_bytes)
        if length < 2:
            return None
        if code in _JPEG_SOF:
            frame = fh.read(5)
            if len(frame) < 5:
                return None
            height, width = struct.unpack(">HH", frame[1:5])
            return width, height
        fh.seek(length - 2, 1)
    return None
