"""A reply whose stream fails after some of its tool calls were complete: those calls
never run, and their state and the model's wording say the stream failed (not the
user), through the real SDK against the strict fake API."""

from __future__ import annotations

import pytest

from agent_tui.cancel import CancelReason
from agent_tui.protocol import UserMessage
from agent_tui.providers.anthropic import AnthropicProvider
from tests.fake_api import Reply
from tests.harness import QuickTool, start_session

pytestmark = pytest.mark.asyncio


def _calls_then(end: str) -> Reply:
    reply = Reply.tool_uses([("quick", {"note": "a"}, "toolu_a"),
                             ("quick", {"note": "b"}, "toolu_b")])
    reply.partial = {"type": "tool_use", "id": "toolu_cut", "name": "quick",
                     "partial_json": '{"note": "nev'}
    if end == "error_event":
        reply.end, reply.error_type = "error_event", "overloaded_error"
        reply.error_message = "Overloaded"
    else:  # the connection drops mid-body
        reply.end, reply.stall_seconds, reply.stall_then = "stall", 0.2, "close"
    return reply


@pytest.mark.parametrize("end", ["error_event", "dropped_connection"])
async def test_complete_calls_of_a_failed_stream_say_the_stream_failed(fake_api, tmp_path, end):
    quick = QuickTool()
    fake_api.enqueue(_calls_then(end))
    run = start_session(AnthropicProvider(api_key="test-key", base_url=fake_api.url),
                        [quick], tmp_path, max_retries=0)
    run.submit(UserMessage(text="do two things"))
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "failed"
    assert quick.calls == []  # nothing ran
    for call_id in ("toolu_a", "toolu_b"):
        assert run.rec.tool_states(call_id) == ["streaming", "queued", "cancelled_before_start"]
        final = [e for e in run.rec.of("tool_state") if e.tool_use_id == call_id][-1]
        assert final.ended_by is CancelReason.STREAM_FAILED
        assert "stream failed" in final.detail
        assert "user" not in (final.result or "")
        assert "stream failed" in (final.result or "")
    assert run.rec.tool_states("toolu_cut")[-1] == "failed"  # its arguments never completed

    fake_api.enqueue(Reply.text("ok"))
    run.submit(UserMessage(text="again"))
    await run.idle()
    assert fake_api.rejections == []
    request = fake_api.requests[-1]
    results = {b["tool_use_id"]: b for m in request["messages"] if m["role"] == "user"
               for b in m["content"] if b["type"] == "tool_result"}
    assert list(results) == ["toolu_a", "toolu_b"]
    for block in results.values():
        assert block["is_error"] is True
        assert block["content"].startswith(
            "Not run: the turn ended before this tool call could start "
            "(the model's reply stream failed: ")
        assert "user" not in block["content"]
    texts = [b.get("text", "") for m in request["messages"] for b in m["content"]]
    assert not any("interrupted" in t for t in texts)
    await run.close()
