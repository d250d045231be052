"""The fake API's prompt cache, by breakpoints and prefixes, through the real SDK."""

from __future__ import annotations

import pytest

from tests.fake_api import FakeAnthropicServer, Reply
from tests.fake_api.fixtures import (  # noqa: F401
    fake_api, fake_api_clocked, fake_clock, sdk_aclient, sdk_client)

anthropic = pytest.importorskip("anthropic")

MODEL = "claude-test"  # minimum cacheable prompt: 1024 tokens
BIG = "The system prompt of a long session. " * 140  # ~1,300 tokens
TOOLS = [{"name": "bash", "description": "run a command",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]
EPH = {"type": "ephemeral"}


def _system(cc=EPH, text=BIG):
    block = {"type": "text", "text": text}
    if cc:
        block["cache_control"] = cc
    return [block]


def _ask(client, **kw):
    body = {"model": MODEL, "max_tokens": 50, "system": _system(),
            "messages": [{"role": "user", "content": "hi"}], **kw}
    return client.messages.create(**body).usage, body


def _split(u):
    return u.cache_read_input_tokens, u.cache_creation_input_tokens, u.input_tokens


def test_system_breakpoint_writes_then_reads(fake_api, sdk_client):
    first, body = _ask(sdk_client)
    total = fake_api.count_tokens(body)
    system_tokens = fake_api.count_tokens({**body, "messages": []})
    assert _split(first) == (0, system_tokens, total - system_tokens)
    second, _ = _ask(sdk_client, messages=[{"role": "user", "content": "another question"}])
    assert second.cache_read_input_tokens == system_tokens
    assert second.cache_creation_input_tokens == 0
    assert second.cache_creation.ephemeral_5m_input_tokens == 0


def test_below_the_minimum_cacheable_length_nothing_is_cached(fake_api, sdk_client):
    for _ in range(2):
        u, _body = _ask(sdk_client, system=_system(text="short system prompt"))
        assert _split(u)[:2] == (0, 0)
    fake_api.configure_model(MODEL, min_cacheable_tokens=5)
    u, _body = _ask(sdk_client, system=_system(text="short system prompt"))
    assert u.cache_creation_input_tokens > 0


def test_automatic_caching_moves_forward_with_the_conversation(fake_api, sdk_client):
    messages = [{"role": "user", "content": "question 0 " + BIG}]
    seen = []
    for turn in range(3):
        fake_api.enqueue(Reply.text(f"answer {turn}"))
        body = {"model": MODEL, "max_tokens": 50, "messages": list(messages),
                "cache_control": EPH, "system": "Be brief."}
        msg = sdk_client.messages.create(**body)
        seen.append((_split(msg.usage), fake_api.count_tokens(body)))
        messages += [{"role": "assistant", "content": msg.content[0].text},
                     {"role": "user", "content": f"question {turn + 1}"}]
    (r0, c0, i0), total0 = seen[0]
    assert (r0, i0) == (0, 0) and c0 == total0  # everything up to the last block written
    for (read, created, plain), total in seen[1:]:
        assert plain == 0
        assert read > 0 and created > 0 and read + created == total
    assert seen[2][0][0] == seen[1][1]  # turn 3 reads exactly what turn 2 had in all


def test_lookback_finds_a_write_at_most_20_blocks_back(fake_api, sdk_client):
    def body(n_blocks, second_breakpoint=False):
        blocks = [{"type": "text", "text": f"block {i} " + "pad " * 60} for i in range(n_blocks)]
        blocks[-1] = {**blocks[-1], "cache_control": EPH}
        if second_breakpoint:
            blocks[14] = {**blocks[14], "cache_control": EPH}
        return {"model": MODEL, "max_tokens": 20, "messages": [{"role": "user", "content": blocks}]}

    first = body(15)
    sdk_client.messages.create(**first)
    prefix15 = fake_api.count_tokens(first)
    u = sdk_client.messages.create(**body(36)).usage  # block 15 is 22 positions back
    assert u.cache_read_input_tokens == 0
    u = sdk_client.messages.create(**body(34)).usage  # block 15 is the 20th position back
    assert u.cache_read_input_tokens == prefix15
    u = sdk_client.messages.create(**body(60, second_breakpoint=True)).usage
    assert u.cache_read_input_tokens == prefix15  # a second breakpoint starts its own window


def test_any_change_before_the_breakpoint_is_a_miss(fake_api, sdk_client):
    _ask(sdk_client, tools=TOOLS)
    u, _ = _ask(sdk_client, tools=TOOLS)
    assert u.cache_read_input_tokens > 0
    changed = [{**TOOLS[0], "description": "run a shell command"}]
    u, _ = _ask(sdk_client, tools=changed)
    assert u.cache_read_input_tokens == 0 and u.cache_creation_input_tokens > 0
    u, _ = _ask(sdk_client, tools=changed, system=_system(text=BIG + "!"))
    assert u.cache_read_input_tokens == 0
    u, _ = _ask(sdk_client, tools=changed, model="claude-bench")
    assert u.cache_read_input_tokens == 0  # caches are per model


def test_thinking_change_invalidates_messages_but_not_the_system_prompt(fake_api, sdk_client):
    msgs = [{"role": "user", "content": [{"type": "text", "text": BIG, "cache_control": EPH}]}]
    base = {"model": MODEL, "max_tokens": 3000, "system": _system(), "messages": msgs}
    sdk_client.messages.create(**base)
    u = sdk_client.messages.create(**base).usage
    assert u.cache_creation_input_tokens == 0 and u.input_tokens == 0
    u = sdk_client.messages.create(**base, thinking={"type": "enabled", "budget_tokens": 2000}).usage
    system_tokens = fake_api.count_tokens({**base, "messages": []})
    assert u.cache_read_input_tokens == system_tokens
    assert u.cache_creation_input_tokens == fake_api.count_tokens(base) - system_tokens


def test_entries_expire_after_their_ttl_and_hits_refresh_them(fake_api_clocked, fake_clock):
    with anthropic.Anthropic(base_url=fake_api_clocked.url, api_key="t", max_retries=0) as c:
        _ask(c)
        fake_clock.advance(299)
        assert _ask(c)[0].cache_read_input_tokens > 0  # hit: refreshed for 5 more minutes
        fake_clock.advance(299)
        assert _ask(c)[0].cache_read_input_tokens > 0
        fake_clock.advance(301)
        u, _ = _ask(c)
        assert u.cache_read_input_tokens == 0 and u.cache_creation_input_tokens > 0
        _ask(c, system=_system(cc={"type": "ephemeral", "ttl": "1h"}))
        fake_clock.advance(3000)
        assert _ask(c)[0].cache_read_input_tokens > 0  # the 1-hour entry outlived 5 minutes
    assert len(fake_api_clocked.cache) >= 1
    fake_api_clocked.clear_cache()
    assert len(fake_api_clocked.cache) == 0


def test_mixed_ttls_split_cache_creation(fake_api, sdk_client):
    body = {"model": MODEL, "max_tokens": 20,
            "tools": [{**TOOLS[0], "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
            "system": _system(), "messages": [{"role": "user", "content": "hi"}]}
    u = sdk_client.messages.create(**body).usage
    tools_tokens = fake_api.count_tokens({**body, "system": [], "messages": []})
    through_system = fake_api.count_tokens({**body, "messages": []})
    assert u.cache_creation.ephemeral_1h_input_tokens == tools_tokens
    assert u.cache_creation.ephemeral_5m_input_tokens == through_system - tools_tokens
    assert u.cache_creation_input_tokens == through_system
    assert fake_api.usage[0].cache_creation_1h == tools_tokens


@pytest.mark.parametrize("body_kw, message", [
    ({"system": [{"type": "text", "text": f"s{i}", "cache_control": EPH} for i in range(5)]},
     "A maximum of 4 blocks with cache_control may be provided. Found 5."),
    ({"system": [{"type": "text", "text": f"s{i}", "cache_control": EPH} for i in range(4)],
      "cache_control": EPH},
     "A maximum of 4 blocks with cache_control may be provided. Found 5."),
    ({"system": [{"type": "text", "text": "s", "cache_control": EPH},
                 {"type": "text", "text": "t", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]},
     "system.1.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' "
     "cache_control block."),
    ({"messages": [{"role": "user", "content": [
        {"type": "text", "text": " ", "cache_control": EPH}]}]},
     "messages.0.content.0.text: cache_control cannot be set for empty text blocks"),
    ({"system": [{"type": "text", "text": "s", "cache_control": {"type": "persistent"}}]},
     "system.0.cache_control.type: Input should be 'ephemeral'"),
    ({"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "ttl": "2h"}}]},
     "system.0.cache_control.ttl: Input should be '5m' or '1h'"),
    ({"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
      "cache_control": {"type": "ephemeral", "ttl": "5m"}, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi",
                                      "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]},
     "cache_control.ttl: the last cacheable block already has cache_control with ttl='1h'"),
])
def test_invalid_cache_control_is_a_400(fake_api, sdk_client, body_kw, message):
    body = {"model": MODEL, "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}],
            **body_kw}
    with pytest.raises(anthropic.BadRequestError) as ei:
        sdk_client.messages.create(**body)
    assert ei.value.body["error"]["message"].startswith(message)
    assert fake_api.usage == []


def test_automatic_breakpoint_on_the_explicit_one_is_a_no_op(fake_api, sdk_client):
    msgs = [{"role": "user", "content": [{"type": "text", "text": BIG, "cache_control": EPH}]}]
    body = {"model": MODEL, "max_tokens": 20, "messages": msgs, "cache_control": EPH,
            "system": [{"type": "text", "text": f"s{i}", "cache_control": EPH} for i in range(3)]}
    assert sdk_client.messages.create(**body).usage.cache_creation_input_tokens > 0


def test_cache_control_on_a_thinking_block_is_refused(fake_api, sdk_client):
    fake_api.enqueue(Reply.thinking("why not", "yes"))
    first = sdk_client.messages.create(model=MODEL, max_tokens=2000,
                                       thinking={"type": "enabled", "budget_tokens": 1024},
                                       messages=[{"role": "user", "content": "q"}])
    thinking = {**first.content[0].model_dump(exclude_none=True), "cache_control": EPH}
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": [thinking, {"type": "text", "text": "yes"}]},
                {"role": "user", "content": "and?"}]
    with pytest.raises(anthropic.BadRequestError) as ei:
        sdk_client.messages.create(model=MODEL, max_tokens=2000, messages=messages,
                                   thinking={"type": "enabled", "budget_tokens": 1024})
    assert ei.value.body["error"]["message"] == (
        "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted")


def test_per_model_minimum_from_the_catalogue():
    from tests.fake_api import ModelSpec

    with FakeAnthropicServer(models=[ModelSpec("tiny", min_cacheable_tokens=2)]) as srv:
        with anthropic.Anthropic(base_url=srv.url, api_key="t", max_retries=0) as c:
            body = {"model": "tiny", "max_tokens": 5, "system": _system(text="short"),
                    "messages": [{"role": "user", "content": "hi"}]}
            assert c.messages.create(**body).usage.cache_creation_input_tokens > 0
            assert c.messages.create(**body).usage.cache_read_input_tokens > 0


@pytest.mark.asyncio
async def test_async_stream_reports_cache_read_in_message_start(fake_api, sdk_aclient):
    body = {"model": MODEL, "max_tokens": 50, "system": _system(),
            "messages": [{"role": "user", "content": "hi"}]}
    await sdk_aclient.messages.create(**body)
    stream = await sdk_aclient.messages.create(**body, stream=True)
    events = [ev async for ev in stream]
    start = events[0].message.usage
    assert start.cache_read_input_tokens == fake_api.count_tokens({**body, "messages": []})
    delta = next(e for e in events if e.type == "message_delta").usage
    assert delta.cache_read_input_tokens == start.cache_read_input_tokens
