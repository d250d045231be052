"""Steering and follow-ups: queued, injected at the right place, applied or returned."""

from __future__ import annotations

import asyncio

import pytest

from agent_tui.protocol import FollowUp, Interrupt, UserMessage
from tests.fake_api import Reply
from tests.harness import plain, SlowTool, start_session
from tests.harness import provider_for

pytestmark = pytest.mark.asyncio


async def test_steer_during_tool_batch_rides_after_the_tool_results(fake_api, tmp_path):
    slow = SlowTool()
    fake_api.enqueue(
        Reply.tool_use("slow", {"note": "x"}, id="toolu_1"), Reply.text("understood")
    )
    run = start_session(provider_for(fake_api), [slow], tmp_path)
    run.submit(UserMessage(text="build it"))
    await asyncio.wait_for(slow.started.wait(), 10)
    run.submit(UserMessage(text="also run the linter"))
    await run.rec.wait_type("steer_state")
    assert run.rec.of("steer_state")[0].state == "queued"
    slow.release.set()
    await run.idle()
    assert [e.state for e in run.rec.of("steer_state")] == ["queued", "applied"]
    # One turn: the steer did not start a turn of its own.
    assert len(run.rec.of("turn_started")) == 1
    second = plain(fake_api.requests[1]["messages"])[-1]["content"]
    assert second[0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "slow finished"}
    assert second[1] == {"type": "text", "text": "also run the linter"}
    # Applied after the tool's result and before the next model call.
    kinds = [e.type for e in run.rec.events if e.type in ("tool_state", "steer_state", "text_delta")]
    applied_at = max(i for i, k in enumerate(run.rec.events) if k.type == "steer_state")
    succeeded_at = max(
        i for i, e in enumerate(run.rec.events) if e.type == "tool_state" and e.state == "succeeded"
    )
    first_text = min(i for i, e in enumerate(run.rec.events) if e.type == "text_delta")
    assert succeeded_at < applied_at < first_text, kinds
    assert fake_api.rejections == []
    await run.close()


async def test_steer_while_the_model_answers_without_tools_starts_the_next_turn(fake_api, tmp_path):
    fake_api.enqueue(Reply.slow_text("a long answer " * 5, chunk=5, delay=0.03), Reply.text("next"))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="explain"))
    await run.rec.wait_for(lambda: run.rec.of("text_delta"))
    run.submit(UserMessage(text="shorter please"))
    await run.idle()
    assert [e.state for e in run.rec.of("steer_state")] == ["queued", "applied"]
    assert [e.text for e in run.rec.of("turn_started")] == ["explain", "shorter please"]
    last = plain(fake_api.requests[1]["messages"])[-1]
    assert last == {"role": "user", "content": [{"type": "text", "text": "shorter please"}]}
    await run.close()


async def test_follow_up_waits_until_the_agent_stops_on_its_own(fake_api, tmp_path):
    slow = SlowTool()
    fake_api.enqueue(
        Reply.tool_use("slow", {}, id="toolu_f"), Reply.text("built"), Reply.text("tested")
    )
    run = start_session(provider_for(fake_api), [slow], tmp_path)
    run.submit(UserMessage(text="build"))
    await asyncio.wait_for(slow.started.wait(), 10)
    run.submit(FollowUp(text="now test it"))
    await run.rec.wait_type("steer_state")
    slow.release.set()
    await run.idle()
    assert [e.text for e in run.rec.of("turn_started")] == ["build", "now test it"]
    assert [(e.kind, e.state) for e in run.rec.of("steer_state")] == [
        ("follow_up", "queued"),
        ("follow_up", "applied"),
    ]
    # The follow-up was not injected into the first turn's tool results.
    after_tool = plain(fake_api.requests[1]["messages"])[-1]["content"]
    assert [b["type"] for b in after_tool] == ["tool_result"]
    await run.close()


