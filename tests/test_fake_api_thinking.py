"""The fake API's extended thinking: streaming, signatures and the tool-loop rule."""

from __future__ import annotations

import copy

import pytest

from tests.fake_api import FakeAnthropicServer, ModelSpec, Reply
from tests.fake_api.fixtures import fake_api, sdk_aclient, sdk_client  # noqa: F401
from tests.fake_api.fixtures import stream_then_cancel

anthropic = pytest.importorskip("anthropic")

MODEL = "claude-test"
ON = {"type": "enabled", "budget_tokens": 1024}
TOOLS = [{"name": "bash", "description": "run a command",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]


def _ask(client, messages, *, thinking=ON, model=MODEL, **kw):
    return client.messages.create(model=model, max_tokens=2000, messages=messages, tools=TOOLS,
                                  thinking=thinking, **kw)


def _as_param(msg) -> dict:
    return {"role": "assistant",
            "content": [b.model_dump(exclude_none=True, exclude={"parsed_output"}) for b in msg.content]}


def _results(msg, text="ok") -> dict:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": b.id, "content": text}
                                        for b in msg.content if b.type == "tool_use"]}


def _bad(client, messages, **kw) -> str:
    with pytest.raises(anthropic.BadRequestError) as ei:
        _ask(client, messages, **kw)
    assert ei.value.body["error"]["type"] == "invalid_request_error"
    return ei.value.body["error"]["message"]


def _tool_loop_start(fake_api, client, thinking_text="I should list the files."):
    fake_api.enqueue(Reply.thinking(thinking_text, tool_uses=[("bash", {"command": "ls"})]))
    first = _ask(client, [{"role": "user", "content": "list"}])
    return [{"role": "user", "content": "list"}, _as_param(first), _results(first)]


def test_thinking_streams_deltas_then_one_signature(fake_api, sdk_client):
    fake_api.enqueue(Reply.thinking("abcdefghij", "answer", chunk=4))
    with sdk_client.messages.stream(model=MODEL, max_tokens=2000, thinking=ON,
                                    messages=[{"role": "user", "content": "q"}]) as s:
        events = [(e.type, getattr(getattr(e, "delta", None), "type", None)) for e in s
                  if e.type.startswith("content_block")]
        final = s.get_final_message()
    assert events[:6] == [("content_block_start", None), ("content_block_delta", "thinking_delta"),
                          ("content_block_delta", "thinking_delta"),
                          ("content_block_delta", "thinking_delta"),
                          ("content_block_delta", "signature_delta"), ("content_block_stop", None)]
    assert final.content[0].type == "thinking" and final.content[0].thinking == "abcdefghij"
    assert final.content[0].signature and final.content[1].text == "answer"


def test_display_omitted_sends_empty_thinking_and_no_deltas(fake_api, sdk_client):
    fake_api.enqueue(Reply.thinking("secret reasoning", "hello"))
    # claude-sonnet-5-5 thinks adaptively by default and omits thinking text by default
    with sdk_client.messages.stream(model="claude-sonnet-5-5", max_tokens=2000,
                                    messages=[{"role": "user", "content": "q"}]) as s:
        kinds = [e.delta.type for e in s if e.type == "content_block_delta"]
        final = s.get_final_message()
    assert "thinking_delta" not in kinds and kinds.count("signature_delta") == 1
    assert final.content[0].thinking == "" and final.content[0].signature
    assert final.usage.output_tokens_details.thinking_tokens == 4
    fake_api.enqueue(Reply.thinking("secret reasoning", "hello"))
    shown = sdk_client.messages.create(model="claude-sonnet-5-5", max_tokens=2000,
                                       thinking={"type": "adaptive", "display": "summarized"},
                                       messages=[{"role": "user", "content": "q"}])
    assert shown.content[0].thinking == "secret reasoning"


def test_three_step_tool_loop_with_thinking_round_trips(fake_api, sdk_client):
    messages = _tool_loop_start(fake_api, sdk_client)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "cat a"}).with_thinking("Now read a."),
                     Reply.text("done"))
    second = _ask(sdk_client, messages)  # interleaved: this step thinks too
    messages += [_as_param(second), _results(second)]
    assert _ask(sdk_client, messages).content[0].text == "done"
    assert fake_api.rejections == []


