"""Tests of the fake Anthropic API server, driven by the real ``anthropic`` SDK over HTTP."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import anthropic
import httpx2
import pytest
import pytest_asyncio

from tests.fake_api import FakeAnthropicServer, Reply, validate_messages
from tests.fake_api.fixtures import fake_api  # noqa: F401  (fixture)

MODEL = "claude-test"
# Transport failures *during* the SSE body are not wrapped by the SDK: they surface as raw
# httpx2 exceptions (RemoteProtocolError, ReadTimeout, ...), not anthropic.APIConnectionError.
MID_STREAM_ERRORS = (httpx2.TransportError, anthropic.APIConnectionError)
TOOLS = [
    {"name": "bash", "description": "run a command",
     "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}},
    {"name": "read_file", "description": "read a file",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
]
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def client(fake_api: FakeAnthropicServer):  # noqa: F811
    with anthropic.Anthropic(base_url=fake_api.url, api_key="test", max_retries=0, timeout=10) as c:
        yield c
    assert fake_api.errors == []  # no unexpected exception in the server's handler threads


@pytest_asyncio.fixture
async def aclient(fake_api: FakeAnthropicServer):  # noqa: F811
    async with anthropic.AsyncAnthropic(
        base_url=fake_api.url, api_key="test", max_retries=0, timeout=10
    ) as c:
        yield c
    assert fake_api.errors == []


async def _wait_disconnect(srv: FakeAnthropicServer, count: int = 1, timeout: float = 5.0) -> bool:
    return await asyncio.to_thread(srv.wait_for_disconnect, timeout, count)


# --------------------------------------------------------------------------------------
# basics
# --------------------------------------------------------------------------------------


def test_server_lifecycle_loopback_and_quick():
    with FakeAnthropicServer() as srv:
        assert srv.url.startswith("http://127.0.0.1:")
        port = srv.port
        assert port > 0
    # no serve thread left behind for this server
    assert not [t for t in threading.enumerate() if t.name == f"fake-anthropic-{port}" and t.is_alive()]


def test_sync_stream_text_deltas(fake_api, client):  # noqa: F811
    fake_api.enqueue(Reply.text("hello world", chunk=5))
    deltas = []
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream:
        for ev in stream:
            if ev.type == "content_block_delta":
                assert ev.delta.type == "text_delta"
                deltas.append(ev.delta.text)
        final = stream.get_final_message()
    assert deltas == ["hello", " worl", "d"]
    assert final.content[0].text == "hello world"
    assert final.stop_reason == "end_turn"
    assert final.model == MODEL
    assert final.id.startswith("msg_")
    assert final.usage.output_tokens >= 1 and final.usage.input_tokens >= 1
    assert fake_api.requests[0]["messages"] == HI
    assert fake_api.requests[0]["stream"] is True
    # this SDK version sends the api key as a bearer token (older ones used x-api-key)
    hdrs = fake_api.request_headers[0]
    assert hdrs.get("x-api-key") == "test" or hdrs.get("authorization") == "Bearer test"


def test_sync_create_stream_raw_events_and_ping_is_skipped(fake_api, client):  # noqa: F811
    fake_api.enqueue(Reply.text("abcdef", chunk=2))
    events = list(client.messages.create(model=MODEL, max_tokens=10, messages=HI, stream=True))
    types = [e.type for e in events]
    assert types == [
        "message_start", "content_block_start",
        "content_block_delta", "content_block_delta", "content_block_delta",
        "content_block_stop", "message_delta", "message_stop",
    ]
    start = events[0].message
    assert start.role == "assistant" and start.content == [] and start.stop_reason is None
    assert events[-2].delta.stop_reason == "end_turn"


@pytest.mark.asyncio
async def test_async_create_stream_text(fake_api, aclient):  # noqa: F811
    fake_api.enqueue(Reply.text("The quick brown fox", chunk=4))
    stream = await aclient.messages.create(model=MODEL, max_tokens=50, messages=HI, stream=True)
    text = []
    async for ev in stream:
        if ev.type == "content_block_delta" and ev.delta.type == "text_delta":
            assert len(ev.delta.text) <= 4
            text.append(ev.delta.text)
    assert "".join(text) == "The quick brown fox"
    assert len(text) == 5


@pytest.mark.asyncio
async def test_async_messages_stream_text_stream(fake_api, aclient):  # noqa: F811
    fake_api.enqueue(Reply.text("hello world", chunk=3))
    async with aclient.messages.stream(model=MODEL, max_tokens=50, messages=HI) as stream:
        pieces = [t async for t in stream.text_stream]
        final = await stream.get_final_message()
    assert "".join(pieces) == "hello world"
    assert final.content[0].text == "hello world"


def test_default_reply_when_queue_empty_and_non_stream(fake_api, client):  # noqa: F811
    msg = client.messages.create(model=MODEL, max_tokens=10, messages=HI)
    assert msg.content[0].text == "ok"
    fake_api.enqueue(Reply.tool_use("bash", {"command": "ls"}, text_before="Let me look."))
    msg = client.messages.create(model=MODEL, max_tokens=10, messages=HI, tools=TOOLS)
    assert [b.type for b in msg.content] == ["text", "tool_use"]
    assert msg.content[1].input == {"command": "ls"}
    assert msg.stop_reason == "tool_use"
    assert len(fake_api.requests) == 2 and fake_api.pending == 0


def test_callable_reply_and_wait_for_requests(fake_api, client):  # noqa: F811
    fake_api.enqueue(lambda body: Reply.text(f"you said {body['messages'][-1]['content']}"))
    with client.messages.stream(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "ping"}]) as s:
        assert s.get_final_text() == "you said ping"
    assert fake_api.wait_for_requests(1, timeout=5)
    assert not fake_api.wait_for_requests(2, timeout=0.05)


# --------------------------------------------------------------------------------------
# tool use
# --------------------------------------------------------------------------------------


def test_sync_tool_use_streams_input_json_deltas(fake_api, client):  # noqa: F811
    reply = Reply.tool_use("bash", {"command": "ls -la /tmp", "timeout": 5}, text_before="Let me look.")
    fake_api.enqueue(reply)
    partials = []
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HI, tools=TOOLS) as stream:
        for ev in stream:
            if ev.type == "content_block_delta" and ev.delta.type == "input_json_delta":
                partials.append(ev.delta.partial_json)
        final = stream.get_final_message()
    assert len([p for p in partials if p]) > 1  # really split in pieces
    assert json.loads("".join(partials)) == {"command": "ls -la /tmp", "timeout": 5}
    assert final.stop_reason == "tool_use"
    assert final.content[0].type == "text" and final.content[0].text == "Let me look."
    block = final.content[1]
    assert block.type == "tool_use" and block.name == "bash"
    assert block.input == {"command": "ls -la /tmp", "timeout": 5}
    assert block.id == reply.tool_ids[0] and block.id.startswith("toolu_")


@pytest.mark.asyncio
async def test_async_several_tool_uses(fake_api, aclient):  # noqa: F811
    fake_api.enqueue(Reply.tool_uses([("read_file", {"path": "a"}), ("bash", {"command": "x"}, "toolu_fixed")]))
    async with aclient.messages.stream(model=MODEL, max_tokens=50, messages=HI, tools=TOOLS) as stream:
        final = await stream.get_final_message()
    assert [(b.type, b.name, b.input) for b in final.content] == [
        ("tool_use", "read_file", {"path": "a"}),
        ("tool_use", "bash", {"command": "x"}),
    ]
    assert final.content[1].id == "toolu_fixed"
    assert final.content[0].id != final.content[1].id


# --------------------------------------------------------------------------------------
# stalls and disconnects
# --------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_stall_then_cancel_records_disconnect(fake_api, aclient):  # noqa: F811
    fake_api.enqueue(Reply.stall(after_text="partial", seconds=30))
    got_partial = asyncio.Event()
    seen: list[str] = []

    async def consume():
        stream = await aclient.messages.create(model=MODEL, max_tokens=50, messages=HI, stream=True)
        async for ev in stream:
            if ev.type == "content_block_delta":
                seen.append(ev.delta.text)
                if "".join(seen) == "partial":
                    got_partial.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_partial.wait(), 5)
    await asyncio.sleep(0.05)
    assert not task.done()  # the server is stalling
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _wait_disconnect(fake_api)
    idx, when = fake_api.disconnects[0]
    assert idx == 0
    assert when - cancelled_at < 3  # "promptly" (in practice a few ms)


@pytest.mark.asyncio
async def test_half_tool_use_then_cancel(fake_api, aclient):  # noqa: F811
    reply = Reply.half_tool_use("bash", '{"command": "sl', json_chunk=4)
    fake_api.enqueue(Reply.text("first"), reply)
    # first request: plain answer (keep-alive connection reused afterwards)
    msg = await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI)
    assert msg.content[0].text == "first"

    got = asyncio.Event()
    partial: list[str] = []
    starts = []

    async def consume():
        async with aclient.messages.stream(model=MODEL, max_tokens=50, messages=HI, tools=TOOLS) as stream:
            async for ev in stream:
                if ev.type == "content_block_start":
                    starts.append(ev.content_block)
                if ev.type == "content_block_delta" and ev.delta.type == "input_json_delta":
                    partial.append(ev.delta.partial_json)
                    if "".join(partial) == '{"command": "sl':
                        got.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got.wait(), 5)
    assert starts[0].type == "tool_use" and starts[0].id == reply.tool_ids[0]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _wait_disconnect(fake_api)
    assert fake_api.disconnects[0][0] == 1


def test_stall_then_finish_completes_message(fake_api, client):  # noqa: F811
    fake_api.enqueue(Reply.stall(after_text="slow", seconds=0.2, then="finish"))
    with client.messages.stream(model=MODEL, max_tokens=50, messages=HI) as stream:
        text = stream.get_final_text()
    assert text == "slow"
    assert fake_api.disconnects == []


def test_stall_timeout_with_close_drops_connection(fake_api, client):  # noqa: F811
    fake_api.enqueue(Reply.stall(after_text="cut", seconds=0.2))
    seen = []
    with pytest.raises(MID_STREAM_ERRORS):
        with client.messages.stream(model=MODEL, max_tokens=50, messages=HI) as stream:
            for t in stream.text_stream:
                seen.append(t)
    assert "".join(seen) == "cut"
    # the server can still serve afterwards
    assert client.messages.create(model=MODEL, max_tokens=5, messages=HI).content[0].text == "ok"


def test_client_read_timeout_during_stall_is_a_disconnect(fake_api):  # noqa: F811
    fake_api.enqueue(Reply.stall(after_text="x", seconds=30))
    with anthropic.Anthropic(base_url=fake_api.url, api_key="t", max_retries=0, timeout=0.3) as c:
        with pytest.raises((httpx2.ReadTimeout, anthropic.APITimeoutError)):
            with c.messages.stream(model=MODEL, max_tokens=5, messages=HI) as stream:
                stream.until_done()
    assert fake_api.wait_for_disconnect(5)


def test_slow_text_is_slow(fake_api, client):  # noqa: F811
    fake_api.enqueue(Reply.slow_text("abcdefghij", chunk=2, delay=0.03))
    arrivals = []
    t0 = time.monotonic()
    with client.messages.stream(model=MODEL, max_tokens=50, messages=HI) as stream:
        for _ in stream.text_stream:
            arrivals.append(time.monotonic() - t0)
    assert len(arrivals) == 5
    assert arrivals[-1] - arrivals[0] >= 4 * 0.03 * 0.5  # lower bound only


def test_stop_while_stalling_returns_quickly():
    srv = FakeAnthropicServer().start()
    srv.enqueue(Reply.stall(after_text="zzz", seconds=60))
    errors = []

    def run():
        try:
            with anthropic.Anthropic(base_url=srv.url, api_key="t", max_retries=0, timeout=20) as c:
                with c.messages.stream(model=MODEL, max_tokens=5, messages=HI) as stream:
                    stream.until_done()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert srv.wait_for_requests(1, timeout=5)
    time.sleep(0.1)
    srv.stop()  # does not wait for the stream: the client sees it cut
    t.join(5)
    assert not t.is_alive()
    assert errors and isinstance(errors[0], MID_STREAM_ERRORS)


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------


def test_529_with_retry_after(fake_api, client):  # noqa: F811
    fake_api.enqueue(Reply.error(529, "overloaded_error", retry_after=2))
    with pytest.raises(anthropic.APIStatusError) as ei:
        client.messages.create(model=MODEL, max_tokens=5, messages=HI, stream=True)
    e = ei.value
    assert e.status_code == 529
    assert e.response.headers["retry-after"] == "2"
    assert e.body["error"]["type"] == "overloaded_error"
    assert len(fake_api.requests) == 1  # max_retries=0: no retry


@pytest.mark.asyncio
async def test_async_500_api_error(fake_api, aclient):  # noqa: F811
    fake_api.enqueue(Reply.error(500, "api_error"))
    with pytest.raises(anthropic.InternalServerError) as ei:
        async with aclient.messages.stream(model=MODEL, max_tokens=5, messages=HI) as stream:
            await stream.get_final_message()
    assert ei.value.status_code == 500
    # next request gets the default reply
    msg = await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI)
    assert msg.content[0].text == "ok"


def test_stream_error_event_mid_stream(fake_api, client):  # noqa: F811
    fake_api.enqueue(Reply.stream_error(after_text="hal", error_type="overloaded_error"))
    seen = []
    with pytest.raises(anthropic.APIStatusError) as ei:
        with client.messages.stream(model=MODEL, max_tokens=5, messages=HI) as stream:
            for t in stream.text_stream:
                seen.append(t)
    assert "".join(seen) == "hal"
    assert "overloaded_error" in str(ei.value)


# --------------------------------------------------------------------------------------
# validation through the SDK
# --------------------------------------------------------------------------------------


def _assistant_tool_use(tid: str, name: str = "bash", inp: dict | None = None, text: str | None = None):
    content = [{"type": "text", "text": text}] if text else []
    content.append({"type": "tool_use", "id": tid, "name": name, "input": inp or {"command": "ls"}})
    return {"role": "assistant", "content": content}


def _tool_result(tid: str, content: str = "out"):
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def test_unpaired_tool_use_is_rejected(fake_api, client):  # noqa: F811
    fake_api.enqueue(Reply.text("should not be consumed"))
    messages = [
        {"role": "user", "content": "list files"},
        _assistant_tool_use("toolu_abc"),
        {"role": "user", "content": "and?"},
    ]
    with pytest.raises(anthropic.BadRequestError) as ei:
        client.messages.create(model=MODEL, max_tokens=5, messages=messages, tools=TOOLS, stream=True)
    assert "without `tool_result` blocks immediately after" in str(ei.value)
    assert "toolu_abc" in str(ei.value)
    assert ei.value.body["error"]["type"] == "invalid_request_error"
    assert fake_api.rejections == [ei.value.body["error"]["message"]]
    assert fake_api.rejections[0].startswith("messages.1: ")
    assert fake_api.pending == 1  # rejected requests don't consume the script


@pytest.mark.asyncio
async def test_tool_result_without_tool_use_is_rejected(fake_api, aclient):  # noqa: F811
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": [_tool_result("toolu_ghost")]},
    ]
    with pytest.raises(anthropic.BadRequestError) as ei:
        async with aclient.messages.stream(model=MODEL, max_tokens=5, messages=messages, tools=TOOLS) as s:
            await s.get_final_message()
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_ghost" in str(ei.value)
    assert fake_api.rejections[0].startswith("messages.2: ")


def test_valid_tool_conversation_is_accepted(fake_api, client):  # noqa: F811
    first = Reply.tool_uses([("read_file", {"path": "a"}), ("bash", {"command": "x"})], text_before="Two things.")
    fake_api.enqueue(first, Reply.text("done"))
    messages: list[dict] = [{"role": "user", "content": "do it"}]
    with client.messages.stream(model=MODEL, max_tokens=50, messages=messages, tools=TOOLS) as s:
        msg = s.get_final_message()
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True, exclude={"parsed_output"})
                                                      for b in msg.content]})
    messages.append({"role": "user", "content": [
        _tool_result(b.id, f"result of {b.name}") for b in msg.content if b.type == "tool_use"
    ] + [{"type": "text", "text": "continue"}]})
    with client.messages.stream(model=MODEL, max_tokens=50, messages=messages, tools=TOOLS) as s:
        assert s.get_final_text() == "done"
    assert fake_api.rejections == []
    assert [b["type"] for b in fake_api.requests[1]["messages"][1]["content"]] == ["text", "tool_use", "tool_use"]


# --------------------------------------------------------------------------------------
# validate_messages directly
# --------------------------------------------------------------------------------------


def _body(messages, **kw):
    return {"model": MODEL, "max_tokens": 10, "messages": messages, "tools": TOOLS, **kw}


@pytest.mark.parametrize(
    "body, expected",
    [
        ({"max_tokens": 1, "messages": HI}, "model: Field required"),
        ({"model": "m", "messages": HI}, "max_tokens: Field required"),
        ({"model": "m", "max_tokens": 1}, "messages: Field required"),
        (_body([]), "messages: at least one message is required"),
        (_body([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]),
         'messages: roles must alternate between "user" and "assistant"'),
        (_body([{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}]),
         'messages: first message must use the "user" role'),
        (_body([{"role": "user", "content": [{"type": "text", "text": ""}]}]),
         "messages: text content blocks must be non-empty"),
        (_body([{"role": "user", "content": ""}]), "messages.0: all messages must have non-empty content"),
        (_body([{"role": "user", "content": []}]), "messages.0: all messages must have non-empty content"),
        (_body([{"role": "user", "content": "a"}, _assistant_tool_use("toolu_1")]),
         "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1."),
        (_body([{"role": "user", "content": "a"}, _assistant_tool_use("toolu_1"),
                {"role": "user", "content": [{"type": "text", "text": "x"}, _tool_result("toolu_1")]}]),
         "messages.2: `tool_result` blocks must come first"),
        (_body([{"role": "user", "content": "a"}, _assistant_tool_use("toolu_1"),
                {"role": "user", "content": [_tool_result("toolu_1")]},
                _assistant_tool_use("toolu_1"),
                {"role": "user", "content": [_tool_result("toolu_1")]}]),
         "`tool_use` ids must be unique"),
        (_body([{"role": "user", "content": "a"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash",
                                                   "input": '{"command": "ls"}'}]},
                {"role": "user", "content": [_tool_result("toolu_1")]}]),
         "messages.1.content.0.tool_use.input: Input should be a valid dictionary"),
        (_body([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]),
         'messages: the final message must use the "user" role'),
        ({"model": "m", "max_tokens": 1, "messages": [
            {"role": "user", "content": "a"}, _assistant_tool_use("toolu_1"),
            {"role": "user", "content": [_tool_result("toolu_1")]}]},
         "must define tools"),
    ],
)
def test_validate_messages_rejects(body, expected):
    err = validate_messages(body)
    assert err is not None and expected in err, err


def test_validate_messages_accepts_valid_and_prefill_option():
    body = _body([
        {"role": "user", "content": "a"},
        _assistant_tool_use("toolu_1", text="looking"),
        {"role": "user", "content": [_tool_result("toolu_1"), {"type": "text", "text": "go on"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": [{"type": "text", "text": "thanks"}]},
    ])
    assert validate_messages(body) is None
    prefill = _body([{"role": "user", "content": "a"}, {"role": "assistant", "content": "The answer is"}])
    assert validate_messages(prefill) is not None
    assert validate_messages(prefill, allow_assistant_last=True) is None