async def test_interrupt_returns_queued_steers_and_follow_ups_unsent(fake_api, tmp_path):
    slow = SlowTool()
    fake_api.enqueue(Reply.tool_use("slow", {}, id="toolu_r"))
    run = start_session(provider_for(fake_api), [slow], tmp_path)
    run.submit(UserMessage(text="build"))
    await asyncio.wait_for(slow.started.wait(), 10)
    run.submit(UserMessage(text="steer one"))
    run.submit(FollowUp(text="follow one"))
    await run.rec.wait_type("steer_state", 2)
    run.submit(Interrupt())
    await run.idle()
    returned = [(e.text, e.state) for e in run.rec.of("steer_state") if e.state == "returned"]
    assert returned == [("steer one", "returned"), ("follow one", "returned")]
    assert len(fake_api.requests) == 1  # nothing queued was sent
    assert len(run.rec.of("turn_started")) == 1
    await run.close()


async def test_send_now_moves_the_running_command_to_the_background(fake_api, tmp_path):
    import uuid

    import psutil

    from agent_tui.protocol import SendNow
    from agent_tui.tools.background import BackgroundJobs
    from agent_tui.tools.bash import BashTool

    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    jobs = BackgroundJobs()
    fake_api.enqueue(
        Reply.tool_use("bash", {"command": f"echo started; sleep 300; : {marker}"}, id="toolu_bg"),
        Reply.text("noted"),
    )
    run = start_session(provider_for(fake_api), [BashTool(jobs=jobs)], tmp_path)

    def alive() -> bool:
        return any(
            marker in " ".join(p.info["cmdline"] or [])
            for p in psutil.process_iter(["cmdline"])
        )

    run.submit(UserMessage(text="start the server"))
    await run.rec.wait_for(lambda: alive() and run.rec.of("tool_output"), timeout=15)
    run.submit(SendNow(text="while it runs, tell me about it"))
    await run.idle()
    final = run.rec.final_tool("bash")
    assert final.state == "succeeded"
    assert "background" in final.result
    # Front ends are told the call moved rather than ended (its output goes on elsewhere).
    assert final.ended_by == "send_to_background"
    assert final.detail == "moved to the background as shell_1"
    assert alive()  # it keeps running: send-now does not kill
    sent = plain(fake_api.requests[1]["messages"])[-1]["content"]
    assert sent[0]["tool_use_id"] == "toolu_bg" and "started" in sent[0]["content"]
    assert sent[1] == {"type": "text", "text": "while it runs, tell me about it"}
    assert [j.state for j in jobs.jobs()] == ["running"]
    await jobs.shutdown()
    assert not alive()
    await run.close()


async def test_a_queued_steer_can_be_edited_or_taken_back_before_it_is_applied(fake_api, tmp_path):
    from agent_tui.protocol import EditQueued, RemoveQueued

    slow = SlowTool()
    fake_api.enqueue(Reply.tool_use("slow", {"note": "x"}, id="toolu_q"), Reply.text("ok"))
    run = start_session(provider_for(fake_api), [slow], tmp_path)
    run.submit(UserMessage(text="build it"))
    await asyncio.wait_for(slow.started.wait(), 10)
    run.submit(UserMessage(text="first draft"))
    run.submit(UserMessage(text="to be dropped"))
    await run.rec.wait_type("steer_state", 2)
    first, second = (e.id for e in run.rec.of("steer_state")[:2])
    run.submit(EditQueued(id=first, text="edited steer"))
    run.submit(RemoveQueued(id=second))
    await run.rec.wait_type("steer_state", 4)
    slow.release.set()
    await run.idle()
    await run.close()
    states = [(e.id, e.state) for e in run.rec.of("steer_state")]
    assert (first, "edited") in states and (second, "removed") in states
    assert (first, "applied") in states and (second, "applied") not in states
    sent = plain(fake_api.requests[1]["messages"][-1]["content"])
    assert {"type": "text", "text": "edited steer"} in sent
    assert "to be dropped" not in str(sent)
    # Too late: an applied item can no longer be edited.
    run2_notice = [e for e in run.rec.of("notice") if "no longer queued" in e.text]
    assert run2_notice == []