def test_tool_loop_without_the_thinking_block_is_the_documented_400(fake_api, sdk_client):
    messages = _tool_loop_start(fake_api, sdk_client)
    stripped = copy.deepcopy(messages)
    stripped[1]["content"] = stripped[1]["content"][1:]
    message = _bad(sdk_client, stripped)
    assert message.startswith("messages.1.content.0.type: Expected `thinking` or "
                              "`redacted_thinking`, but found `tool_use`. When `thinking` is "
                              "enabled, a final `assistant` message must start with a thinking "
                              "block (preceeding the lastmost set of `tool_use` and `tool_result` "
                              "blocks).")
    # with thinking off the same history is fine (the API strips and ignores thinking)
    fake_api.enqueue(Reply.text("ok"))
    assert _ask(sdk_client, stripped, thinking={"type": "disabled"}).content[0].text == "ok"


def test_adaptive_loop_needs_thinking_only_when_the_reply_had_it(fake_api, sdk_client):
    fake_api.enqueue(Reply.tool_use("bash", {"command": "ls"}))  # adaptive: chose not to think
    adaptive = {"type": "adaptive"}
    first = _ask(sdk_client, [{"role": "user", "content": "list"}], thinking=adaptive)
    history = [{"role": "user", "content": "list"}, _as_param(first), _results(first)]
    assert _ask(sdk_client, history, thinking=adaptive).content[0].text == "ok"
    messages = _tool_loop_start(fake_api, sdk_client)
    messages[1]["content"] = messages[1]["content"][1:]
    assert "Expected `thinking`" in _bad(sdk_client, messages, thinking=adaptive)


def test_modified_thinking_is_refused_in_the_latest_turn(fake_api, sdk_client):
    messages = _tool_loop_start(fake_api, sdk_client)
    messages[1]["content"][0]["thinking"] += " Really."
    assert _bad(sdk_client, messages) == (
        "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant "
        "message cannot be modified. These blocks must remain as they were in the original "
        "response.")


@pytest.mark.parametrize("signature", ["", "bm90IGEgc2lnbmF0dXJl", "Zm9yZ2Vk|abc"])
def test_forged_signature_is_refused(fake_api, sdk_client, signature):
    messages = _tool_loop_start(fake_api, sdk_client)
    messages[1]["content"][0]["signature"] = signature
    assert _bad(sdk_client, messages) == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_unsigned_thinking_block_is_refused(fake_api, sdk_client):
    messages = _tool_loop_start(fake_api, sdk_client)
    del messages[1]["content"][0]["signature"]
    assert _bad(sdk_client, messages) == "messages.1.content.0.thinking.signature: Field required"


def test_a_signature_of_another_model_is_refused(fake_api, sdk_client):
    messages = _tool_loop_start(fake_api, sdk_client)
    fake_api.enqueue(Reply.text("x"))
    message = _bad(sdk_client, messages, model="claude-bench")
    assert message == "messages.1.content.0: Invalid `signature` in `thinking` block"
    assert fake_api.pending == 1


def test_earlier_turns_may_leave_their_thinking_out(fake_api, sdk_client):
    messages = _tool_loop_start(fake_api, sdk_client)
    fake_api.enqueue(Reply.text("listed"))
    done = _ask(sdk_client, messages)
    later = copy.deepcopy(messages) + [_as_param(done), {"role": "user", "content": "thanks"}]
    fake_api.enqueue(Reply.text("welcome"), Reply.text("again"))
    assert _ask(sdk_client, later).content[0].text == "welcome"
    later[1]["content"] = later[1]["content"][1:]  # an earlier turn without its thinking
    assert _ask(sdk_client, later).content[0].text == "again"
    old = copy.deepcopy(messages)
    old[1]["content"][0]["thinking"] = "changed"  # but what is sent must be genuine
    assert "Invalid `signature`" in _bad(sdk_client, old + [_as_param(done), {
        "role": "user", "content": "thanks"}])


def test_redacted_thinking_round_trips_and_must_not_be_dropped(fake_api, sdk_client):
    fake_api.enqueue(Reply.tool_use("bash", {"command": "ls"}).with_thinking("plan")
                     .with_redacted_thinking())
    with sdk_client.messages.stream(model=MODEL, max_tokens=2000, thinking=ON, tools=TOOLS,
                                    messages=[{"role": "user", "content": "go"}]) as s:
        first = s.get_final_message()
    assert [b.type for b in first.content] == ["thinking", "redacted_thinking", "tool_use"]
    assert first.content[1].data
    messages = [{"role": "user", "content": "go"}, _as_param(first), _results(first)]
    dropped = copy.deepcopy(messages)
    del dropped[1]["content"][1]
    assert "cannot be modified" in _bad(sdk_client, dropped)
    forged = copy.deepcopy(messages)
    forged[1]["content"][1]["data"] = "AAAA"
    assert _bad(sdk_client, forged) == "messages.1.content.1: Invalid `data` in `redacted_thinking` block"
    fake_api.enqueue(Reply.text("fine"))
    assert _ask(sdk_client, messages).content[0].text == "fine"


