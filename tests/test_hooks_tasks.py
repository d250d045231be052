"""TaskCreated and TaskCompleted hooks, on todo_write's plan: each item the new plan
adds is created, each it marks completed is completed; a block refuses the call before
it runs (the plan stays as it was, the model is told why). In-process session on the
real SDK against the fake API, real hook scripts."""

from __future__ import annotations

import pytest

from agent_tui.core.history.scope import effective_records
from agent_tui.core.modes.plan import plan_of
from agent_tui.protocol import UserMessage
from tests.fake_api import Reply
from tests.hooks_support import (
    LOG_INPUT, command_hooks, hook_script, logged, start, tool_results,
)

pytestmark = pytest.mark.asyncio

REFUSE_SHIP = LOG_INPUT + """
    if given["task_subject"] == "Ship it":
        print("the tests still fail", file=sys.stderr)
        sys.exit(2)
"""


def todos(*items: tuple[str, str]) -> dict:
    return {"todos": [{"content": c, "status": s, "activeForm": c + "ing"} for c, s in items]}


async def test_task_hooks_see_each_new_and_completed_item_and_a_block_keeps_the_plan(
        fake_api, tmp_path, monkeypatch):
    log = tmp_path / "tasks.jsonl"
    monkeypatch.setenv("HOOK_LOG", str(log))
    created = hook_script(tmp_path / "hooks", "created", LOG_INPUT)
    completed = hook_script(tmp_path / "hooks", "completed", REFUSE_SHIP)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {
        "TaskCreated": [{"hooks": [{"type": "command", "command": created}]}],
        "TaskCompleted": [{"hooks": [{"type": "command", "command": completed}]}],
    })
    run, _ = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(
        Reply.tool_use("todo_write", todos(("Write code", "in_progress"), ("Ship it", "pending")),
                       id="toolu_1"),
        Reply.tool_use("todo_write", todos(("Write code", "completed"), ("Ship it", "pending")),
                       id="toolu_2"),
        Reply.tool_use("todo_write", todos(("Write code", "completed"), ("Ship it", "completed")),
                       id="toolu_3"),
        Reply.text("done"))
    run.submit(UserMessage(text="plan it"))
    await run.idle()
    seen = [(g["hook_event_name"], g["task_id"], g["task_subject"], g.get("task_description"))
            for g in logged(log)]
    assert seen == [
        ("TaskCreated", "1", "Write code", "Write codeing"),
        ("TaskCreated", "2", "Ship it", "Ship iting"),
        ("TaskCompleted", "1", "Write code", "Write codeing"),  # only the newly completed
        ("TaskCompleted", "2", "Ship it", "Ship iting"),
    ]
    assert all(g["session_id"] == "s-hooks" and "transcript_path" in g for g in logged(log))
    assert run.rec.tool_states(name="todo_write")[-1] == "denied"
    refused = tool_results(fake_api.requests[3])[-1]
    assert refused["is_error"] and "the tests still fail" in refused["content"], refused
    plan = plan_of(effective_records(run.journal.records))
    assert plan is not None and [(i.content, i.status.value) for i in plan.items] == [
        ("Write code", "completed"), ("Ship it", "pending")]  # the refused plan never applied
    await run.close()
