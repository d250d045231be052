"""Thinking round-trips, model switches, stop reasons and HTTP errors, against a fake
API that enforces the Messages API's rules (signatures, the tool-loop rule)."""

from __future__ import annotations

import asyncio

from agent_tui.core.journal.records import AssistantMessageRecord
from agent_tui.core.usage.thinking import ThinkingError, parse_thinking
from agent_tui.protocol import Interrupt, SetModel, UserMessage
from agent_tui.providers.anthropic import AnthropicProvider
from tests.fake_api import Reply
from tests.harness import QuickTool, SlowTool, plain, start_session

import pytest


pytestmark = pytest.mark.asyncio

def provider_for(srv) -> AnthropicProvider:
    return AnthropicProvider(api_key="test-key", base_url=srv.url)


def assistant_records(journal) -> list[AssistantMessageRecord]:
    return [r for r in journal.records if isinstance(r, AssistantMessageRecord)]


async def test_a_three_step_tool_loop_with_thinking_round_trips(fake_api, tmp_path):
    fake_api.enqueue(
        Reply.thinking("I should look first.", tool_uses=[("quick", {"note": "one"})]),
        Reply.thinking("Now the second look.", tool_uses=[("quick", {"note": "two"})]),
        Reply.thinking("Enough.", "All done."),
    )
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path,
                        thinking=parse_thinking("adaptive"))
    run.submit(UserMessage(text="investigate"))
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
    assert len(fake_api.requests) == 3
    assert fake_api.requests[0]["thinking"]["type"] == "adaptive"
    thoughts = "".join(e.text for e in run.rec.of("thinking_delta"))
    assert "I should look first." in thoughts and "Enough." in thoughts
    # The journal keeps thinking verbatim, signature included, and it went back so.
    first = assistant_records(run.journal)[0].blocks[0]
    assert first["type"] == "thinking" and first["signature"]
    sent = fake_api.requests[1]["messages"][1]["content"][0]
    assert plain(sent) == first


async def test_redacted_thinking_is_kept_and_sent_back_with_its_data(fake_api, tmp_path):
    fake_api.enqueue(
        Reply.thinking("plan", tool_uses=[("quick", {"note": "x"})], redacted=1),
        Reply.text("ok"),
    )
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path,
                        thinking=parse_thinking("4096"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
    blocks = assistant_records(run.journal)[0].blocks
    redacted = [b for b in blocks if b["type"] == "redacted_thinking"]
    assert redacted and redacted[0]["data"]
    assert fake_api.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 4096,
                                                "display": "summarized"}
    assert fake_api.requests[0]["max_tokens"] > 4096


async def test_thinking_cut_before_its_signature_never_reaches_the_model(fake_api, tmp_path):
    fake_api.enqueue(Reply.half_thinking("half a thou", seconds=20))
    run = start_session(provider_for(fake_api), [], tmp_path, thinking=parse_thinking("adaptive"))
    run.submit(UserMessage(text="think"))
    await run.rec.wait_for(lambda: bool(run.rec.of("thinking_delta")))
    run.submit(Interrupt())
    await run.idle()
    record = assistant_records(run.journal)[0]
    assert record.incomplete_thinking and record.incomplete_thinking[0]["thinking"]
    assert not any(b["type"] == "thinking" for b in record.blocks)
    fake_api.enqueue(Reply.text("fine"))
    run.submit(UserMessage(text="again"))
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
    assert "half a thou" not in str(fake_api.requests[-1]["messages"])