@pytest.mark.asyncio
async def test_cut_in_the_middle_of_thinking_then_a_valid_next_request(fake_api, sdk_aclient):
    fake_api.enqueue(Reply.half_thinking("I was thinking about", seconds=30))
    seen = await stream_then_cancel(sdk_aclient, fake_api, deltas=4, model=MODEL, max_tokens=2000,
                                    thinking=ON, messages=[{"role": "user", "content": "q"}])
    assert "signature_delta" not in seen
    # the unsigned half block is not sent back; the next request is valid
    fake_api.enqueue(Reply.text("ok"))
    msg = await sdk_aclient.messages.create(
        model=MODEL, max_tokens=2000, thinking=ON,
        messages=[{"role": "user", "content": "q"}, {"role": "assistant", "content": "(interrupted)"},
                  {"role": "user", "content": "go on"}])
    assert msg.content[0].text == "ok"
    # sending the half block itself would be refused: it has no signature
    with pytest.raises(anthropic.BadRequestError):
        await sdk_aclient.messages.create(
            model=MODEL, max_tokens=2000, thinking=ON,
            messages=[{"role": "user", "content": "q"},
                      {"role": "assistant", "content": [
                          {"type": "thinking", "thinking": "I was thinking about"},
                          {"type": "text", "text": "x"}]},
                      {"role": "user", "content": "go on"}])


def test_half_thinking_can_finish_with_its_signature(fake_api, sdk_client):
    fake_api.enqueue(Reply.half_thinking("slow thought", seconds=0.1, then="finish"))
    with sdk_client.messages.stream(model=MODEL, max_tokens=2000, thinking=ON,
                                    messages=[{"role": "user", "content": "q"}]) as s:
        final = s.get_final_message()
    assert final.content[0].thinking == "slow thought" and final.content[0].signature


def test_half_thinking_can_end_in_an_error_event(fake_api, sdk_client):
    fake_api.enqueue(Reply.half_thinking("hmm", then="error"))
    with pytest.raises(anthropic.APIStatusError):
        with sdk_client.messages.stream(model=MODEL, max_tokens=2000, thinking=ON,
                                        messages=[{"role": "user", "content": "q"}]) as s:
            s.get_final_message()


def test_an_assistant_message_may_not_end_with_thinking(fake_api, sdk_client):
    fake_api.enqueue(Reply.thinking("t", "answer"))
    msg = _ask(sdk_client, [{"role": "user", "content": "q"}])
    only_thinking = {"role": "assistant", "content": [_as_param(msg)["content"][0]]}
    message = _bad(sdk_client, [{"role": "user", "content": "q"}, only_thinking,
                                {"role": "user", "content": "more"}])
    assert message == "messages.1: The final block in an assistant message cannot be `thinking`."


USER = [{"role": "user", "content": "q"}]


@pytest.mark.parametrize("model, kw, message", [
    (MODEL, {"thinking": {"type": "enabled", "budget_tokens": 1000}},
     "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"),
    (MODEL, {"thinking": {"type": "enabled", "budget_tokens": 2000}},
     "`max_tokens` must be greater than `thinking.budget_tokens`."),
    (MODEL, {"thinking": {"type": "enabled"}}, "thinking.enabled.budget_tokens: Field required"),
    (MODEL, {"thinking": {"type": "sometimes"}}, "thinking: Input tag 'sometimes' found"),
    (MODEL, {"thinking": {"type": "disabled", "display": "omitted"}},
     "thinking.disabled.display: Extra inputs are not permitted"),
    (MODEL, {"thinking": {"type": "adaptive", "display": "full"}},
     "thinking.adaptive.display: Input should be 'summarized' or 'omitted'"),
    ("claude-sonnet-5-5", {"thinking": {"type": "enabled", "budget_tokens": 1024}},
     '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
     '"output_config.effort" to control thinking behavior.'),
    ("claude-haiku-4-5", {"thinking": {"type": "adaptive"}},
     "adaptive thinking is not supported on this model"),
    ("claude-opus-5-5", {"thinking": {"type": "disabled"}},
     '"thinking.type.disabled" is not supported for this model. Thinking defaults to adaptive mode'),
    ("claude-haiku-4-5", {"output_config": {"effort": "low"}},
     "This model does not support the effort parameter."),
    (MODEL, {"output_config": {"effort": "extreme"}},
     "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"),
    (MODEL, {"thinking": {"type": "enabled", "budget_tokens": 1024},
             "tool_choice": {"type": "any"}},
     "Thinking may not be enabled when tool_choice forces tool use."),
    ("claude-sonnet-5-5", {"tool_choice": {"type": "tool", "name": "bash"}},
     "Thinking may not be enabled when tool_choice forces tool use."),
])
def test_thinking_and_effort_config_errors(fake_api, sdk_client, model, kw, message):
    fake_api.enqueue(Reply.text("not consumed"))
    with pytest.raises(anthropic.BadRequestError) as ei:
        sdk_client.messages.create(model=model, max_tokens=2000, messages=USER, tools=TOOLS, **kw)
    assert ei.value.body["error"]["message"].startswith(message)
    assert fake_api.pending == 1


