"""read_file on an image hands the model an image block it can look at."""

from __future__ import annotations

import base64

import pytest

from agent_tui.protocol import UserMessage
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.tools.files import ReadFileTool
from agent_tui.files.images import MAX_RAW, sniff_image
from tests.fake_api import Reply
from tests.harness import start_session
from tests.image_files import png

pytestmark = pytest.mark.asyncio


async def test_a_screenshot_read_reaches_the_model_as_an_image_block(fake_api, tmp_path):
    image = png()
    (tmp_path / "shot.png").write_bytes(image)
    fake_api.enqueue(Reply.tool_use("read_file", {"path": "shot.png"}), Reply.text("a red square"))
    run = start_session(AnthropicProvider(api_key="k", base_url=fake_api.url), [ReadFileTool()],
                        tmp_path)
    run.submit(UserMessage(text="what is in shot.png?"))
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
    result = fake_api.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    images = [b for b in result["content"] if b.get("type") == "image"]
    assert images and base64.b64decode(images[0]["source"]["data"]) == image
    assert images[0]["source"]["media_type"] == "image/png"


async def test_images_are_known_by_their_bytes_and_a_huge_one_is_only_described(fake_api,
                                                                               tmp_path):
    assert sniff_image(b"GIF89a...") == "image/gif"
    assert sniff_image(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"
    assert sniff_image(b"not an image") is None
    (tmp_path / "big.png").write_bytes(png() + b"\0" * (MAX_RAW + 10))
    (tmp_path / "fake.png").write_text("just text")
    fake_api.enqueue(Reply.tool_uses([("read_file", {"path": "big.png"}),
                                      ("read_file", {"path": "fake.png"})]), Reply.text("ok"))
    run = start_session(AnthropicProvider(api_key="k", base_url=fake_api.url), [ReadFileTool()],
                        tmp_path)
    run.submit(UserMessage(text="look"))
    await run.idle()
    await run.close()
    results = fake_api.requests[1]["messages"][-1]["content"]
    assert "larger than" in str(results[0]["content"]) and "image" not in [
        b.get("type") for b in results[0]["content"] if isinstance(results[0]["content"], list)]
    assert "just text" in str(results[1]["content"])
