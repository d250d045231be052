"""The fake API refuses images as the Messages API does (its 400 and 413 answers):
over 8000 pixels a side, over 2000 once a request holds more than 20 images, more
than 100 images, a request over 32 MB; and takes those within the limits."""

from __future__ import annotations

import base64

import anthropic
import pytest

from tests.fake_api import FakeAnthropicServer
from tests.fake_api.fixtures import fake_api  # noqa: F401  (fixture)
from tests.image_files import gif, jpeg, png, webp

MODEL = "claude-test"


@pytest.fixture
def client(fake_api: FakeAnthropicServer):  # noqa: F811
    with anthropic.Anthropic(base_url=fake_api.url, api_key="test", max_retries=0, timeout=30) as c:
        yield c
    assert fake_api.errors == []


def _image(data: bytes, media: str) -> dict:
    return {"type": "image",
            "source": {"type": "base64", "media_type": media, "data": base64.b64encode(data).decode()}}


def _send(client, content: list[dict]):
    return client.messages.create(model=MODEL, max_tokens=5,
                                  messages=[{"role": "user", "content": content}])


@pytest.mark.parametrize("made,media", [
    (png(8001, 2), "image/png"), (gif(2, 8001), "image/gif"),
    (jpeg(9000, 10), "image/jpeg"), (webp(8001, 5, "VP8X"), "image/webp"),
])
def test_an_image_over_8000_pixels_is_refused(fake_api, client, made, media):  # noqa: F811
    with pytest.raises(anthropic.BadRequestError) as ei:
        _send(client, [{"type": "text", "text": "look"}, _image(made, media)])
    assert ei.value.body["error"]["message"] == (
        "messages.0.content.1.image.source.base64.data: At least one of the image "
        "dimensions exceed max allowed size: 8000 pixels")


def test_an_image_of_8000_pixels_is_taken(fake_api, client):  # noqa: F811
    assert _send(client, [_image(png(8000, 2), "image/png"), {"type": "text", "text": "look"}])


def test_many_images_are_held_to_2000_pixels(fake_api, client):  # noqa: F811
    small = _image(png(4, 4), "image/png")
    big = _image(png(2001, 2), "image/png")
    assert _send(client, [small] * 19 + [big, {"type": "text", "text": "20 images"}])
    with pytest.raises(anthropic.BadRequestError) as ei:
        _send(client, [small] * 20 + [big, {"type": "text", "text": "21 images"}])
    assert ei.value.body["error"]["message"] == (
        "messages.0.content.20.image.source.base64.data: At least one of the image dimensions "
        "exceed max allowed size for many-image requests: 2000 pixels")


def test_more_than_100_images_are_refused(fake_api, client):  # noqa: F811
    small = _image(png(4, 4), "image/png")
    assert _send(client, [small] * 100 + [{"type": "text", "text": "100"}])
    with pytest.raises(anthropic.BadRequestError) as ei:
        _send(client, [small] * 101 + [{"type": "text", "text": "101"}])
    assert ei.value.body["error"]["message"] == "Too much media: 0 document pages + 101 images > 100"


def test_a_request_over_32_mb_is_refused(fake_api, client):  # noqa: F811
    with pytest.raises(anthropic.APIStatusError) as ei:
        _send(client, [{"type": "text", "text": "x" * 32_000_001}])
    assert ei.value.status_code == 413
    assert ei.value.body["error"]["type"] == "request_too_large"