def test_effort_levels_follow_the_model():
    specs = [ModelSpec("claude-46", effort_levels=("low", "medium", "high", "max")),
             ModelSpec("claude-5", effort_cap_thinking_disabled="high")]
    with FakeAnthropicServer(models=specs) as srv:
        with anthropic.Anthropic(base_url=srv.url, api_key="t", max_retries=0) as c:
            assert c.messages.create(model="claude-46", max_tokens=5, messages=USER,
                                     output_config={"effort": "max"}).content[0].text == "ok"
            with pytest.raises(anthropic.BadRequestError) as ei:
                c.messages.create(model="claude-46", max_tokens=5, messages=USER,
                                  output_config={"effort": "xhigh"})
            assert ei.value.body["error"]["message"] == (
                "This model does not support effort level 'xhigh'. Supported levels: high, low, "
                "max, medium.")
            with pytest.raises(anthropic.BadRequestError) as ei:
                c.messages.create(model="claude-5", max_tokens=5, messages=USER,
                                  thinking={"type": "disabled"}, output_config={"effort": "max"})
            assert ei.value.body["error"]["message"].startswith(
                "output_config.effort 'max' is not supported when thinking is disabled")
            assert c.messages.create(model="claude-5", max_tokens=5, messages=USER,
                                     output_config={"effort": "max"}).content[0].text == "ok"


def test_signatures_survive_a_server_restart_but_not_another_secret(sdk_client, fake_api):
    messages = _tool_loop_start(fake_api, sdk_client)
    with FakeAnthropicServer() as again:
        with anthropic.Anthropic(base_url=again.url, api_key="t", max_retries=0) as c:
            assert _ask(c, messages).content[0].text == "ok"
    with FakeAnthropicServer(thinking_secret=b"other") as other:
        with anthropic.Anthropic(base_url=other.url, api_key="t", max_retries=0) as c:
            assert "Invalid `signature`" in _bad(c, messages)


@pytest.mark.asyncio
async def test_async_stream_of_a_tool_loop_with_thinking(fake_api, sdk_aclient):
    fake_api.enqueue(Reply.thinking("think", tool_uses=[("bash", {"command": "ls"})]),
                     Reply.text("done"))
    async with sdk_aclient.messages.stream(model=MODEL, max_tokens=2000, thinking=ON, tools=TOOLS,
                                           messages=[{"role": "user", "content": "go"}]) as s:
        first = await s.get_final_message()
    messages = [{"role": "user", "content": "go"}, _as_param(first), _results(first)]
    async with sdk_aclient.messages.stream(model=MODEL, max_tokens=2000, thinking=ON, tools=TOOLS,
                                           messages=messages) as s:
        assert await s.get_final_text() == "done"


def test_thinking_blocks_belong_to_assistant_messages(fake_api, sdk_client):
    from tests.fake_api import validate_messages

    body = {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "thinking", "thinking": "x", "signature": "s"}, {"type": "text", "text": "q"}]}]}
    assert validate_messages(body) == (
        "messages.0.content.0: `thinking` blocks can only be in `assistant` messages")
    body["messages"][0]["content"][0] = {"type": "redacted_thinking"}
    assert validate_messages(body) == (
        "messages.0.content.0: `redacted_thinking` blocks can only be in `assistant` messages")
