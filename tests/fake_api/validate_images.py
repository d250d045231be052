"""The API's limits on images, as the fake checks them (its own reading of the
headers, apart from the agent's): at most 8000x8000 pixels each, 2000x2000 once a
request holds more than 20 images, 100 images a request. The wording is the real
API's 400 answers'."""

from __future__ import annotations

import base64
import binascii
import struct
from typing import Any

MAX_EDGE = 8000
MANY = 20
MANY_EDGE = 2000
MAX_MEDIA = 100
MAX_REQUEST_BYTES = 32_000_000  # a larger body is answered 413 request_too_large


def dimensions(raw: bytes) -> tuple[int, int] | None:
    """(width, height) from the header of a PNG, GIF, WebP or JPEG file."""
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR":
        return struct.unpack(">II", raw[16:24]) if len(raw) >= 24 else None
    if raw[:3] == b"GIF" and len(raw) >= 10:
        return struct.unpack("<HH", raw[6:10])
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP" and len(raw) >= 30:
        kind = raw[12:16]
        if kind == b"VP8 ":
            w, h = struct.unpack("<HH", raw[26:30])
            return w & 0x3FFF, h & 0x3FFF
        if kind == b"VP8L":
            b = struct.unpack("<I", raw[21:25])[0]
            return 1 + (b & 0x3FFF), 1 + ((b >> 14) & 0x3FFF)
        if kind == b"VP8X":
            return (1 + int.from_bytes(raw[24:27], "little"),
                    1 + int.from_bytes(raw[27:30], "little"))
        return None
    if raw[:2] == b"\xff\xd8":
        i = 2
        while i + 4 <= len(raw):
            if raw[i] != 0xFF:
                return None
            marker = raw[i + 1]
            if marker == 0xFF:
                i += 1
                continue
            if marker == 0x01 or 0xD0 <= marker <= 0xD7:
                i += 2
                continue
            if marker in (0xD9, 0xDA):
                return None
            length = struct.unpack(">H", raw[i + 2:i + 4])[0]
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                if i + 9 > len(raw):
                    return None
                h, w = struct.unpack(">HH", raw[i + 5:i + 9])
                return w, h
            i += 2 + length
    return None


def _decoded(block: dict) -> bytes | None:
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    try:
        return base64.b64decode(source.get("data") or "", validate=True)
    except (binascii.Error, ValueError):
        return None


def pixel_error(raw: bytes, where: str) -> str | None:
    """One image's pixel size (``where``: its path, ``...image``)."""
    size = dimensions(raw)
    if size is not None and max(size) > MAX_EDGE:
        return (f"{where}.source.base64.data: At least one of the image dimensions exceed "
                f"max allowed size: {MAX_EDGE} pixels")
    return None


def _images(body: dict) -> list[tuple[str, dict]]:
    found = []
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "image":
                found.append((f"messages.{i}.content.{j}.image", block))
            inner = block.get("content") if block.get("type") == "tool_result" else None
            if isinstance(inner, list):
                found.extend((f"messages.{i}.content.{j}.tool_result.content.{k}.image", sub)
                             for k, sub in enumerate(inner)
                             if isinstance(sub, dict) and sub.get("type") == "image")
    return found


def media_error(body: Any) -> str | None:
    """The request's images together: how many, and their size when there are many."""
    if not isinstance(body, dict):
        return None
    images = _images(body)
    if len(images) > MAX_MEDIA:
        return f"Too much media: 0 document pages + {len(images)} images > {MAX_MEDIA}"
    if len(images) > MANY:
        for where, block in images:
            raw = _decoded(block)
            size = dimensions(raw) if raw is not None else None
            if size is not None and max(size) > MANY_EDGE:
                return (f"{where}.source.base64.data: At least one of the image dimensions "
                        f"exceed max allowed size for many-image requests: {MANY_EDGE} pixels")
    return None
