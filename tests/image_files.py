"""Real image files of any pixel size, made by hand (no imaging library): a PNG that
decodes, and GIF, JPEG and WebP files whose headers are what their formats say."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 2, height: int = 2) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = zlib.compressobj()
    row = b"\0" + b"\x00\x80\xff" * width
    data = b"".join(rows.compress(row) for _ in range(height)) + rows.flush()
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", data) + chunk(b"IEND", b""))


def gif(width: int, height: int) -> bytes:
    screen = struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff"
    image = b"," + struct.pack("<HHHHB", 0, 0, width, height, 0) + b"\x02\x02\x44\x01\x00"
    return b"GIF89a" + screen + image + b";"


def _segment(marker: int, payload: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def jpeg(width: int, height: int, *, progressive: bool = False, exif: int = 0,
         fill: bool = False) -> bytes:
    """Baseline (or progressive) JPEG headers: JFIF, an optional Exif segment of
    ``exif`` bytes before the frame header (as cameras write), tables, the frame
    (after ``fill`` bytes, which a marker may have before it)."""
    parts = [b"\xff\xd8", _segment(0xE0, b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0")]
    if exif:
        parts.append(_segment(0xE1, b"Exif\0\0" + b"\0" * exif))
    parts.append(_segment(0xDB, b"\0" + bytes(range(1, 65))))
    if fill:
        parts.append(b"\xff\xff")
    frame = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
    parts.append(_segment(0xC2 if progressive else 0xC0, frame))
    parts.append(_segment(0xDA, b"\x01\x01\x00\x00\x3f\x00") + b"\x00" * 8 + b"\xff\xd9")
    return b"".join(parts)


def _riff(chunk: bytes, payload: bytes) -> bytes:
    body = chunk + struct.pack("<I", len(payload)) + payload + b"\0" * (len(payload) % 2)
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def webp(width: int, height: int, kind: str = "VP8") -> bytes:
    """A WebP file of the kind ``VP8`` (lossy), ``VP8L`` (lossless) or ``VP8X`` (extended)."""
    if kind == "VP8":
        frame = b"\x10\x02\x00" + b"\x9d\x01\x2a" + struct.pack("<HH", width, height)
        return _riff(b"VP8 ", frame + b"\0" * 10)
    if kind == "VP8L":
        bits = (width - 1) | ((height - 1) << 14)
        return _riff(b"VP8L", b"\x2f" + bits.to_bytes(4, "little") + b"\0" * 6)
    flags = b"\x10\0\0\0"
    canvas = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return _riff(b"VP8X", flags + canvas)


MAKERS = {"image/png": png, "image/gif": gif, "image/jpeg": jpeg, "image/webp": webp}
