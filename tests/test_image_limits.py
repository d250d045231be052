"""Images the API would refuse are not sent: one over 8000 pixels a side is refused
with the reason wherever it comes from (a file read, a path in a message, data from a
client, an MCP result), and a conversation that gathers more images than one request
may hold (100; over 20 with one over 2000 pixels; over 32 MB) leaves the oldest out
of the request, says so, and keeps going: the strict fake API takes every request.
``/context`` counts an image as the API does, from its pixel size."""

from __future__ import annotations

import base64
import io
import os

import mcp_types
import pytest

from agent_tui.core.compaction.context_report import context_report
from agent_tui.protocol import ImageAttachment, UserMessage
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.image_limits import image_tokens
from agent_tui.tools.files import ReadFileTool
from agent_tui.files.image_paths import attach_named
from agent_tui.files.images import ImageRefused, check_attachment, probe
from agent_tui.mcp.content import render_content
from tests.fake_api import Reply
from tests.harness import start_session
from tests.image_files import jpeg, png

pytestmark = pytest.mark.asyncio

WHY = "9000x10 pixels, larger than the 8000x8000 the model can be sent"


def _attachment(data: bytes, path: str = "") -> ImageAttachment:
    return ImageAttachment(media_type="image/png", data=base64.b64encode(data).decode(),
                           path=path, size=len(data))


async def test_read_file_describes_an_image_over_8000_pixels_and_sends_none(fake_api, tmp_path):
    (tmp_path / "wide.png").write_bytes(png(9000, 10))
    fake_api.enqueue(Reply.tool_use("read_file", {"path": "wide.png"}), Reply.text("ok"))
    run = start_session(AnthropicProvider(api_key="k", base_url=fake_api.url), [ReadFileTool()],
                        tmp_path)
    run.submit(UserMessage(text="look at wide.png"))
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
    result = fake_api.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert WHY in str(result["content"]) and "(not shown)" in str(result["content"])
    assert "'image'" not in str(result["content"])


async def test_a_message_naming_an_image_over_8000_pixels_goes_without_it(tmp_path):
    (tmp_path / "tall.jpg").write_bytes(jpeg(10, 9000, exif=30_000))
    (tmp_path / "ok.png").write_bytes(png(8000, 2))
    op, refused = attach_named(UserMessage(text="see tall.jpg and ok.png"), tmp_path)
    assert refused == ["tall.jpg: 10x9000 pixels, larger than the 8000x8000 the model can be sent"]
    assert [i.path for i in op.images] == ["ok.png"]
    with open(tmp_path / "tall.jpg", "rb") as fh, pytest.raises(ImageRefused):
        probe(fh, "tall.jpg")


async def test_image_data_from_a_client_over_8000_pixels_is_refused():
    with pytest.raises(ImageRefused, match=WHY):
        check_attachment(_attachment(png(9000, 10)))
    assert check_attachment(_attachment(png(8000, 10))).size


async def test_an_mcp_image_over_8000_pixels_is_named_not_passed_on():
    data = base64.b64encode(png(9000, 10)).decode()
    result = mcp_types.CallToolResult(content=[
        mcp_types.ImageContent(type="image", data=data, mime_type="image/png")])
    text, images = render_content(result)
    assert images == []
    assert "9000x10 pixels: too large to pass on (at most 8000x8000 pixels)" in text


async def _turns(fake_api, tmp_path, batches: list[list[ImageAttachment]]):
    run = start_session(AnthropicProvider(api_key="k", base_url=fake_api.url), [], tmp_path)
    for n, images in enumerate(batches):
        fake_api.enqueue(Reply.text("seen"))
        run.submit(UserMessage(text=f"batch {n}", images=images))
        await run.idle(60)
    await run.close()
    assert fake_api.rejections == []
    assert [e.status for e in run.rec.of("turn_ended")] == ["completed"] * len(batches)
    return run


def _sent_images(request: dict) -> int:
    return sum(1 for m in request["messages"] for b in m["content"] if b["type"] == "image")


def _left_out_notes(request: dict) -> list[str]:
    return [b["text"] for m in request["messages"] for b in m["content"]
            if b["type"] == "text" and "left out of this request" in b["text"]]


async def test_more_than_20_images_leave_an_old_one_over_2000_pixels_out(fake_api, tmp_path):
    big = _attachment(png(2100, 2), "big.png")
    small = _attachment(png(4, 4))
    run = await _turns(fake_api, tmp_path, [[big], [small] * 20])
    last = fake_api.requests[-1]
    assert _sent_images(last) == 20
    assert _left_out_notes(last) == [
        "[An image (image/png, 2100x2 pixels) was here; it is left out of this request: a "
        "request of more than 20 images holds none larger than 2000x2000 pixels.]"]
    told = [e.text for e in run.rec.of("notice") if "left out" in e.text]
    assert len(told) == 1 and "2100x2 pixels" in told[0]
    # The journal keeps it: the first request sent it.
    assert _sent_images(fake_api.requests[0]) == 1


async def test_more_than_100_images_leave_the_oldest_out(fake_api, tmp_path):
    small = _attachment(png(4, 4))
    await _turns(fake_api, tmp_path, [[small] * 60, [small] * 50])
    last = fake_api.requests[-1]
    assert _sent_images(last) == 100
    assert len(_left_out_notes(last)) == 10
    first_user = last["messages"][0]["content"]
    assert all(b["type"] == "text" for b in first_user[:10])  # the oldest went


async def test_a_request_over_32_mb_leaves_the_oldest_images_out(fake_api, tmp_path):
    heavy = [_attachment(png(4, 4) + os.urandom(3_500_000)) for _ in range(7)]  # ~4.7 MB each
    await _turns(fake_api, tmp_path, [heavy[:4], heavy[4:]])
    last = fake_api.requests[-1]
    assert 0 < _sent_images(last) < 7
    assert all("32 MB" in note for note in _left_out_notes(last))
    assert len(_left_out_notes(last)) == 7 - _sent_images(last)


async def test_context_counts_an_image_by_its_pixels(fake_api, tmp_path):
    # Few pixels, many bytes: at 4 characters a token it would count as ~130,000 tokens.
    image = _attachment(png(300, 200) + b"\0" * 400_000)
    run = await _turns(fake_api, tmp_path, [[image]])
    report = context_report(run.session.deps, [])
    messages = next(i.tokens for i in report.items if i.label == "messages")
    assert image_tokens(300, 200) == 80
    assert 80 <= messages < 200
