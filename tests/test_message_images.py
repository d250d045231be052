"""Images in a user's message: a pasted image path (or one carried as data) reaches the
model as an image block beside the text, through the real SDK over HTTP to the fake
API; the journal keeps it, so a resumed session sends the same image; refusals say why."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path

import anthropic
import pytest

from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.journal_lines import parse_line
from agent_tui.core.journal.records import UserMessageRecord
from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.session.session import Session
from agent_tui.core.calls.tool import ToolSet
from agent_tui.protocol import FollowUp, ImageAttachment, Shutdown, UserMessage
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.files.image_paths import MAX_IMAGES, attach_named, find_images, named_files
from agent_tui.files.images import MAX_RAW, ImageRefused, check_attachment
from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.harness import Recorder, SlowTool, start_session
from tests.image_files import png
from tests.print_agent import env_for, events_of

GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"


def images_of(message: dict) -> list[dict]:
    return [b for b in message["content"] if b.get("type") == "image"]


def sent(block: dict) -> bytes:
    return base64.b64decode(block["source"]["data"])


@pytest.mark.asyncio
async def test_pasted_image_paths_reach_the_model_as_image_blocks_before_the_text(
        fake_api, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "Desktop").mkdir(parents=True)
    shot = tmp_path / "home" / "Desktop" / "Screen Shot 1.png"
    shot.write_bytes(png(3, 3))
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "anim.gif").write_bytes(GIF)
    text = (f"compare {str(shot).replace(' ', chr(92) + ' ')} with anim.gif, and "
            f"'~/Desktop/Screen Shot 1.png' again; logo.png is only a name")
    op, refused = attach_named(UserMessage(text=text), tmp_path / "ws")
    assert refused == []
    assert [(i.path, i.media_type) for i in op.images] == [(str(shot), "image/png"),
                                                            ("anim.gif", "image/gif")]
    fake_api.enqueue(Reply.text("two images"))
    run = start_session(AnthropicProvider(api_key="k", base_url=fake_api.url), [], tmp_path / "ws")
    run.submit(op)
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
    (message,) = fake_api.requests[0]["messages"]
    assert [b["type"] for b in message["content"]] == ["image", "image", "text"]
    assert [sent(b) for b in images_of(message)] == [png(3, 3), GIF]
    assert message["content"][2]["text"] == text  # the paths stay: the model knows the files
    (started,) = run.rec.of("turn_started")
    assert started.images == [str(shot), "anim.gif"]


def test_images_that_cannot_be_sent_are_refused_with_the_reason(tmp_path):
    (tmp_path / "big.png").write_bytes(png() + b"\0" * (MAX_RAW + 1))
    (tmp_path / "notes.png").write_text("not really a picture")
    (tmp_path / "icon.bmp").write_bytes(b"BM\x1e\0\0\0")
    (tmp_path / "ok.webp").write_bytes(b"RIFF\x10\0\0\0WEBPVP8 " + b"\0" * 8)
    locked = tmp_path / "locked.jpg"
    locked.write_bytes(b"\xff\xd8\xff\xe0")
    locked.chmod(0)
    found = find_images("see big.png, notes.png, icon.bmp, locked.jpg, ok.webp and gone.png",
                        tmp_path)
    root = os.geteuid() == 0  # root reads it anyway
    assert [i.path for i in found.images] == (["locked.jpg"] if root else []) + ["ok.webp"]
    reasons = dict(r.split(": ", 1) for r in found.refused)
    assert "larger than the 5 MB the model can be sent" in reasons["big.png"]
    assert reasons["notes.png"] == reasons["icon.bmp"] == "not a PNG, JPEG, GIF or WebP image"
    if not root:
        assert reasons["locked.jpg"].startswith("cannot be read (Permission denied")
    assert "gone.png" not in reasons  # a name that names no file is only text


def test_paths_are_found_as_terminals_paste_them(tmp_path):
    (tmp_path / "a b.png").write_bytes(png())
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.JPG").write_bytes(b"\xff\xd8\xff\xe0")
    text = (f'"{tmp_path}/a b.png" file://{tmp_path}/a%20b.png (sub/c.JPG). @sub/c.JPG '
            "sub/c.JPG.bak")
    assert [n.shown for n in named_files(text, tmp_path)] == [f"{tmp_path}/a b.png", "sub/c.JPG"]
    many = " ".join(f"i{n}.png" for n in range(MAX_IMAGES + 2))
    for n in range(MAX_IMAGES + 2):
        (tmp_path / f"i{n}.png").write_bytes(png())
    found = find_images(many, tmp_path)
    assert len(found.images) == MAX_IMAGES and len(found.refused) == 2
    assert "more than 20 images in one message" in found.refused[0]


def test_an_image_sent_as_data_must_be_what_it_says():
    good = ImageAttachment(media_type="image/gif", data=base64.b64encode(GIF).decode())
    assert check_attachment(good).size == len(GIF)
    for image, why in (
        (good.model_copy(update={"media_type": "image/png"}), "its bytes are image/gif, not image/png"),
        (good.model_copy(update={"data": "not base64!"}), "not valid base64"),
        (ImageAttachment(media_type="image/png", data=base64.b64encode(b"text").decode()), "not a PNG"),
    ):
        with pytest.raises(ImageRefused, match=why):
            check_attachment(image)


@pytest.mark.asyncio
async def test_the_fake_api_refuses_image_blocks_as_the_api_does(fake_api):
    client = anthropic.AsyncAnthropic(api_key="k", base_url=fake_api.url, max_retries=0)

    async def ask(source: dict) -> str:
        with pytest.raises(anthropic.BadRequestError) as info:
            await client.messages.create(model="claude-test", max_tokens=100, messages=[
                {"role": "user", "content": [{"type": "image", "source": source},
                                             {"type": "text", "text": "what is it?"}]}])
        return info.value.body["error"]["message"]

    gif = base64.b64encode(GIF).decode()
    assert await ask({"type": "base64", "media_type": "image/png", "data": gif}) == (
        "messages.0.content.0.image.source.base64.data: Image does not match the provided "
        "media type image/png")
    assert await ask({"type": "base64", "media_type": "image/bmp", "data": gif}) == (
        "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', "
        "'image/png', 'image/gif' or 'image/webp'")
    assert "not valid base64" in await ask({"type": "base64", "media_type": "image/gif",
                                            "data": "@@@"})
    ok = await client.messages.create(model="claude-test", max_tokens=100, messages=[
        {"role": "user", "content": [{"type": "image", "source": {
            "type": "base64", "media_type": "image/gif", "data": gif}},
            {"type": "text", "text": "what is it?"}]}])
    assert ok.content
    await client.close()


def _session(journal: Journal, fake_api, workspace: Path) -> tuple[Session, Recorder]:
    rec = Recorder()
    deps = SessionDeps(
        config=AgentConfig(workspace=workspace, model="claude-test"),
        provider=AnthropicProvider(api_key="k", base_url=fake_api.url),
        tools=ToolSet([]), policy=AllowAll(), journal=journal, emit=rec,
    )
    return Session(deps), rec


async def _one_turn(session: Session, op: UserMessage) -> None:
    task = asyncio.create_task(session.run())
    session.submit(op)
    await asyncio.wait_for(session.wait_idle(), 15)
    session.submit(Shutdown())
    await asyncio.wait_for(task, 15)


@pytest.mark.asyncio
async def test_a_resumed_session_sends_the_same_image_even_when_the_file_is_gone(fake_api, tmp_path):
    (tmp_path / "shot.png").write_bytes(png(4, 4))
    path = tmp_path / "journal.jsonl"
    fake_api.enqueue(Reply.text("a square"), Reply.text("still a square"))
    op, _ = attach_named(UserMessage(text="what is shot.png?"), tmp_path)
    session, _rec = _session(Journal(path), fake_api, tmp_path)
    await _one_turn(session, op)
    (tmp_path / "shot.png").unlink()
    resumed, rec = _session(Journal.load(path), fake_api, tmp_path)
    await _one_turn(resumed, UserMessage(text="and now?"))
    assert fake_api.rejections == []
    first = fake_api.requests[1]["messages"][0]
    assert [sent(b) for b in images_of(first)] == [png(4, 4)]
    assert [b["type"] for b in first["content"]] == ["image", "text"]


def test_a_journal_written_before_images_still_loads():
    line = json.dumps({"v": 1, "seq": 3, "ts": 1.0, "kind": "user_message", "turn_id": "t1",
                       "text": "hi"}).encode()
    record, _ = parse_line(line)
    assert isinstance(record, UserMessageRecord) and record.images == []


@pytest.mark.asyncio
async def test_a_steer_and_a_follow_up_carry_their_images(fake_api, tmp_path):
    slow = SlowTool()
    fake_api.enqueue(Reply.tool_use("slow", {"note": "x"}), Reply.text("seen"), Reply.text("later"))
    run = start_session(AnthropicProvider(api_key="k", base_url=fake_api.url), [slow], tmp_path)
    run.submit(UserMessage(text="go"))
    await asyncio.wait_for(slow.started.wait(), 10)
    gif = ImageAttachment(media_type="image/gif", data=base64.b64encode(GIF).decode(), path="a.gif")
    run.submit(UserMessage(text="look at this", images=[gif]))
    run.submit(FollowUp(text="and this", images=[gif.model_copy(update={"path": "b.gif"})]))
    await run.rec.wait_for(lambda: len(run.rec.of("steer_state")) >= 2)
    slow.release.set()
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
    after_tools = fake_api.requests[1]["messages"][-1]["content"]
    assert [b["type"] for b in after_tools] == ["tool_result", "image", "text"]
    follow_up = fake_api.requests[2]["messages"][-1]["content"]
    assert [b["type"] for b in follow_up] == ["image", "text"] and sent(follow_up[0]) == GIF
    applied = [e for e in run.rec.of("steer_state") if e.state == "applied"]
    assert [e.images for e in applied] == [["a.gif"], ["b.gif"]]


def test_print_mode_attaches_a_named_image_and_refuses_bad_data(fake_api, tmp_path):
    (tmp_path / "shot.png").write_bytes(png())
    fake_api.enqueue(Reply.text("a red square"), Reply.text("ok"))
    bad = {"type": "user_message", "text": "and this",
           "images": [{"media_type": "image/png", "data": base64.b64encode(GIF).decode()}]}
    out = run_agent(
        ["-p", "what is in ./shot.png?", "--input-format", "stream-json",
         "--output-format", "stream-json", "--cwd", str(tmp_path)],
        input=json.dumps(bad) + "\n",
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url), timeout=60,
    )
    assert out.returncode == 0, out.stderr
    (request,) = fake_api.requests
    assert [sent(b) for b in images_of(request["messages"][0])] == [png()]
    events = events_of(out.stdout)
    assert [e["images"] for e in events if e["type"] == "turn_started"] == [["./shot.png"]]
    assert any(e["type"] == "notice" and "stdin line 1: not sent" in e["text"]
               and "its bytes are image/gif, not image/png" in e["text"] for e in events)