@pytest.mark.parametrize("step", [1, 2])
async def test_esc_after_a_whole_thinking_block_before_its_tool_call_keeps_the_next_request_valid(
        fake_api, tmp_path, step):
    # The reply keeps only its signed thinking: the API refuses an assistant message
    # that ends with thinking, so the model view leaves that thinking out.
    replies = [Reply.half_tool_use("quick", '{"no', seconds=20).with_thinking("look first")]
    if step == 2:
        replies.insert(0, Reply.thinking("one look", tool_uses=[("quick", {"note": "a"})]))
    fake_api.enqueue(*replies)
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path,
                        thinking=parse_thinking("adaptive"))
    run.submit(UserMessage(text="look"))
    await run.rec.wait_for(lambda: len([e for e in run.rec.of("tool_state")
                                        if e.state == "streaming"]) == step)
    run.submit(Interrupt())
    await run.idle()
    cut = assistant_records(run.journal)[-1]
    assert [b["type"] for b in cut.blocks] == ["thinking"] and cut.blocks[0]["signature"]
    fake_api.enqueue(Reply.text("ok"))
    run.submit(UserMessage(text="again"))
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
    assert run.rec.of("turn_ended")[-1].status == "completed"
    assert "look first" not in str(fake_api.requests[-1]["messages"])


async def test_a_model_switch_strips_the_other_models_thinking_and_says_so(fake_api, tmp_path):
    fake_api.enqueue(Reply.thinking("deep thought", "answer one"), Reply.text("answer two"))
    run = start_session(provider_for(fake_api), [], tmp_path, thinking=parse_thinking("adaptive"))
    run.submit(UserMessage(text="one"))
    await run.idle()
    run.submit(SetModel(model="claude-haiku-4-5"))
    await run.rec.wait_type("model_changed")
    run.submit(UserMessage(text="two"))
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
    last = fake_api.requests[-1]
    assert last["model"] == "claude-haiku-4-5"
    assert "deep thought" not in str(last["messages"])
    notes = [e for e in run.rec.of("notice") if e.code == "model_switched"]
    assert len(notes) == 1
    changed = run.rec.of("model_changed")[-1]
    assert changed.model == "claude-haiku-4-5" and changed.context_window


async def test_an_unknown_model_is_a_clear_error_naming_close_matches(fake_api, tmp_path):
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(SetModel(model="claude-sonet-5-5"))
    await run.rec.wait_for(lambda: any("unknown model" in e.text for e in run.rec.of("notice")))
    await run.close()
    text = next(e.text for e in run.rec.of("notice") if "unknown model" in e.text)
    assert "claude-sonnet-5-5" in text and "still using claude-test" in text


async def test_thinking_settings_are_checked():
    assert str(parse_thinking("off")) == "off"
    assert parse_thinking("2048").budget == 2048
    with pytest.raises(ThinkingError, match="at least 1024"):
        parse_thinking("100")
    with pytest.raises(ThinkingError):
        parse_thinking("lots")


async def test_max_tokens_in_text_asks_the_model_to_go_on_in_the_same_turn(fake_api, tmp_path):
    """As Claude Code: the cut answer goes back, then a user message telling the model
    to resume; the fake API's cut reply reports the request's max_tokens, as the API does."""
    fake_api.enqueue(Reply.max_tokens("a long answer that"), Reply.text("continued"))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="explain"))
    await run.idle()
    await run.close()
    first, second = fake_api.requests
    assert fake_api.usage[0].output_tokens == first["max_tokens"]
    assert second["messages"][-2] == {"role": "assistant", "content": [
        {"type": "text", "text": "a long answer that"}]}
    [note] = second["messages"][-1]["content"]
    assert second["messages"][-1]["role"] == "user"
    assert note["text"].startswith("[Output token limit hit (max_tokens). Resume directly")
    assert [e.status for e in run.rec.of("turn_ended")] == ["completed"]
    assert not any("max_tokens" in e.text for e in run.rec.of("notice"))
    assert fake_api.rejections == []


async def test_max_tokens_goes_on_three_times_then_the_turn_ends_saying_so(fake_api, tmp_path):
    fake_api.enqueue(*[Reply.max_tokens(f"part {n}") for n in range(4)], Reply.text("ok"))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="explain"))
    await run.idle()
    assert len(fake_api.requests) == 4  # the first, and three to go on
    assert any("max_tokens) 4 times in a row" in e.text for e in run.rec.of("notice"))
    run.submit(UserMessage(text="go on"))
    await run.idle()
    await run.close()
    last = fake_api.requests[4]["messages"][-1]["content"]
    assert "cut off at the output limit" in last[0]["text"] and last[-1]["text"] == "go on"
    assert len(fake_api.requests) == 5 and fake_api.rejections == []


