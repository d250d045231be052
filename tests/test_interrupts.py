"""Interrupts at every point of a turn, through the real SDK against the strict fake API.

After each interrupt a second turn must be accepted by the server, which rejects any
request that breaks the tool_use / tool_result rules.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from agent_tui.protocol import Decide, Interrupt, UserMessage
from agent_tui.core.calls.permission import AllowAll, Ruling
from agent_tui.protocol import Decision, Verdict
from tests.fake_api import Reply
from tests.harness import plain, QuickTool, SlowTool, StubbornTool, start_session
from tests.harness import provider_for

pytestmark = pytest.mark.asyncio

TUI_SETTLE_S = 0.01  # the TUI's: the turn ends without a call still stopping after it


async def second_turn_is_accepted(run, srv, expect_note: bool = True) -> dict:
    """Run another turn; the strict server must accept the request."""
    before = len(srv.requests)
    srv.enqueue(Reply.text("all good"))
    run.submit(UserMessage(text="carry on"))
    await run.idle()
    assert srv.rejections == []
    assert run.rec.of("turn_ended")[-1].status == "completed"
    request = srv.requests[before]
    last_user = request["messages"][-1]
    texts = [b["text"] for b in last_user["content"] if b["type"] == "text"]
    if expect_note:
        assert any("interrupted the previous turn" in t for t in texts), texts
    return request


async def test_text_turn_streams_and_completes(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("hello there, developer", chunk=3))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="hi"))
    await run.idle()
    text = "".join(e.text for e in run.rec.of("text_delta"))
    assert text == "hello there, developer"
    assert run.rec.of("turn_ended")[-1].status == "completed"
    assert plain(fake_api.requests[0]["messages"]) == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]
    await run.close()


async def test_interrupt_during_stalled_stream_closes_the_connection(fake_api, tmp_path):
    fake_api.enqueue(Reply.stall(after_text="Thinking about", seconds=60))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="go"))
    # The text comes in 5-character pieces: interrupt once all of it is in (the stall).
    await run.rec.wait_for(
        lambda: "".join(e.text for e in run.rec.of("text_delta")) == "Thinking about")
    run.submit(Interrupt())
    assert await asyncio.to_thread(fake_api.wait_for_disconnect, 5), "no disconnect seen"
    await run.idle()
    ended = run.rec.of("turn_ended")[-1]
    assert ended.status == "cancelled"
    states = [e.state for e in run.rec.of("turn_state")]
    assert states[-2:] == ["cancelling", "cancelled"]
    request = await second_turn_is_accepted(run, fake_api)
    # The partial text is kept as what the model said.
    assistant = request["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0]["text"] == "Thinking about"
    await run.close()


async def test_interrupt_while_tool_arguments_stream_runs_nothing(fake_api, tmp_path):
    slow = SlowTool()
    fake_api.enqueue(Reply.half_tool_use("slow", '{"note": "never fin', text_before="Let me"))
    run = start_session(provider_for(fake_api), [slow], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(lambda: "streaming" in run.rec.tool_states(name="slow"))
    run.submit(Interrupt())
    await run.idle()
    assert slow.calls == []
    assert run.rec.tool_states(name="slow") == ["streaming", "cancelled_before_start"]
    request = await second_turn_is_accepted(run, fake_api)
    # The incomplete call never reaches the model view.
    for msg in request["messages"]:
        assert all(b["type"] != "tool_use" for b in msg["content"])
    await run.close()


async def test_interrupt_during_tool_batch_keeps_finished_result(fake_api, tmp_path):
    quick, slow = QuickTool(), SlowTool()
    fake_api.enqueue(
        Reply.tool_uses(
            [
                ("quick", {"note": "a"}, "toolu_quick"),
                ("slow", {"note": "b"}, "toolu_slow"),
                ("slow", {"note": "c"}, "toolu_queued"),
            ]
        )
    )
    run = start_session(provider_for(fake_api), [quick, slow], tmp_path)
    run.submit(UserMessage(text="do three things"))
    await asyncio.wait_for(slow.started.wait(), 10)
    run.submit(Interrupt())
    await run.idle()
    assert run.rec.tool_states("toolu_quick")[-1] == "succeeded"
    assert run.rec.tool_states("toolu_slow")[-1] == "cancelled_while_running"
    assert run.rec.tool_states("toolu_queued") == ["streaming", "queued", "cancelled_before_start"]
    assert slow.calls == ["b"]
    request = await second_turn_is_accepted(run, fake_api)
    results = {
        b["tool_use_id"]: b
        for b in request["messages"][2]["content"]
        if b["type"] == "tool_result"
    }
    assert list(results) == ["toolu_quick", "toolu_slow", "toolu_queued"]
    assert results["toolu_quick"]["content"] == "quick result a"
    assert "is_error" not in results["toolu_quick"]
    assert "after it started" in results["toolu_slow"]["content"]
    assert "working..." in results["toolu_slow"]["content"]
    assert results["toolu_queued"]["content"].startswith("Not run")
    await run.close()


async def test_interrupt_during_retry_backoff_sends_no_further_request(fake_api, tmp_path):
    fake_api.enqueue(Reply.error(529, "overloaded_error", retry_after=30))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.rec.wait_type("retry_scheduled")
    retry = run.rec.of("retry_scheduled")[0]
    assert retry.delay == 30  # retry-after was honoured
    run.submit(Interrupt())
    await run.idle()  # its wait is shorter than the 30 s back-off
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    await asyncio.sleep(0.2)
    assert len(fake_api.requests) == 1
    await second_turn_is_accepted(run, fake_api)
    await run.close()


async def test_retry_after_overload_then_success(fake_api, tmp_path):
    fake_api.enqueue(Reply.error(529, "overloaded_error", retry_after=0), Reply.text("recovered"))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert len(fake_api.requests) == 2
    assert run.rec.of("turn_ended")[-1].status == "completed"
    assert "".join(e.text for e in run.rec.of("text_delta")) == "recovered"
    await run.close()


async def test_bad_request_fails_the_turn_without_retrying(fake_api, tmp_path):
    fake_api.enqueue(Reply.error(400, "invalid_request_error", "model: not found"))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.idle()
    ended = run.rec.of("turn_ended")[-1]
    assert ended.status == "failed"
    assert "model: not found" in ended.detail
    assert len(fake_api.requests) == 1
    await run.close()


class AskEverything(AllowAll):
    def check(self, tool, args):
        if tool.read_only:
            return Ruling(verdict=Verdict.ALLOW, rule="test")
        return Ruling(verdict=Verdict.ASK, rule="test", reason="writes")

    def remember(self, tool, args):
        pass


async def test_interrupt_during_permission_wait_never_starts_the_tool(fake_api, tmp_path):
    slow = SlowTool()
    fake_api.enqueue(Reply.tool_use("slow", {"note": "x"}, id="toolu_ask"))
    run = start_session(provider_for(fake_api), [slow], tmp_path, policy=AskEverything())
    run.submit(UserMessage(text="go"))
    await run.rec.wait_type("permission_requested")
    run.submit(Interrupt())
    await run.idle()
    assert slow.calls == []
    assert run.rec.tool_states("toolu_ask")[-1] == "cancelled_before_start"
    # A decision arriving after the cancel changes nothing.
    run.submit(Decide(tool_use_id="toolu_ask", decision=Decision.ALLOW_ONCE))
    await run.idle()
    assert slow.calls == []
    await second_turn_is_accepted(run, fake_api)
    await run.close()


async def test_denied_call_is_reported_as_denied_with_the_note(fake_api, tmp_path):
    slow = SlowTool()
    fake_api.enqueue(Reply.tool_use("slow", {"note": "x"}, id="toolu_deny"), Reply.text("ok"))
    run = start_session(provider_for(fake_api), [slow], tmp_path, policy=AskEverything())
    run.submit(UserMessage(text="go"))
    await run.rec.wait_type("permission_requested")
    run.submit(Decide(tool_use_id="toolu_deny", decision=Decision.DENY, note="use git instead"))
    await run.idle()
    assert slow.calls == []
    assert run.rec.tool_states("toolu_deny")[-1] == "denied"
    result = plain(fake_api.requests[1]["messages"])[2]["content"][0]
    assert result["is_error"] is True
    assert "denied" in result["content"] and "use git instead" in result["content"]
    assert fake_api.rejections == []
    await run.close()


async def test_tool_that_ignores_cancel_becomes_unknown_within_budget(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("stubborn", {}, id="toolu_stub"))
    run = start_session(provider_for(fake_api), [StubbornTool()], tmp_path, cleanup_budget=0.3,
                        stop_settle_s=TUI_SETTLE_S)
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(lambda: "running" in run.rec.tool_states("toolu_stub"))
    run.submit(Interrupt())
    await run.idle()  # the turn ends at once; the call goes on stopping, shown so
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    shown = run.rec.final_tool("stubborn")
    assert shown.state == "running" and shown.detail.startswith("stopping: waiting up to")
    await run.rec.wait_for(lambda: run.rec.final_tool("stubborn").state == "unknown")
    # given up within the budget: waited, it says "too late"
    request = await second_turn_is_accepted(run, fake_api)
    result = request["messages"][2]["content"][0]
    assert result["content"].startswith("Result unknown")
    await run.close()


async def stopped_while_ignoring_term(fake_api, tmp_path, grace: float, **config):
    """A turn whose command ignores TERM, interrupted in the TUI's way: it has ended, its
    command still stopping. Returns the session and the command's marker."""
    from agent_tui.tools.bash import BashTool
    from tests.trees.procs import wait_for_procs

    marker = f"ignores-term-{tmp_path.name}"
    command = f"trap '' TERM; exec -a {marker} sleep 1000"
    fake_api.enqueue(Reply.tool_use("bash", {"command": command}, id="toolu_sh"))
    run = start_session(provider_for(fake_api), [BashTool(grace=grace)], tmp_path,
                        stop_settle_s=TUI_SETTLE_S, **config)
    run.submit(UserMessage(text="go"))
    await asyncio.to_thread(wait_for_procs, marker, 1, exact=True)
    run.submit(Interrupt())  # TERM, ignored: the grace starts
    await run.idle()  # the turn ends at once, its command still stopping
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    assert run.rec.final_tool("bash").state == "running"
    return run, marker


