"""Every stop reason the fake API can script, through the real SDK (stream and not)."""

from __future__ import annotations

import pytest

from tests.fake_api import Reply
from tests.fake_api.fixtures import fake_api, sdk_aclient, sdk_client  # noqa: F401

anthropic = pytest.importorskip("anthropic")

MODEL = "claude-test"
HI = [{"role": "user", "content": "hi"}]
TOOLS = [{"name": "bash", "description": "run a command",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]


def _both(fake_api, client, make, **kw):
    """The final message of ``make()`` streamed, then of ``make()`` not streamed."""
    fake_api.enqueue(make(), make())
    body = {"model": MODEL, "max_tokens": 300, "messages": HI, **kw}
    with client.messages.stream(**body) as s:
        streamed = s.get_final_message()
    return streamed, client.messages.create(**body)


@pytest.mark.parametrize("make, stop", [
    (lambda: Reply.text("fine"), "end_turn"),
    (lambda: Reply.tool_use("bash", {"command": "ls"}, id="toolu_fixed"), "tool_use"),
    (lambda: Reply.max_tokens("cut her"), "max_tokens"),
    (lambda: Reply.context_window_exceeded("long"), "model_context_window_exceeded"),
])
def test_simple_stop_reasons_stream_and_not(fake_api, sdk_client, make, stop):
    for msg in _both(fake_api, sdk_client, make, tools=TOOLS):
        assert msg.stop_reason == stop and msg.stop_sequence is None


def test_max_tokens_reports_the_requests_max_tokens_as_output(fake_api, sdk_client):
    for msg in _both(fake_api, sdk_client, lambda: Reply.max_tokens("cut her")):
        assert msg.content[0].text == "cut her" and msg.usage.output_tokens == 300


def test_max_tokens_inside_a_tool_call_leaves_its_input_incomplete(fake_api, sdk_client):
    make = lambda: Reply.max_tokens_in_tool_use(  # noqa: E731
        "bash", '{"command": "grep -r foo', text_before="Searching.", id="toolu_cut")
    fake_api.enqueue(make(), make())
    body = {"model": MODEL, "max_tokens": 300, "messages": HI, "tools": TOOLS}
    raw = list(sdk_client.messages.create(**body, stream=True))
    json_pieces = "".join(e.delta.partial_json for e in raw if e.type == "content_block_delta"
                          and e.delta.type == "input_json_delta")
    assert json_pieces == '{"command": "grep -r foo'
    assert [e.type for e in raw][-2:] == ["message_delta", "message_stop"]
    assert raw[-2].delta.stop_reason == "max_tokens"
    fake_api.enqueue(make())
    with sdk_client.messages.stream(**body) as s:
        streamed = s.get_final_message()
    msg = sdk_client.messages.create(**body)
    assert msg.stop_reason == "max_tokens"
    assert msg.content[1].id == "toolu_cut"
    # the non-streaming input is the SDK's own partial parse of the cut JSON
    assert msg.content[1].input == streamed.content[1].input


def test_stop_sequence_is_named(fake_api, sdk_client):
    for msg in _both(fake_api, sdk_client, lambda: Reply.stop_sequence("one two", "###"),
                     stop_sequences=["###"]):
        assert msg.stop_reason == "stop_sequence" and msg.stop_sequence == "###"


def test_refusal_carries_stop_details(fake_api, sdk_client):
    make = lambda: Reply.refusal("I can't help", category="cyber", explanation="policy")  # noqa: E731
    for msg in _both(fake_api, sdk_client, make):
        assert msg.stop_reason == "refusal"
        assert msg.stop_details.type == "refusal" and msg.stop_details.category == "cyber"
        assert msg.content[0].text == "I can't help"
    fake_api.enqueue(Reply.text("plain"))
    assert sdk_client.messages.create(model=MODEL, max_tokens=5, messages=HI).stop_details is None


def test_pause_turn_continues_when_the_paused_content_is_sent_back(fake_api, sdk_client):
    fake_api.enqueue(Reply.pause_turn("Searching the web.", input={"query": "news"}),
                     Reply.text("Here is the news."))
    with sdk_client.messages.stream(model=MODEL, max_tokens=300, messages=HI) as s:
        paused = s.get_final_message()
    assert paused.stop_reason == "pause_turn"
    assert [b.type for b in paused.content] == ["text", "server_tool_use"]
    assert paused.content[1].name == "web_search" and paused.content[1].input == {"query": "news"}
    content = [b.model_dump(exclude_none=True) for b in paused.content]
    messages = HI + [{"role": "assistant", "content": content}]
    msg = sdk_client.messages.create(model=MODEL, max_tokens=300, messages=messages)
    assert msg.content[0].text == "Here is the news."
    # only the paused content itself may end the conversation
    other = HI + [{"role": "assistant", "content": [{"type": "text", "text": "Searching the web."}]}]
    with pytest.raises(anthropic.BadRequestError) as ei:
        sdk_client.messages.create(model=MODEL, max_tokens=300, messages=other)
    assert 'the final message must use the "user" role' in ei.value.body["error"]["message"]


def test_max_tokens_zero_prewarms_the_cache_without_a_reply(fake_api, sdk_client):
    system = [{"type": "text", "text": "warm " * 1300, "cache_control": {"type": "ephemeral"}}]
    fake_api.enqueue(Reply.text("kept for the real request"))
    warm = sdk_client.messages.create(model=MODEL, max_tokens=0, system=system,
                                      messages=[{"role": "user", "content": "warmup"}])
    assert warm.content == [] and warm.stop_reason == "max_tokens"
    assert warm.usage.output_tokens == 0 and warm.usage.cache_creation_input_tokens > 0
    assert fake_api.pending == 1
    real = sdk_client.messages.create(model=MODEL, max_tokens=50, system=system, messages=HI)
    assert real.usage.cache_read_input_tokens == warm.usage.cache_creation_input_tokens
    assert real.content[0].text == "kept for the real request"
    with pytest.raises(anthropic.BadRequestError):
        sdk_client.messages.create(model=MODEL, max_tokens=0, messages=HI, stream=True)


@pytest.mark.asyncio
async def test_async_stream_of_each_new_stop_reason(fake_api, sdk_aclient):
    fake_api.enqueue(Reply.max_tokens("a"), Reply.stop_sequence("b", "END"),
                     Reply.refusal(), Reply.context_window_exceeded("c"), Reply.pause_turn())
    seen = []
    for _ in range(5):
        async with sdk_aclient.messages.stream(model=MODEL, max_tokens=40, messages=HI,
                                               stop_sequences=["END"]) as s:
            seen.append((await s.get_final_message()).stop_reason)
    assert seen == ["max_tokens", "stop_sequence", "refusal", "model_context_window_exceeded",
                    "pause_turn"]
