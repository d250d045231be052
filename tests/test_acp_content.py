"""ACP prompt content at parity with the TUI: images and embedded resources reach the
model. The SDK's client drives the real ``agent-tui acp`` against the fake API, which
checks image blocks as the API does."""

from __future__ import annotations

import base64

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    TextResourceContents,
)

from tests.fake_api import Reply
from tests.acp_client import RecordingClient, spawn
from tests.image_files import png


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@pytest.mark.asyncio
async def test_images_and_embedded_resources_reach_the_model(tmp_path, fake_api):
    fake_api.enqueue(Reply.text("two red squares and a note"))
    (tmp_path / "named.png").write_bytes(png(3, 3))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        caps = init.agent_capabilities.prompt_capabilities
        assert caps.image is True and caps.embedded_context is True and caps.audio is False
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        response = await conn.prompt(session_id=sid, prompt=[
            text_block("what is in these? also named.png"),
            ImageContentBlock(type="image", data=_b64(png()), mime_type="image/png"),
            EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(
                uri="file:///notes.md", text="remember the milk", mime_type="text/markdown")),
            EmbeddedResourceContentBlock(type="resource", resource=BlobResourceContents(
                uri="file:///shot.png", blob=_b64(png(4, 4)), mime_type="image/png")),
        ])
        assert response.stop_reason == "end_turn"
    assert fake_api.rejections == []
    content = fake_api.requests[0]["messages"][0]["content"]
    kinds = [b["type"] for b in content]
    assert kinds.count("image") == 3 and kinds[-1] == "text"
    text = content[-1]["text"]
    assert "what is in these?" in text and "file:///notes.md:\nremember the milk" in text


@pytest.mark.asyncio
@pytest.mark.parametrize("block, said", [
    (AudioContentBlock(type="audio", data=_b64(b"RIFF...."), mime_type="audio/wav"), "audio"),
    (ImageContentBlock(type="image", data="not base64!", mime_type="image/png"), "base64"),
    (ImageContentBlock(type="image", data=_b64(png()), mime_type="image/jpeg"), "image/png"),
    (ImageContentBlock(type="image", data=_b64(png()), mime_type="image/bmp"), "image/bmp"),
    (EmbeddedResourceContentBlock(type="resource", resource=BlobResourceContents(
        uri="file:///a.zip", blob=_b64(b"PK\x03\x04"), mime_type="application/zip")), "a.zip"),
])
async def test_content_that_cannot_be_sent_is_refused_by_name_and_nothing_is_sent(
        tmp_path, fake_api, block, said):
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        with pytest.raises(RequestError) as raised:
            await conn.prompt(session_id=sid, prompt=[text_block("look"), block])
        assert said in str(raised.value.data)
    assert fake_api.requests == []
