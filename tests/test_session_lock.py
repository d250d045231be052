"""One session, one agent: the session's lock, and a resume of a session open elsewhere
forks it (real agent processes against the fake API)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import AgentProcessRecord, SessionForkedRecord, UserMessageRecord
from agent_tui.core.journal.session_lock import SessionHeld, SessionLock
from agent_tui.core.journal.store import SessionStore
from tests.fake_api import Reply
from tests.forked_runs import popen_agent, run_agent
from tests.print_agent import env_for, events_of, wait_until


def test_a_session_is_held_once_and_let_go(tmp_path):
    first = SessionLock.acquire(tmp_path)
    with pytest.raises(SessionHeld) as held:
        SessionLock.acquire(tmp_path)  # another open file description: refused
    assert held.value.pid == os.getpid()
    first.release()
    first.release()  # idempotent
    again = SessionLock.acquire(tmp_path)
    assert again.held
    again.release()


HOLDER = """
import sys, time
from pathlib import Path
from agent_tui.core.journal.session_lock import SessionLock
lock = SessionLock.acquire(Path(sys.argv[1]))
import subprocess
child = subprocess.Popen(["sleep", "60"])  # a command the agent started
print(child.pid, flush=True)
time.sleep(60)
"""


def test_kill_9_of_the_holder_lets_the_session_go_and_its_commands_never_hold_it(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE,
                            text=True)
    try:
        child = int(proc.stdout.readline())
        with pytest.raises(SessionHeld) as held:
            SessionLock.acquire(tmp_path)
        assert held.value.pid == proc.pid
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        os.kill(child, 0)  # the command lives on, and holds nothing
        lock = SessionLock.acquire(tmp_path)
        lock.release()
    finally:
        proc.kill()
        proc.wait(10)
        try:
            os.kill(child, signal.SIGKILL)
        except (OSError, UnboundLocalError):
            pass


def test_a_closed_journal_writes_nothing_more(tmp_path):
    store = SessionStore(tmp_path)
    opened = store.create()
    journal = Journal(opened.path)
    journal.lock = opened.lock
    journal.append(UserMessageRecord(turn_id="t1", text="one"))
    journal.close()
    other = store.open(opened.id)  # no fork: it was let go
    assert other.fork is None
    with pytest.raises(OSError, match="closed in this process"):
        journal.append(UserMessageRecord(turn_id="t2", text="late"))
    assert [r.text for r in Journal.load(opened.path).records] == ["one"]
    other.lock.release()


def test_a_fork_copies_whole_lines_only(tmp_path):
    store = SessionStore(tmp_path)
    opened = store.create()
    journal = Journal(opened.path)
    journal.lock = opened.lock
    journal.append(UserMessageRecord(turn_id="t1", text="one"))
    with open(opened.path, "ab") as fh:
        fh.write(b'{"v":1,"seq":2,"kind":"user_mess')  # the holder's next line, half written
    fork = store.open(opened.id)
    assert fork.fork is not None and fork.fork.holder_pid == os.getpid()
    assert fork.id != opened.id
    whole = opened.path.read_bytes().rsplit(b"\n", 1)[0] + b"\n"
    copied = fork.path.read_bytes()
    assert copied.startswith(whole) and copied.count(b"\n") == whole.count(b"\n") + 1
    records = Journal.load(fork.path).records
    assert [r.kind for r in records] == ["user_message", "session_forked"]
    assert records[1].source == opened.id and records[1].source_seq == 1 and records[1].seq == 2
    fork.lock.release()
    journal.close()


# -- real agents ------------------------------------------------------------------------


def _stream_agent(tmp_path: Path, env: dict, *extra: str) -> subprocess.Popen:
    return popen_agent(
        ["-p", "--input-format", "stream-json", "--output-format", "stream-json",
         "--permission-mode", "auto", "--cwd", str(tmp_path), *extra],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _say(proc: subprocess.Popen, text: str) -> None:
    proc.stdin.write(json.dumps({"type": "user_message", "text": text}) + "\n")
    proc.stdin.flush()


def _until_turn_ended(proc: subprocess.Popen, timeout: float = 60) -> list[dict]:
    events = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        events.append(json.loads(line))
        if events[-1]["type"] == "turn_ended":
            return events
    raise AssertionError(f"no turn_ended: {events}")


def _sessions(home: Path) -> dict[str, list]:
    root = home / "sessions"
    return {d.name: Journal.load(d / "journal.jsonl").records
            for d in root.iterdir() if (d / "journal.jsonl").is_file()}


def _pids(records: list) -> list[int]:
    return [r.pid for r in records if isinstance(r, AgentProcessRecord)]


def _texts(records: list) -> list[str]:
    return [r.text for r in records if isinstance(r, UserMessageRecord)]


def test_two_agents_on_one_session_the_second_forks_and_says_the_pid(fake_api, tmp_path):
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)
    fake_api.enqueue(Reply.text("A1 done"), Reply.text("B1 done"), Reply.text("A2 done"))
    first = _stream_agent(tmp_path, env)
    try:
        _say(first, "A1")
        _until_turn_ended(first)
        (session_id,) = _sessions(tmp_path / "home")
        second = run_agent(
            ["-p", "B1", "--resume", session_id, "--output-format", "stream-json",
             "--permission-mode", "auto", "--cwd", str(tmp_path)],
            env=env, timeout=60)
        assert second.returncode == 0, second.stderr
        notices = [e for e in events_of(second.stdout) if e["type"] == "notice"
                   and e.get("code") == "session_forked"]
        assert len(notices) == 1, second.stdout
        assert f"pid {first.pid}" in notices[0]["text"] and session_id in notices[0]["text"]
        # The first agent goes on in its own session, which the second never wrote.
        _say(first, "A2")
        _until_turn_ended(first)
        first.stdin.close()
        assert first.wait(30) == 0
    finally:
        if first.poll() is None:
            first.kill()
    sessions = _sessions(tmp_path / "home")
    assert len(sessions) == 2
    original = sessions.pop(session_id)
    (fork_id, fork), = sessions.items()
    assert _texts(original) == ["A1", "A2"] and _pids(original) == [first.pid]
    assert _texts(fork) == ["A1", "B1"]
    forked = [r for r in fork if isinstance(r, SessionForkedRecord)]
    assert len(forked) == 1 and forked[0].source == session_id
    assert forked[0].holder_pid == first.pid
    cut = fork.index(forked[0])
    # Before the fork record: a copy of the original's records, as they were.
    assert [r.model_dump() for r in fork[:cut]] == [r.model_dump() for r in original[:cut]]
    assert _pids(fork[cut:]) == [second_pid(fork[cut:])]
    assert all(r.seq == i for i, r in enumerate(fork, 1))
    assert all(r.seq == i for i, r in enumerate(original, 1))
    # The second agent's request carried the first one's completed turn.
    b1 = next(b for b in fake_api.requests if "B1" in json.dumps(b["messages"][-1]))
    assert "A1 done" in json.dumps(b1["messages"])
    assert "A2" not in json.dumps(b1["messages"])


def second_pid(records: list) -> int:
    (pid,) = _pids(records)
    return pid


def test_kill_9_of_the_holder_then_resume_continues_the_same_session(fake_api, tmp_path):
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)
    fake_api.enqueue(Reply.text("A1 done"), Reply.text("B1 done"))
    first = _stream_agent(tmp_path, env)
    try:
        _say(first, "A1")
        _until_turn_ended(first)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    (session_id,) = _sessions(tmp_path / "home")
    second = run_agent(
        ["-p", "B1", "--continue", "--output-format", "stream-json",
         "--permission-mode", "auto", "--cwd", str(tmp_path)],
        env=env, timeout=60)
    assert second.returncode == 0, second.stderr
    assert not [e for e in events_of(second.stdout) if e.get("code") == "session_forked"]
    sessions = _sessions(tmp_path / "home")
    assert list(sessions) == [session_id]
    assert _texts(sessions[session_id]) == ["A1", "B1"]
    assert len(_pids(sessions[session_id])) == 2


def test_fork_session_forks_on_purpose_and_needs_a_session(fake_api, tmp_path):
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)
    fake_api.enqueue(Reply.text("A1 done"), Reply.text("B1 done"))
    common = ["--output-format", "stream-json", "--permission-mode", "auto", "--cwd", str(tmp_path)]
    first = run_agent(["-p", "A1", *common], env=env,
                           timeout=60)
    assert first.returncode == 0, first.stderr
    (session_id,) = _sessions(tmp_path / "home")
    second = run_agent(["-p", "B1", "--continue", "--fork-session", *common],
                            env=env, timeout=60)
    assert second.returncode == 0, second.stderr
    notices = [e["text"] for e in events_of(second.stdout) if e.get("code") == "session_forked"]
    assert len(notices) == 1 and "--fork-session" in notices[0], second.stdout
    sessions = _sessions(tmp_path / "home")
    assert _texts(sessions.pop(session_id)) == ["A1"]
    (fork,) = sessions.values()
    assert _texts(fork) == ["A1", "B1"]
    alone = run_agent(["-p", "x", "--fork-session", *common], env=env, timeout=60)
    assert alone.returncode == 1 and "--fork-session goes with" in alone.stderr


def test_a_turn_still_running_elsewhere_is_closed_in_the_fork_as_such(fake_api, tmp_path):
    """The holder runs a long command; the fork's copy has the turn open: the fork says
    where it runs, and the model is told its result is unknown there."""
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "sleep 30"}, id="toolu_long"),
                     Reply.text("B1 done"))
    first = _stream_agent(tmp_path, env)
    try:
        _say(first, "A1")
        assert wait_until(lambda: b"tool_intent" in b"".join(
            p.read_bytes() for p in (tmp_path / "home").glob("sessions/*/journal.jsonl")))
        (session_id,) = _sessions(tmp_path / "home")
        second = run_agent(
            ["-p", "B1", "--resume", session_id, "--output-format", "stream-json",
             "--permission-mode", "auto", "--cwd", str(tmp_path)],
            env=env, timeout=60)
        assert second.returncode == 0, second.stderr
    finally:
        first.kill()
        first.wait(10)
    last = fake_api.requests[-1]["messages"]
    result = last[2]["content"][0]
    assert result["tool_use_id"] == "toolu_long" and result["is_error"] is True
    texts = json.dumps(last[2]["content"])
    assert "still running in session" in texts and f"pid {first.pid}" in texts


@pytest.mark.asyncio
async def test_acp_load_of_a_session_open_elsewhere_is_refused_naming_the_pid(tmp_path, fake_api):
    from acp import PROTOCOL_VERSION, RequestError, text_block

    from tests.acp_client import RecordingClient, spawn, start

    fake_api.enqueue(Reply.text("first answer"))
    async with spawn(RecordingClient(), tmp_path, fake_api) as (conn, proc):
        sid = await start(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        async with spawn(RecordingClient(), tmp_path, fake_api) as (other, _):
            await other.initialize(protocol_version=PROTOCOL_VERSION)
            with pytest.raises(RequestError) as refused:
                await other.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
            assert f"pid {proc.pid}" in str(refused.value.data)
    assert list(_sessions(tmp_path / "home")) == [sid]  # no fork, nothing written


def test_the_tuis_resume_path_forks_a_session_held_and_continues_one_let_go(tmp_path, monkeypatch):
    """``/resume`` opens through ``Wiring.session_maker``: a session this or any other
    process holds opens as a fork; once let go, the same session."""
    from agent_tui.cli.options import parse_options
    from agent_tui.cli.wiring import Wiring
    from tests.harness import Recorder

    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    wiring = Wiring(parse_options(["--provider", "scripted", "--cwd", str(tmp_path)]),
                    interactive=True)
    first_id, first = wiring.open_session(Recorder())
    seen = Recorder()
    forked = wiring.session_maker(first_id)(seen)
    notices = [e for e in seen.of("notice") if e.code == "session_forked"]
    assert len(notices) == 1 and f"pid {os.getpid()}" in notices[0].text
    assert forked.deps.config.session_id != first_id
    forked.deps.journal.close()
    first.deps.journal.close()  # the session closes: its lock goes
    again = Recorder()
    resumed = wiring.session_maker(first_id)(again)
    assert resumed.deps.config.session_id == first_id
    assert not [e for e in again.of("notice") if e.code == "session_forked"]
    resumed.deps.journal.close()
