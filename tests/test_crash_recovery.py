"""What a killed agent leaves behind, and how the next agent process recovers: each
case here was first found by the crash trials (``bench/chaos_crash.py``) and is kept
as a direct test of its own."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from agent_tui import crash_points
from agent_tui.atomic import is_temp, left_by_dead_process
from agent_tui.checkpoints import Checkpoints
from agent_tui.core.history.history import model_view
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.journal_lines import SET_ASIDE_SUFFIX
from agent_tui.core.journal.records import (
    AgentProcessRecord,
    AssistantMessageRecord,
    SessionStarted,
    SteerRecord,
    ToolIntentRecord,
    UserMessageRecord,
)
from agent_tui.core.journal.store import SessionNotFound, SessionStore
from agent_tui.protocol import Shutdown, SteerKind, SteerStatus
from tests.harness import QuickTool, Recorder


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_temporary_file_a_killed_writer_left_is_removed_by_the_next_snapshot(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "a.txt").write_text("a\n")
    stale = workspace / "src" / f".agent-tui.{_dead_pid()}.0123456789ab.tmp"
    stale.write_text("half a write")
    live = workspace / "src" / f".agent-tui.{os.getpid()}.ba9876543210.tmp"
    live.write_text("a write going on")
    assert is_temp(stale.name) and left_by_dead_process(stale.name)
    assert not left_by_dead_process(live.name)
    checkpoints = Checkpoints(tmp_path / "state", workspace)
    info = checkpoints.take("first", "t1")
    assert info.warnings == []
    assert not stale.exists()  # ours, and its writer is gone
    assert live.exists()  # a writer still alive keeps its file
    plan = checkpoints.plan("t1")
    assert [c.path for c in plan.changes] == []  # never part of a snapshot


def test_lock_files_a_killed_git_left_are_cleared_when_the_session_opens(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    state = tmp_path / "state"
    Checkpoints(state, workspace).take("first", "t1")
    shadow = state / "shadow.git"
    (shadow / "agent-tui.index.lock").write_text("")
    (shadow / "refs" / "checkpoints" / "2.lock").write_text("")
    reopened = Checkpoints(state, workspace)
    info = reopened.take("second", "t2")
    assert info.warnings == [] and str(info.scope) == "workspace"
    assert not list(shadow.glob("**/*.lock"))


def test_a_shadow_repository_half_made_by_a_killed_git_init_is_set_aside_and_made_again(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    shadow = tmp_path / "state" / "shadow.git"
    (shadow / "refs").mkdir(parents=True)
    (shadow / "HEAD").write_text("ref: refs/heads/master\n")  # no objects/: git was killed
    info = Checkpoints(tmp_path / "state", workspace).take("first", "t1")
    assert info.warnings == [] and str(info.scope) == "workspace"
    assert (shadow / "objects").is_dir()
    assert len(list((tmp_path / "state").glob("shadow.git.damaged-*"))) == 1
    done = subprocess.run(["git", "--git-dir", str(shadow), "fsck"], capture_output=True)
    assert done.returncode == 0, done.stderr


def test_a_torn_last_line_is_moved_aside_before_the_next_record_is_appended(tmp_path):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(UserMessageRecord(turn_id="t1", text="one"), durable=True)
    journal.close()
    torn = b'{"v":1,"seq":2,"kind":"user_message","turn_id":"t2","te'
    with open(path, "ab") as fh:
        fh.write(torn)  # the agent was killed (or the power cut) mid-line
    resumed = Journal.load(path)
    assert [d.torn for d in resumed.damaged] == [True]
    resumed.append(UserMessageRecord(turn_id="t2", text="two"))
    again = Journal.load(path)
    assert [r.text for r in again.records] == ["one", "two"]
    assert again.damaged == []  # the new record did not run into the torn bytes
    assert (tmp_path / f"journal.jsonl{SET_ASIDE_SUFFIX}").read_bytes() == torn + b"\n"


def test_a_session_whose_first_line_is_lost_is_still_found_for_its_workspace(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SessionStore(tmp_path / "home")
    path = store.journal_path("s1")
    journal = Journal(path)
    journal.append(SessionStarted(session_id="s1", workspace=str(workspace),
                                  provider="scripted", model="m"), durable=True)
    journal.append(AgentProcessRecord(owner="o", pid=1, workspace=str(workspace)))
    journal.append(UserMessageRecord(turn_id="t1", text="hello"))
    journal.close()
    lines = path.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b"session_started", b"session_startet")
    path.write_bytes(b"\n".join(lines))
    assert store.latest_for(workspace).id == "s1"


def test_when_no_line_says_the_workspace_the_refusal_names_the_session_to_resume(tmp_path):
    store = SessionStore(tmp_path / "home")
    path = store.journal_path("s1")
    journal = Journal(path)
    journal.append(UserMessageRecord(turn_id="t1", text="hello"))
    journal.close()
    with pytest.raises(SessionNotFound) as info:
        store.latest_for(tmp_path)
    assert "--resume s1" in str(info.value)


@pytest.mark.asyncio
async def test_a_steer_still_queued_when_the_agent_was_killed_is_offered_back(tmp_path):
    from agent_tui.core.services.deps import AgentConfig, SessionDeps
    from agent_tui.core.calls.permission import AllowAll
    from agent_tui.core.session.session import Session
    from agent_tui.core.calls.tool import ToolSet
    from agent_tui.providers.scripted import ScriptedProvider

    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(UserMessageRecord(turn_id="t1", text="build"))
    journal.append(SteerRecord(id="q1", steer_kind=SteerKind.STEER, state=SteerStatus.QUEUED,
                               text="also the docs"))
    journal.close()
    rec = Recorder()
    resumed = Journal.load(path)
    deps = SessionDeps(config=AgentConfig(workspace=tmp_path, model="m"),
                       provider=ScriptedProvider(delay=0), tools=ToolSet([QuickTool()]),
                       policy=AllowAll(), journal=resumed, emit=rec)
    session = Session(deps)
    task = asyncio.create_task(session.run())
    await rec.wait_type("steer_state")
    offered = rec.of("steer_state")
    assert [(e.id, e.state, e.text) for e in offered] == [("q1", "returned", "also the docs")]
    assert [r.state for r in resumed.records if isinstance(r, SteerRecord)] == ["queued", "returned"]
    session.submit(Shutdown())
    await asyncio.wait_for(task, 10)


def test_a_call_that_was_running_reads_unknown_with_its_operation_id():
    records = [
        UserMessageRecord(turn_id="t1", text="go"),
        AssistantMessageRecord(turn_id="t1", ended="tool_use", blocks=[
            {"type": "tool_use", "id": "toolu_x", "name": "bash", "input": {}}]),
        ToolIntentRecord(turn_id="t1", tool_use_id="toolu_x", name="bash", input={},
                         operation_id="op_0123456789abcdef01234567"),
        UserMessageRecord(turn_id="t2", text="what happened?"),
    ]
    result = model_view(records)[2]["content"][0]
    assert result["content"].startswith("Result unknown")
    assert "op_0123456789abcdef01234567" in result["content"]


def test_crash_points_are_silent_unless_a_trial_listens(monkeypatch):
    monkeypatch.delenv(crash_points.ENV, raising=False)
    monkeypatch.setattr(crash_points, "_looked_in", 0)
    crash_points.reached("journal.write:x")  # returns at once: no channel
    to_trial_r, to_trial_w = os.pipe()
    to_agent_r, to_agent_w = os.pipe()
    monkeypatch.setenv(crash_points.ENV, f"{to_trial_w},{to_agent_r}")
    monkeypatch.setattr(crash_points, "_looked_in", 0)
    os.write(to_agent_w, b"c")  # the trial lets it go on
    crash_points.reached("journal.fsync:tool_intent:journal.jsonl")
    assert os.read(to_trial_r, 100) == b"journal.fsync:tool_intent:journal.jsonl\n"
    os.close(to_agent_w)  # the trial is gone: the agent goes on without waiting
    crash_points.reached("git:update-ref")
    crash_points.reached("git:commit-tree")
    monkeypatch.setattr(crash_points, "_looked_in", 0)
    monkeypatch.delenv(crash_points.ENV)
    for fd in (to_trial_r, to_trial_w, to_agent_r):
        os.close(fd)
