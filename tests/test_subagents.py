"""Sub-agents: foreground ones stop with their parent, background ones only when told."""

from __future__ import annotations

import uuid

import pytest

from agent_tui.protocol import CancelTool, Interrupt, StopBackground, UserMessage
from agent_tui.tools.bash import BashTool
from agent_tui.tools.task import TaskTool
from tests.fake_api import Reply
from tests.harness import assert_subagent_stopped, start_session
from tests.harness import provider_for
from tests.harness import alive, serve, tree

pytestmark = pytest.mark.asyncio


async def test_esc_stops_a_foreground_subagent_and_its_process_tree(fake_api, tmp_path):
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    serve(fake_api, {
        ("go", 0): Reply.tool_use("task", {"description": "dig", "prompt": "dig deep"},
                                  id="toolu_task"),
        ("dig deep", 0): Reply.tool_use("bash", {"command": tree(marker)}, id="toolu_child"),
    })
    run = start_session(provider_for(fake_api), [TaskTool(), BashTool(grace=0.5)], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(lambda: alive(marker), timeout=20)
    run.submit(Interrupt())
    await run.idle(timeout=30)
    assert not alive(marker)
    assert_subagent_stopped(run.rec, "toolu_child")
    assert [e.turn_id for e in run.rec.of("turn_ended")] == ["t1"]  # child turns stay inside
    fake_api.clear_queue()
    fake_api.enqueue(Reply.text("ok"))
    run.submit(UserMessage(text="and now?"))
    await run.idle()
    assert fake_api.rejections == []
    result = fake_api.requests[-1]["messages"][2]["content"][0]
    assert result["tool_use_id"] == "toolu_task" and "stopped before it finished" in result["content"]
    await run.close()


async def test_two_subagents_one_stopped_the_other_completes(fake_api, tmp_path):
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    serve(fake_api, {
        ("go", 0): Reply.tool_uses([
            ("task", {"description": "slow one", "prompt": "slow work"}, "toolu_a"),
            ("task", {"description": "quick one", "prompt": "quick work"}, "toolu_b"),
        ]),
        ("slow work", 0): Reply.tool_use("bash", {"command": tree(marker)}, id="toolu_slow"),
        ("quick work", 0): Reply.slow_text("quick answer", delay=0.2),
        ("go", 1): Reply.text("both reported"),
    })
    run = start_session(provider_for(fake_api), [TaskTool(), BashTool(grace=0.5)], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(lambda: alive(marker), timeout=20)
    run.submit(CancelTool(tool_use_id="toolu_a"))
    await run.idle(timeout=30)
    assert not alive(marker)
    assert run.rec.tool_states("toolu_a")[-1] == "cancelled_while_running"
    assert run.rec.tool_states("toolu_b")[-1] == "succeeded"
    assert run.rec.of("turn_ended")[-1].status == "completed"
    results = {
        b["tool_use_id"]: b["content"]
        for b in fake_api.requests[-1]["messages"][2]["content"]
        if b["type"] == "tool_result"
    }
    assert results["toolu_b"] == "quick answer"
    assert "stopped before it finished" in results["toolu_a"]
    assert fake_api.rejections == []
    await run.close()


async def test_background_subagent_survives_esc_and_reports_back(fake_api, tmp_path):
    serve(fake_api, {
        ("go", 0): Reply.tool_use(
            "task", {"description": "survey", "prompt": "survey slowly", "run_in_background": True},
            id="toolu_bg",
        ),
        ("go", 1): Reply.slow_text("started it; waiting " * 10, delay=0.05),
        ("survey slowly", 0): Reply.slow_text("the survey result", chunk=2, delay=0.15),
    })
    run = start_session(provider_for(fake_api), [TaskTool()], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(lambda: any(e.state == "running" for e in run.rec.of("background_job")))
    await run.rec.wait_for(lambda: len(run.rec.of("text_delta")) > 3)
    run.submit(Interrupt())  # Esc on the parent turn
    await run.rec.wait_for(lambda: any(e.status == "cancelled" for e in run.rec.of("turn_ended")))
    await run.rec.wait_for(
        lambda: any(e.state == "completed" for e in run.rec.of("background_job")), timeout=20
    )
    job = run.rec.of("background_job")[-1]
    assert job.kind == "agent" and job.id == "agent_1"
    assert job.tool_use_id == "toolu_bg"  # the task call that started it
    fake_api.clear_queue()
    fake_api.enqueue(Reply.text("thanks"))
    run.submit(UserMessage(text="what did it find?"))
    await run.idle()
    last_user = fake_api.requests[-1]["messages"][-1]["content"]
    texts = " ".join(b.get("text", "") for b in last_user)
    assert "Background task agent_1 (survey) completed" in texts
    assert "the survey result" in texts
    assert fake_api.rejections == []
    await run.close()


async def test_background_subagent_can_be_stopped_and_quitting_stops_it(fake_api, tmp_path):
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    serve(fake_api, {
        ("go", 0): Reply.tool_uses([
            ("task", {"description": "one", "prompt": "bg one", "run_in_background": True}, "t_1"),
            ("task", {"description": "two", "prompt": "bg two", "run_in_background": True}, "t_2"),
        ]),
        ("bg one", 0): Reply.tool_use("bash", {"command": tree(marker + "-1")}, id="toolu_one"),
        ("bg two", 0): Reply.tool_use("bash", {"command": tree(marker + "-2")}, id="toolu_two"),
    })
    run = start_session(
        provider_for(fake_api), [TaskTool(), BashTool(grace=0.5)], tmp_path, max_retries=0
    )
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(lambda: alive(marker + "-1") and alive(marker + "-2"), timeout=20)
    await run.idle()  # the parent turn is over; both keep running
    run.submit(StopBackground(id="agent_1"))
    await run.rec.wait_for(
        lambda: any(e.id == "agent_1" and e.state == "cancelled" for e in run.rec.of("background_job")),
        timeout=20,
    )
    assert not alive(marker + "-1")
    assert alive(marker + "-2")
    await run.close()  # quitting stops the other
    assert not alive(marker + "-2")


async def test_nesting_limit_gives_a_clear_error(fake_api, tmp_path):
    serve(fake_api, {
        ("go", 0): Reply.tool_use("task", {"description": "outer", "prompt": "outer work"}),
        ("outer work", 0): Reply.tool_use(
            "task", {"description": "inner", "prompt": "inner work"}, id="toolu_inner"
        ),
    })
    run = start_session(provider_for(fake_api), [TaskTool()], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.idle(timeout=20)
    inner = [e for e in run.rec.of("tool_state") if e.tool_use_id == "toolu_inner"][-1]
    assert inner.state == "failed"
    assert "nesting limit" in inner.result
    assert not any(r["messages"][0]["content"][0]["text"] == "inner work" for r in fake_api.requests)
    await run.close()
