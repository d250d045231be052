"""The plan (todo_write): derived from the journal, across an interrupt, a resume and
a rewind; what the next request tells the model; the ACP ``plan`` updates; the TUI's
plan pane following the events."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_tui.acp.updates import UpdateMapper, plan_update
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.history.history import check_model_view, effective_records, model_view
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import (
    RewindRecord,
    ToolIntentRecord,
    ToolResultRecord,
    TurnEndedRecord,
    UserMessageRecord,
)
from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.modes.plan import Plan, PlanItem, cut_off_wording, plan_of
from agent_tui.core.session.session import Session
from agent_tui.core.calls.tool import ToolContext, ToolSet
from agent_tui.protocol import Interrupt, Shutdown, UserMessage
from agent_tui.protocol.states import (
    PlanItemState,
    RestoreWhat,
    TodoPriority,
    TodoStatus,
    ToolState,
    TurnStatus,
)
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.cancel import CancelScope
from agent_tui.tools.todo import TodoWriteTool
from tests.fake_api import Reply
from tests.harness import Recorder, SlowTool

PLAN_A = {"todos": [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Write the tests", "status": "in_progress", "activeForm": "Writing the tests"},
    {"content": "Update the docs", "status": "pending", "priority": "low"},
]}
PLAN_B = {"todos": [{"content": "Ship it", "status": "pending"}]}


def _call(turn: str, call_id: str, todos: dict, state: ToolState = ToolState.SUCCEEDED) -> list:
    return [
        ToolIntentRecord(turn_id=turn, tool_use_id=call_id, name="todo_write", input=todos,
                         operation_id="op"),
        ToolResultRecord(turn_id=turn, tool_use_id=call_id, name="todo_write", state=state,
                         content="ok"),
    ]


def test_the_last_successful_todo_write_is_the_plan() -> None:
    records = [UserMessageRecord(turn_id="t1", text="go"), *_call("t1", "c1", PLAN_A),
               *_call("t1", "c2", PLAN_B, ToolState.DENIED),
               *_call("t1", "c3", {"todos": "not a list"})]
    plan = plan_of(records)
    assert plan is not None and plan.tool_use_id == "c1"
    assert [i.content for i in plan.items] == ["Read the parser", "Write the tests",
                                                "Update the docs"]
    assert plan.done == 1 and not plan.complete and not plan.interrupted
    assert plan.items[2].priority is TodoPriority.LOW
    assert [plan.state_of(i) for i in plan.items] == [
        PlanItemState.COMPLETED, PlanItemState.IN_PROGRESS, PlanItemState.PENDING]
    assert plan_of([UserMessageRecord(turn_id="t1", text="go")]) is None


def test_an_interrupted_turn_leaves_the_in_progress_item_interrupted() -> None:
    records = [UserMessageRecord(turn_id="t1", text="go"), *_call("t1", "c1", PLAN_A),
               TurnEndedRecord(turn_id="t1", status=TurnStatus.CANCELLED)]
    plan = plan_of(records)
    assert plan.interrupted
    assert [plan.state_of(i) for i in plan.items] == [
        PlanItemState.COMPLETED, PlanItemState.INTERRUPTED, PlanItemState.PENDING]
    assert [i.content for i in plan.cut_off()] == ["Write the tests"]
    assert cut_off_wording(records) == (
        ' The plan item was in progress when it was cut off, and is not done: "Write the tests".')
    # a new plan written after the interrupt is not interrupted
    later = [*records, UserMessageRecord(turn_id="t2", text="go on"), *_call("t2", "c2", PLAN_A)]
    assert not plan_of(later).interrupted and cut_off_wording(later) == ""


def test_a_rewind_of_the_conversation_brings_back_the_earlier_plan() -> None:
    records = [UserMessageRecord(turn_id="t1", text="one"), *_call("t1", "c1", PLAN_B),
               TurnEndedRecord(turn_id="t1", status=TurnStatus.COMPLETED),
               UserMessageRecord(turn_id="t2", text="two"), *_call("t2", "c2", PLAN_A),
               TurnEndedRecord(turn_id="t2", status=TurnStatus.COMPLETED)]
    assert plan_of(effective_records(records)).tool_use_id == "c2"
    rewound = [*records, RewindRecord(checkpoint_id="t2", restore=RestoreWhat.BOTH)]
    assert plan_of(effective_records(rewound)).tool_use_id == "c1"
    code_only = [*records, RewindRecord(checkpoint_id="t2", restore=RestoreWhat.CODE)]
    assert plan_of(effective_records(code_only)).tool_use_id == "c2"


@pytest.mark.asyncio
async def test_the_tool_says_what_it_recorded_and_refuses_bad_plans(tmp_path) -> None:
    tool = TodoWriteTool()
    ctx = ToolContext(scope=CancelScope(), workspace=tmp_path, tool_use_id="t", operation_id="o")
    result = await tool.run(tool.parse(PLAN_A), ctx)
    assert result.content.startswith("Plan updated: 1 of 3 done; in progress: Write the tests.")
    assert tool.summary(tool.parse(PLAN_A)) == "todo_write: 1/3 done"
    for bad in ({"todos": [{"content": "x", "status": "interrupted"}]},
                {"todos": [{"content": "", "status": "pending"}]},
                {"todos": [{"content": "x", "status": "pending"}] * 51}):
        with pytest.raises(Exception, match="invalid input for todo_write"):
            tool.parse(bad)
    assert tool.is_read_only(tool.parse(PLAN_A))


def _session(provider, journal: Journal, tools, workspace: Path) -> tuple[Session, Recorder]:
    rec = Recorder()
    deps = SessionDeps(config=AgentConfig(workspace=workspace, model="claude-test"),
                       provider=provider, tools=ToolSet(tools), policy=AllowAll(),
                       journal=journal, emit=rec)
    return Session(deps), rec


@pytest.mark.asyncio
async def test_the_plan_across_an_interrupt_and_a_resume(fake_api, tmp_path) -> None:
    path = tmp_path / "journal.jsonl"
    slow = SlowTool()
    provider = AnthropicProvider(api_key="k", base_url=fake_api.url)
    fake_api.enqueue(Reply.tool_uses([("todo_write", PLAN_A, "toolu_plan"),
                                      ("slow", {"note": "tests"}, "toolu_slow")]))
    session, rec = _session(provider, Journal(path), [TodoWriteTool(), slow], tmp_path)
    task = asyncio.create_task(session.run())
    session.submit(UserMessage(text="write the tests"))
    await asyncio.wait_for(slow.started.wait(), 10)
    session.submit(Interrupt())
    await rec.wait_type("turn_ended")
    assert rec.of("turn_ended")[-1].status == "cancelled"
    assert rec.tool_states("toolu_plan")[-1] == "succeeded"
    session.submit(Shutdown())
    await asyncio.wait_for(task, 15)

    # The agent is gone; a new one opens the same journal.
    journal = Journal.load(path)
    plan = plan_of(effective_records(journal.records))
    assert plan is not None and plan.interrupted
    assert [i.content for i in plan.cut_off()] == ["Write the tests"]
    provider = AnthropicProvider(api_key="k", base_url=fake_api.url)  # a new process's
    resumed, rec2 = _session(provider, journal, [TodoWriteTool(), SlowTool()], tmp_path)
    task = asyncio.create_task(resumed.run())
    fake_api.enqueue(Reply.text("Checking what was done."))
    before = len(fake_api.requests)
    resumed.submit(UserMessage(text="carry on"))
    await rec2.wait_type("turn_ended")
    assert fake_api.rejections == []
    last_user = fake_api.requests[before]["messages"][-1]
    note = next(b["text"] for b in last_user["content"] if "interrupted the previous turn" in
                b.get("text", ""))
    assert ('The plan item was in progress when it was cut off, and is not done: '
            '"Write the tests".') in note
    check_model_view(model_view(journal.records))
    resumed.submit(Shutdown())
    await asyncio.wait_for(task, 15)


def test_acp_plan_updates_carry_priority_status_and_the_interrupted_item() -> None:
    records = [UserMessageRecord(turn_id="t1", text="go"), *_call("t1", "c1", PLAN_A)]
    update = plan_update(records)
    assert update.session_update == "plan"
    assert [(e.content, e.priority, e.status) for e in update.entries] == [
        ("Read the parser", "medium", "completed"),
        ("Write the tests", "medium", "in_progress"),
        ("Update the docs", "low", "pending"),
    ]
    cut = plan_update([*records, TurnEndedRecord(turn_id="t1", status=TurnStatus.CANCELLED)])
    assert cut.entries[1].status == "pending"
    assert cut.entries[1].field_meta == {"agent_tui": {"state": "interrupted"}}
    assert plan_update(records[:1]) is None
    replayed = UpdateMapper(Path("/ws")).replay(records)
    assert replayed[-1].session_update == "plan"


def test_plan_model_round_trips_with_the_models_own_field_names() -> None:
    item = PlanItem.model_validate({"content": "Run", "status": "in_progress",
                                    "activeForm": "Running"})
    assert item.active_form == "Running" and item.status is TodoStatus.IN_PROGRESS
    assert Plan(items=(item,), interrupted=True).cut_off() == [item]


@pytest.mark.asyncio
async def test_acp_client_gets_plan_updates_live_and_after_a_cancel(tmp_path, fake_api) -> None:
    from acp import text_block

    from tests.acp_client import RecordingClient, spawn, start

    fake_api.enqueue(Reply.tool_uses([("todo_write", PLAN_A, "toolu_plan"),
                                      ("bash", {"command": "sleep 30"}, "toolu_sleep")]))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api, "--permission-mode", "auto") as (conn, _):
        sid = await start(conn, tmp_path)
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("plan")]))
        await client.wait_for(lambda: client.last_status("toolu_sleep") == "in_progress")
        live = client.of("plan", sid)
        assert [(e.content, e.status) for e in live[-1].entries] == [
            ("Read the parser", "completed"), ("Write the tests", "in_progress"),
            ("Update the docs", "pending")]
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(prompt, 15)
        assert response.stop_reason == "cancelled"
        after = client.of("plan", sid)[-1]  # sent before the prompt's answer
        assert after.entries[1].status == "pending"
        assert after.entries[1].field_meta == {"agent_tui": {"state": "interrupted"}}
        assert after.field_meta == {"agent_tui": {"interrupted": True}}