async def test_the_turn_ends_at_once_and_a_second_esc_ends_a_term_ignoring_command(
        fake_api, tmp_path):
    from tests.trees.procs import procs_with

    run, marker = await stopped_while_ignoring_term(fake_api, tmp_path, 60, cleanup_budget=120)
    assert procs_with(marker)
    shown = run.rec.final_tool("bash")
    assert re.fullmatch(r"stopping: it ignores TERM, killed in (59\.\d|60\.0) s", shown.detail)
    run.submit(Interrupt())  # the second Esc, the session idle: KILL now
    await run.rec.wait_for(lambda: run.rec.final_tool("bash").state != "running")
    assert procs_with(marker) == []
    final = run.rec.final_tool("bash")
    assert final.state == "cancelled_while_running" and "SIGKILL" in final.detail
    await run.close()


async def test_the_next_request_waits_for_a_call_still_stopping_and_reports_how_it_ended(
        fake_api, tmp_path):
    from agent_tui.core.journal.records import ToolResultRecord, TurnEndedRecord, UserMessageRecord

    run, _ = await stopped_while_ignoring_term(fake_api, tmp_path, 1)  # its grace not over
    request = await second_turn_is_accepted(run, fake_api)  # sent once it ended
    result = request["messages"][2]["content"][0]
    assert result["tool_use_id"] == "toolu_sh"
    assert "after it started" in result["content"] and "SIGKILL" in result["content"]
    # The journal keeps the true order: the turn ended, the call ended, the next prompt.
    kinds = [type(r) for r in run.session.deps.journal.records
             if isinstance(r, (ToolResultRecord, TurnEndedRecord, UserMessageRecord))]
    assert kinds[1:4] == [TurnEndedRecord, ToolResultRecord, UserMessageRecord]
    await run.close()


async def test_interrupt_when_idle_is_harmless(fake_api, tmp_path):
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(Interrupt())
    run.submit(Interrupt())
    await run.idle()
    assert run.rec.of("turn_ended") == []
    fake_api.enqueue(Reply.text("fine"))
    run.submit(UserMessage(text="hello"))
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "completed"
    await run.close()
