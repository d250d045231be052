"""An image's pixel size from its header, and what it costs in tokens, as the
Messages API counts (the vision guide's formula)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess

import pytest

from agent_tui.image_limits import MAX_IMAGE_TOKENS, image_tokens, pixel_size
from tests.image_files import gif, jpeg, png, webp

SIZES = [(1, 1), (37, 21), (1568, 1000), (8000, 8000), (8001, 3), (3, 9000), (16383, 16383)]
FILES = {
    "png": png, "gif": gif, "jpeg": jpeg,
    "progressive jpeg": lambda w, h: jpeg(w, h, progressive=True),
    "jpeg after a 60 KB Exif segment": lambda w, h: jpeg(w, h, exif=60_000),
    "jpeg with fill bytes": lambda w, h: jpeg(w, h, fill=True),
    "webp lossy": webp, "webp lossless": lambda w, h: webp(w, h, "VP8L"),
    "webp extended": lambda w, h: webp(w, h, "VP8X"),
}


@pytest.mark.parametrize("kind", FILES)
@pytest.mark.parametrize("size", SIZES)
def test_the_header_tells_the_pixel_size(kind, size):
    if kind == "png" and size[0] * size[1] > 10_000_000:
        size = (size[0], 2)  # a real PNG: keep its rows few
    if kind == "gif" and max(size) > 65535:
        pytest.skip("GIF sizes are 16 bits")
    data = FILES[kind](*size)
    assert pixel_size(io.BytesIO(data)) == size


@pytest.mark.skipif(shutil.which("file") is None, reason="file(1) is not installed")
@pytest.mark.parametrize("kind", ["png", "gif", "jpeg", "progressive jpeg", "webp lossy"])
def test_the_files_made_here_say_the_same_to_file(kind, tmp_path):
    """The made files are what their formats say: file(1) reads the same size."""
    path = tmp_path / "image"
    path.write_bytes(FILES[kind](37, 21))
    said = subprocess.run(["file", "-b", str(path)], capture_output=True, text=True).stdout
    assert re.search(r"\b37 ?x ?21\b", said), said


@pytest.mark.parametrize("data", [
    b"", b"\x89PNG\r\n\x1a\n", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDX" + b"\0" * 16,
    png(3, 3)[:20], b"GIF89a\x01", b"\xff\xd8\xff\xe0\x00", jpeg(5, 5)[:30],
    b"\xff\xd8\xff\xda\x00\x02", webp(4, 4)[:24], b"RIFF\0\0\0\0WEBPVP8 " + b"\0" * 20,
    png(0, 0), b"not an image at all, just words",
])
def test_a_header_that_does_not_say_gives_none(data):
    assert pixel_size(io.BytesIO(data)) is None


def test_image_tokens_follow_the_api_formula():
    assert image_tokens(200, 200) == 54  # 40000 / 750, rounded up
    assert image_tokens(1000, 1000) == 1334
    assert image_tokens(1092, 1092) == 1590  # the guide's 1:1 example: about 1590
    assert image_tokens(8000, 8000) == MAX_IMAGE_TOKENS  # scaled down first
    assert image_tokens(1568, 100) == 210  # long and thin: not capped
    assert image_tokens(4000, 100) == 82  # scaled to 1568 x 39.2
    assert image_tokens(1, 1) == 1


def test_one_list_of_image_types():
    """The protocol's image type and the API's list are the same types."""
    from typing import get_args

    from agent_tui.protocol.ops import ImageMediaType
    from agent_tui.image_limits import IMAGE_TYPES

    assert sorted(get_args(ImageMediaType)) == sorted(IMAGE_TYPES)
