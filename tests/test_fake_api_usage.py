"""The fake API's token counts and usage, through the real SDK over HTTP."""

from __future__ import annotations

import pytest

from tests.fake_api import Reply, UsageRecord
from tests.fake_api.fixtures import fake_api, sdk_aclient, sdk_client  # noqa: F401
from tests.fake_api.fixtures import stream_then_cancel
from tests.fake_api.tokens import canonical, output_tokens, prompt_units, text_tokens

MODEL = "claude-test"
TOOLS = [{"name": "bash", "description": "run a command",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]
HI = [{"role": "user", "content": "hi"}]


def _body(**kw):
    return {"model": MODEL, "max_tokens": 100, "messages": HI, **kw}


def test_estimator_is_a_quarter_of_the_canonical_characters_without_cache_control():
    block = {"type": "text", "text": "x" * 400, "cache_control": {"type": "ephemeral"}}
    assert canonical(block) == '{"type":"text","text":"' + "x" * 400 + '"}'
    assert text_tokens("x" * 401) == 101 and text_tokens("") == 1
    units = prompt_units({"model": MODEL, "tools": TOOLS, "system": "sys", "messages": [
        {"role": "user", "content": [block, {"type": "text", "text": "again"}]}]})
    assert [u.where for u in units] == ["tools.0", "system.0", "messages.0.content.0",
                                       "messages.0.content.1"]
    assert units[2].tokens == -(-len(canonical(block)) // 4)
    assert units[1].block == {"type": "text", "text": "sys"}  # a string system is one block


def test_key_order_and_content_change_the_prefix_key_but_not_a_moved_breakpoint():
    a = {"model": MODEL, "messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]}
    b = {"model": MODEL, "messages": [{"role": "user", "content": [{"text": "a", "type": "text"}]}]}
    c = {"model": MODEL, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}]}]}
    ka, kb, kc = (prompt_units(x)[-1].key for x in (a, b, c))
    assert ka != kb  # byte-exact: a client that reorders keys misses the cache
    assert ka == kc
    assert prompt_units({**a, "model": "claude-bench"})[-1].key != ka
    assert prompt_units({**a, "thinking": {"type": "disabled"}})[-1].key != ka


def test_output_tokens_count_text_thinking_and_tool_input():
    blocks = [{"type": "thinking", "thinking": "t" * 40}, {"type": "text", "text": "y" * 8},
              {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}]
    total, thinking = output_tokens(blocks)
    assert thinking == 10
    assert total == 10 + 2 + text_tokens('bash{"command":"ls"}')


def test_count_tokens_endpoint_matches_the_server_and_the_usage_of_a_request(fake_api, sdk_client):
    body = _body(system="You are terse.", tools=TOOLS,
                 messages=[{"role": "user", "content": "count me " * 50}])
    expected = fake_api.count_tokens(body)
    counted = sdk_client.messages.count_tokens(
        model=MODEL, system=body["system"], tools=TOOLS, messages=body["messages"])
    assert counted.input_tokens == expected
    msg = sdk_client.messages.create(**body)
    assert msg.usage.input_tokens == expected
    assert msg.usage.cache_read_input_tokens == 0 and msg.usage.cache_creation_input_tokens == 0


def test_count_tokens_validates_like_messages(fake_api, sdk_client):
    import anthropic

    with pytest.raises(anthropic.BadRequestError) as ei:
        sdk_client.messages.count_tokens(model=MODEL, messages=[{"role": "assistant", "content": "x"},
                                                                {"role": "user", "content": "y"}])
    assert 'first message must use the "user" role' in ei.value.body["error"]["message"]
    with pytest.raises(anthropic.NotFoundError) as ei:
        sdk_client.messages.count_tokens(model="claude-nope", messages=HI)
    assert ei.value.body["error"] == {"type": "not_found_error", "message": "model: claude-nope"}