async def test_max_tokens_inside_a_tool_call_never_runs_it(fake_api, tmp_path):
    fake_api.enqueue(Reply.max_tokens_in_tool_use("quick", '{"note": "unfini'))
    quick = QuickTool()
    run = start_session(provider_for(fake_api), [quick], tmp_path)
    run.submit(UserMessage(text="call it"))
    await run.idle()
    fake_api.enqueue(Reply.text("ok"))
    run.submit(UserMessage(text="next"))
    await run.idle()
    await run.close()
    assert quick.calls == []
    assert run.rec.tool_states(name="quick")[-1] == "failed"
    assert fake_api.rejections == []


async def test_pause_turn_sends_the_paused_content_back_and_goes_on(fake_api, tmp_path):
    fake_api.enqueue(Reply.pause_turn("searching"), Reply.text("found it"))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="search"))
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
    assert len(fake_api.requests) == 2
    assert fake_api.requests[1]["messages"][-1]["role"] == "assistant"
    assert run.rec.of("turn_ended")[-1].status == "completed"


async def test_a_refusal_ends_the_turn_honestly_and_the_view_stays_valid(fake_api, tmp_path):
    fake_api.enqueue(Reply.refusal("I can't"), Reply.text("sure"))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="something"))
    await run.idle()
    assert any("refusal" in e.text for e in run.rec.of("notice"))
    run.submit(UserMessage(text="something else"))
    await run.idle()
    await run.close()
    assert fake_api.rejections == []


async def test_context_window_exceeded_compacts_and_goes_on(fake_api, tmp_path):
    fake_api.enqueue(
        Reply.context_window_exceeded("partial"),
        lambda body: Reply.text("the summary"),
        Reply.text("and the rest"),
    )
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="write a lot"))
    await run.idle()
    await run.close()
    assert [e.state for e in run.rec.of("compaction")] == ["started", "completed"]
    assert run.rec.of("turn_ended")[-1].status == "completed"
    assert fake_api.rejections == []


@pytest.mark.parametrize("status, error_type, words", [
    (401, "authentication_error", "ANTHROPIC_API_KEY"),
    (403, "permission_error", "may not use"),
    (404, "not_found_error", "model name"),
    (413, "request_too_large", "too large"),
    (400, "invalid_request_error", "Invalid request"),
])
async def test_http_errors_are_one_clear_line_never_retried(fake_api, tmp_path, status,
                                                            error_type, words):
    fake_api.enqueue(Reply.error(status, error_type), Reply.text("back"))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="hi"))
    await run.idle()
    ended = run.rec.of("turn_ended")[-1]
    assert ended.status == "failed" and str(status) in ended.detail and words in ended.detail
    assert len(fake_api.requests) == 1  # a retry could not pass
    run.submit(UserMessage(text="hi again"))
    await run.idle()
    await run.close()
    assert run.rec.of("turn_ended")[-1].status == "completed"


async def test_thinking_during_a_slow_tool_then_esc_keeps_the_next_request_valid(fake_api, tmp_path):
    slow = SlowTool()
    fake_api.enqueue(Reply.thinking("need the slow one", tool_uses=[("slow", {"note": "z"})]))
    run = start_session(provider_for(fake_api), [slow], tmp_path,
                        thinking=parse_thinking("adaptive"))
    run.submit(UserMessage(text="slow please"))
    await asyncio.wait_for(slow.started.wait(), 10)
    run.submit(Interrupt())
    await run.idle()
    fake_api.enqueue(Reply.text("ok"))
    run.submit(UserMessage(text="next"))
    await run.idle()
    await run.close()
    assert fake_api.rejections == []
