"""The journal: durable records, torn lines, failed writes told to the user."""

from __future__ import annotations

import asyncio
import json
import os
import stat

import pytest

from agent_tui.protocol import UserMessage
from agent_tui.core.journal.journal import Journal, JournalWriteError
from agent_tui.core.journal.records import NoticeRecord, UserMessageRecord
from agent_tui.providers.scripted import Block, Rule, Script, ScriptedProvider
from tests.harness import QuickTool, Recorder, SlowTool, start_session


def test_records_are_numbered_and_written_owner_only(tmp_path):
    path = tmp_path / "s" / "journal.jsonl"
    journal = Journal(path)
    journal.append(UserMessageRecord(turn_id="t1", text="hi"), durable=True)
    journal.append(NoticeRecord(level="info", text="x"))
    journal.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["seq"] for r in lines] == [1, 2]
    assert all(r["v"] == 1 for r in lines)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_torn_last_line_is_set_aside_not_fatal(tmp_path):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(UserMessageRecord(turn_id="t1", text="one"))
    journal.append(UserMessageRecord(turn_id="t2", text="two"))
    journal.close()
    with open(path, "a") as fh:
        fh.write('{"kind": "user_message", "turn_id": "t3", "te')  # crash mid-write
    loaded = Journal.load(path)
    assert [r.text for r in loaded.records] == ["one", "two"]
    assert len(loaded.set_aside) == 1
    # Appending after a torn line continues with the next sequence number.
    loaded.append(UserMessageRecord(turn_id="t3", text="three"))
    assert loaded.records[-1].seq == 3


def test_a_failed_write_raises_and_keeps_the_record_in_memory(tmp_path):
    journal = Journal(tmp_path / "ok.jsonl")
    journal.path = type(journal.path)("/dev/full")  # every write fails: no space left
    with pytest.raises(JournalWriteError) as info:
        journal.append(UserMessageRecord(turn_id="t1", text="hi"), durable=True)
    assert "journal not saved (user_message)" in str(info.value)
    assert [r.text for r in journal.records] == ["hi"]


def script(*replies) -> ScriptedProvider:
    return ScriptedProvider(
        Script(rules=[Rule(match=".", replies=[list(r) for r in replies])]), delay=0
    )


@pytest.mark.asyncio
async def test_side_effecting_tool_does_not_start_when_its_intent_cannot_be_saved(tmp_path):
    slow, quick = SlowTool(), QuickTool()
    provider = script(
        [Block(tool="quick", input={"note": "r"}), Block(tool="slow", input={"note": "w"})],
        [Block(text="done")],
    )
    run = start_session(provider, [quick, slow], tmp_path)
    run.journal.path = type(tmp_path)("/dev/full")
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert slow.calls == []  # never started without its intent on disk
    assert quick.calls == ["r"]  # read-only calls may go on
    final = run.rec.final_tool("slow")
    assert final.state == "failed"
    assert "intent could not be recorded" in final.result
    errors = [e.text for e in run.rec.of("notice") if e.level == "error"]
    assert any("journal not saved (tool_intent)" in t and "No space left" in t for t in errors)
    await run.close()


@pytest.mark.asyncio
async def test_resumed_journal_with_a_started_tool_and_no_result_says_unknown(tmp_path):
    from agent_tui.core.history.history import check_model_view, model_view
    from agent_tui.core.journal.records import AssistantMessageRecord, ToolIntentRecord

    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(UserMessageRecord(turn_id="t1", text="build"))
    journal.append(
        AssistantMessageRecord(
            turn_id="t1",
            blocks=[{"type": "tool_use", "id": "toolu_x", "name": "slow", "input": {}}],
            ended="tool_use",
        )
    )
    journal.append(
        ToolIntentRecord(turn_id="t1", tool_use_id="toolu_x", name="slow", input={},
                         operation_id="op_1")
    )
    journal.close()  # the agent was killed here
    provider = script([Block(text="checking")])
    rec = Recorder()
    from agent_tui.core.calls.permission import AllowAll
    from agent_tui.core.session.session import Session
    from agent_tui.core.calls.tool import ToolSet
    from agent_tui.core.services.deps import AgentConfig, SessionDeps

    resumed = Journal.load(path)
    deps = SessionDeps(
        config=AgentConfig(workspace=tmp_path, model="m"), provider=provider,
        tools=ToolSet([SlowTool()]), policy=AllowAll(), journal=resumed, emit=rec,
    )
    session = Session(deps)
    task = asyncio.create_task(session.run())
    session.submit(UserMessage(text="what happened?"))
    await asyncio.wait_for(session.wait_idle(), 10)
    view = model_view(resumed.records)
    check_model_view(view)
    result = view[2]["content"][0]
    assert result["tool_use_id"] == "toolu_x"
    assert result["content"].startswith("Result unknown")
    note = view[2]["content"][1]["text"]
    assert "interrupted the previous turn" in note
    assert rec.of("turn_started")[0].turn_id == "t2"
    from agent_tui.protocol import Shutdown

    session.submit(Shutdown())
    await asyncio.wait_for(task, 10)


@pytest.mark.asyncio
async def test_a_bug_in_the_turn_loop_ends_the_turn_failed_instead_of_hanging(tmp_path, monkeypatch):
    from agent_tui.core.turn.turn import Turn

    async def broken(self):
        raise RuntimeError("boom")

    monkeypatch.setattr(Turn, "run", broken)
    run = start_session(script([Block(text="never")]), [], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.idle()
    ended = run.rec.of("turn_ended")[-1]
    assert ended.status == "failed" and "boom" in ended.detail
    await run.close()