def test_stream_usage_small_at_start_and_cumulative_at_the_end(fake_api, sdk_client):
    fake_api.enqueue(Reply.text("z" * 40, chunk=10))
    events = list(sdk_client.messages.create(**_body(), stream=True))
    start = events[0].message.usage
    assert start.output_tokens == 1
    assert start.input_tokens == fake_api.count_tokens(_body())
    assert start.cache_creation is not None and start.cache_creation.ephemeral_5m_input_tokens == 0
    delta = next(e for e in events if e.type == "message_delta").usage
    assert delta.output_tokens == 10
    assert (delta.input_tokens, delta.cache_read_input_tokens, delta.cache_creation_input_tokens) == (
        start.input_tokens, 0, 0)
    [record] = fake_api.usage
    assert isinstance(record, UsageRecord)
    assert record.completed and record.stream and record.output_tokens == 10
    assert record.as_usage() == {"input_tokens": start.input_tokens, "cache_creation_input_tokens": 0,
                                 "cache_read_input_tokens": 0, "output_tokens": 10}
    assert record.streamed_output_tokens == 10


def test_non_stream_message_carries_the_same_usage(fake_api, sdk_client):
    fake_api.enqueue(Reply.text("z" * 40), Reply.text("z" * 40))
    streamed = sdk_client.messages.stream(**_body())
    with streamed as s:
        a = s.get_final_message().usage
    b = sdk_client.messages.create(**_body()).usage
    assert (a.input_tokens, a.output_tokens) == (b.input_tokens, b.output_tokens) == (
        fake_api.count_tokens(_body()), 10)
    assert [u.stream for u in fake_api.usage] == [True, False]


def test_thinking_tokens_are_reported_in_output_details(fake_api, sdk_client):
    fake_api.enqueue(Reply.thinking("t" * 80, "done"))
    msg = sdk_client.messages.create(**_body(max_tokens=2000,
                                             thinking={"type": "enabled", "budget_tokens": 1024}))
    assert msg.usage.output_tokens_details.thinking_tokens == 20
    assert msg.usage.output_tokens == 21
    assert fake_api.usage[0].thinking_tokens == 20


def test_rejected_requests_and_scripted_errors_have_no_usage_record(fake_api, sdk_client):
    import anthropic

    fake_api.enqueue(Reply.error(529, "overloaded_error"))
    with pytest.raises(anthropic.APIStatusError):
        sdk_client.messages.create(**_body())
    with pytest.raises(anthropic.BadRequestError):
        sdk_client.messages.create(**_body(messages=[{"role": "user", "content": ""}]))
    assert fake_api.usage == []
    sdk_client.messages.create(**_body())
    assert [u.request_index for u in fake_api.usage] == [2]


@pytest.mark.asyncio
async def test_interrupted_stream_is_recorded_with_what_message_start_said(fake_api, sdk_aclient):
    fake_api.enqueue(Reply.stall(after_text="partial text", seconds=30))
    await stream_then_cancel(sdk_aclient, fake_api, **_body())
    [record] = fake_api.usage
    assert record.interrupted and not record.completed
    assert record.output_tokens == 1  # only message_start's figure reached the client
    assert record.planned_output_tokens == text_tokens("partial text")
    assert record.streamed_output_tokens >= 1
    assert record.input_tokens == fake_api.count_tokens(_body())


@pytest.mark.asyncio
async def test_async_non_stream_usage_and_wait_for_usage(fake_api, sdk_aclient):
    fake_api.enqueue(Reply.text("abcd" * 3))
    msg = await sdk_aclient.messages.create(**_body())
    assert fake_api.wait_for_usage(1)
    assert msg.usage.output_tokens == fake_api.usage[0].output_tokens == 3


def test_models_that_strip_earlier_thinking_do_not_count_it(fake_api, sdk_client):
    fake_api.enqueue(Reply.thinking("t" * 400, "first answer"))
    on = {"type": "enabled", "budget_tokens": 1024}
    first = sdk_client.messages.create(model="claude-haiku-4-5", max_tokens=2000, thinking=on,
                                       messages=HI)
    later = HI + [{"role": "assistant", "content": [b.model_dump(exclude_none=True)
                                                    for b in first.content]},
                  {"role": "user", "content": "next"}]
    without = HI + [{"role": "assistant", "content": "first answer"},
                    {"role": "user", "content": "next"}]
    haiku = {"model": "claude-haiku-4-5", "messages": later}
    assert fake_api.count_tokens(haiku) == fake_api.count_tokens({**haiku, "messages": without})
    assert fake_api.count_tokens({**haiku, "model": MODEL}) > fake_api.count_tokens(haiku)
    msg = sdk_client.messages.create(model="claude-haiku-4-5", max_tokens=2000, thinking=on,
                                     messages=later)
    assert msg.usage.input_tokens == fake_api.count_tokens(haiku)
