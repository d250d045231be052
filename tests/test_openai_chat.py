"""The openai-chat provider through the real ``openai`` SDK over HTTP to the strict fake
of Chat Completions: translation, streamed tool calls, usage with cached tokens, and
each kind of bad input as a clear error."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytestmark = pytest.mark.asyncio

from agent_tui.providers import base
from agent_tui.providers.config import ProviderConfig
from agent_tui.providers.openai_wire.chat import OpenAIChatProvider
from tests.fake_openai.fixtures import fake_openai  # noqa: F401  (a fixture)
from tests.fake_openai import Call, FakeOpenAIServer, Reply

TOOLS = [{"name": "bash", "description": "run", "input_schema": {
    "type": "object", "properties": {"command": {"type": "string"}}}}]




def provider(url: str, **models: Any) -> OpenAIChatProvider:
    cfg = ProviderConfig.model_validate({"api": "openai-chat", "baseURL": url,
                                         "apiKeyEnv": "FAKE_OPENAI_KEY", "models": models})
    return OpenAIChatProvider("fake", cfg)


def request(messages: list[dict[str, Any]], **extra: Any) -> base.ModelRequest:
    return base.ModelRequest(model=extra.pop("model", "gpt-test"), system="be brief",
                             messages=messages, tools=TOOLS, **extra)


async def collect(p: OpenAIChatProvider, req: base.ModelRequest) -> list[Any]:
    return [event async for event in p.stream(req)]



async def test_text_and_usage_with_cached_tokens(fake_openai: FakeOpenAIServer) -> None:
    p = provider(fake_openai.url)
    long = "x" * 6000
    fake_openai.enqueue(Reply(text="hello there"), Reply(text="again"))
    first = await collect(p, request([{"role": "user", "content": long}]))
    second = await collect(p, request([{"role": "user", "content": long},
                                       {"role": "assistant", "content": "hello there"},
                                       {"role": "user", "content": "more"}]))
    text = "".join(e.text for e in first if isinstance(e, base.TextDelta))
    assert text == "hello there"
    end = [e for e in second if isinstance(e, base.MessageEnded)][0]
    recorded = fake_openai.usage[1]
    assert end.cache_read_input_tokens == recorded.cached > 0
    assert end.input_tokens == recorded.prompt - recorded.cached
    assert fake_openai.requests[0]["stream_options"] == {"include_usage": True}
    assert fake_openai.requests[0]["messages"][0] == {"role": "system", "content": "be brief"}
    await p.aclose()


async def test_tool_call_assembled_from_argument_deltas(fake_openai: FakeOpenAIServer) -> None:
    p = provider(fake_openai.url)
    fake_openai.enqueue(Reply(text="let me look", calls=[Call("bash", json.dumps(
        {"command": "ls -la /tmp"}), id="call_1")], chunk=3))
    events = await collect(p, request([{"role": "user", "content": "list"}]))
    started = [e for e in events if isinstance(e, base.ToolUseStarted)]
    assert [(e.id, e.name) for e in started] == [("call_1", "bash")]
    args = "".join(e.partial_json for e in events if isinstance(e, base.ToolInputDelta))
    assert json.loads(args) == {"command": "ls -la /tmp"}
    assert [e for e in events if isinstance(e, base.MessageEnded)][0].stop_reason == "tool_use"
    # the history goes back as the API wants it: a tool message for the call
    fake_openai.enqueue(Reply(text="done"))
    await collect(p, request([
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "let me look"},
            {"type": "tool_use", "id": "call_1", "name": "bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "a\nb"},
            {"type": "text", "text": "and then?"}]}]))
    sent = fake_openai.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
    assert sent[3] == {"role": "tool", "tool_call_id": "call_1", "content": "a\nb"}
    await p.aclose()


async def test_fake_refuses_unanswered_call_and_answer_without_call(
        fake_openai: FakeOpenAIServer) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=fake_openai.url, api_key="k", max_retries=0)
    call = {"id": "call_9", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    bad = [
        [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [call]},
         {"role": "user", "content": "next"}],
        [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_9",
                                             "content": "x"}],
        [{"role": "user", "content": "hi", "bogus": 1}],
    ]
    for messages in bad:
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(model="gpt-test", messages=messages,
                                                 stream=True)
    assert "did not have response messages: call_9" in fake_openai.rejections[0]
    assert "must be a response to a preceeding message" in fake_openai.rejections[1]
    assert "'bogus' was unexpected" in fake_openai.rejections[2]
    assert fake_openai.requests == []  # a refused request never reaches the model
    await client.close()


async def test_esc_in_a_stalled_stream_closes_the_connection(fake_openai: FakeOpenAIServer) -> None:
    p = provider(fake_openai.url)
    fake_openai.enqueue(Reply(text="a long answer that stalls", chunk=4, stall_after=(2, 30)))
    seen: list[Any] = []

    async def read() -> None:
        async for event in p.stream(request([{"role": "user", "content": "go"}])):
            seen.append(event)

    task = asyncio.create_task(read())
    while not any(isinstance(e, base.TextDelta) for e in seen):
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.to_thread(fake_openai.wait_for, "disconnects", 1, 5.0)
    assert fake_openai.usage[-1].interrupted
    # billed: the request's size was reported when the stream started
    assert isinstance(seen[0], base.MessageStarted) and seen[0].usage.input_tokens > 0
    await p.aclose()


@pytest.mark.parametrize(("reply", "kind", "words"), [
    (Reply.failure(429, "Rate limit reached", headers={"retry-after": "7"},
                   kind="rate_limit_error"), base.ErrorKind.RATE_LIMIT, "Rate limit"),
    (Reply.failure(503, "overloaded"), base.ErrorKind.SERVER, "overloaded"),
    (Reply(text="abc", malformed=True), base.ErrorKind.OTHER, "malformed"),
    (Reply(text="abc", cut=True), base.ErrorKind.CONNECTION, "ended before"),
])
async def test_failures_are_provider_errors(fake_openai: FakeOpenAIServer, reply: Reply,
                                            kind: base.ErrorKind, words: str) -> None:
    p = provider(fake_openai.url)
    fake_openai.enqueue(reply)
    with pytest.raises(base.ProviderError) as caught:
        await collect(p, request([{"role": "user", "content": "go"}]))
    assert caught.value.kind is kind and caught.value.retryable
    assert words in str(caught.value)
    if reply.status == 429:
        assert caught.value.retry_after == 7
    await p.aclose()


async def test_bad_input_is_a_clear_error(fake_openai: FakeOpenAIServer,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    fake_openai.accept_keys("sk-right")
    p = provider(fake_openai.url)
    with pytest.raises(base.ProviderError) as caught:
        await collect(p, request([{"role": "user", "content": "go"}]))
    assert caught.value.kind is base.ErrorKind.AUTHENTICATION and "FAKE_OPENAI_KEY" in str(
        caught.value)
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-right")
    p = provider(fake_openai.url)
    with pytest.raises(base.ProviderError) as caught:
        await collect(p, request([{"role": "user", "content": "go"}], model="nope"))
    assert caught.value.kind is base.ErrorKind.NOT_FOUND and "nope" in str(caught.value)
    with pytest.raises(base.ProviderError) as caught:
        await p.model_info("nope")
    assert caught.value.kind is base.ErrorKind.NOT_FOUND
    info = await p.model_info("gpt-test")
    assert info is not None and info.max_input_tokens == 128_000
    dead = provider("http://127.0.0.1:9/v1")
    with pytest.raises(base.ProviderError) as caught:
        await collect(dead, request([{"role": "user", "content": "go"}]))
    assert caught.value.kind is base.ErrorKind.CONNECTION and "cannot reach" in str(caught.value)
    await p.aclose()
    await dead.aclose()


async def test_too_long_gives_the_window_in_the_core_s_words(fake_openai: FakeOpenAIServer) -> None:
    from agent_tui.core.usage.limits import parse_overflow

    with FakeOpenAIServer() as small:
        small.models["gpt-test"].window = 2000
        p = provider(small.url)
        with pytest.raises(base.ProviderError) as caught:
            await collect(p, request([{"role": "user", "content": "y" * 20_000}]))
        assert caught.value.kind is base.ErrorKind.CONTEXT_OVERFLOW
        found = parse_overflow(str(caught.value))
        assert found is not None and found.window == 2000 and found.prompt_tokens > 2000
        await p.aclose()


async def test_reasoning_content_kept_in_the_loop_and_dropped_after(
        fake_openai: FakeOpenAIServer) -> None:
    p = provider(fake_openai.url, reasoner={"reasoning": True})
    fake_openai.enqueue(Reply(reasoning="think first", calls=[Call("bash", "{}", id="call_r")]))
    events = await collect(p, request([{"role": "user", "content": "go"}], model="reasoner"))
    thought = "".join(e.text for e in events if isinstance(e, base.ThinkingDelta))
    signature = [e.signature for e in events if isinstance(e, base.SignatureDelta)][0]
    assert thought == "think first"
    assistant = {"role": "assistant", "content": [
        {"type": "thinking", "thinking": thought, "signature": signature},
        {"type": "tool_use", "id": "call_r", "name": "bash", "input": {}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_r",
                                           "content": "ok"}]}
    loop = [{"role": "user", "content": "go"}, assistant, result]
    await collect(p, request(loop, model="reasoner"))
    assert fake_openai.requests[-1]["messages"][2]["reasoning_content"] == "think first"
    later = [*loop, {"role": "assistant", "content": "done"},
             {"role": "user", "content": "next"}]
    await collect(p, request(later, model="reasoner"))
    assert "reasoning_content" not in fake_openai.requests[-1]["messages"][2]
    await p.aclose()


async def test_images_go_to_a_model_that_takes_them_and_are_named_elsewhere(
        fake_openai: FakeOpenAIServer) -> None:
    p = provider(fake_openai.url, **{"gpt-test": {"images": True}})
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "iVBORw0KGgo="}}
    message = {"role": "user", "content": [image, {"type": "text", "text": "what is it?"}]}
    fake_openai.enqueue(Reply(text="a dot"), Reply(text="no eyes"))
    await collect(p, request([message]))
    parts = fake_openai.requests[-1]["messages"][1]["content"]
    assert parts[0] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,"
                                                                  "iVBORw0KGgo="}}
    blind = provider(fake_openai.url)  # the configuration does not say it takes images
    await collect(blind, request([message], model="reasoner"))
    parts = fake_openai.requests[-1]["messages"][1]["content"]
    assert parts[0]["type"] == "text" and "image was left out" in parts[0]["text"]
    assert fake_openai.rejections == []
    await p.aclose()
    await blind.aclose()
