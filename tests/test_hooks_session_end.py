"""``SessionEnd`` hooks as Claude Code runs them: when a print-mode run ends (reason
``other``), on ``/clear`` (``clear``, then ``SessionStart`` with source ``clear``) and
when the user quits (``prompt_input_exit``); matched on the reason; they cannot keep
the session, a hanging one is ended at its timeout, and Ctrl+C while one runs ends
it. Real hook scripts (Python and shell), the real binary or a real session against
the fake API through the real SDK."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from agent_tui.protocol import (
    ClearConversation,
    SessionEndReason,
    Shutdown,
    UserMessage,
)
from tests.fake_api import Reply
from tests.forked_runs import popen_agent
from tests.hooks_support import command_hooks, hook_records, hook_script, start, texts
from tests.hooks_support import agent, python_hook, script
from tests.print_agent import env_for, events_of

needs_jq = pytest.mark.skipif(shutil.which("jq") is None, reason="the shell hook uses jq")

# Logs why the session ends and the last thing the assistant said in the transcript.
END_LOG_HOOK = '''
    #!/bin/bash
    input=$(cat)
    path=$(printf '%s' "$input" | jq -r '.transcript_path')
    last=$(jq -r 'select(.type == "assistant") | .message.content[] | select(.type == "text")
                  | .text' "$path" | tail -n 1)
    printf '%s' "$input" | jq -c --arg last "$last" \\
        '{event: .hook_event_name, reason: .reason, has_id: has("agent_id"), last: $last}' \\
        >> "$HOOK_LOG_DIR/end.log"
    exit 2  # cannot keep the session: only said
'''

# Says it started (with its pid), then hangs.
HANGING_HOOK = '''
    import os, sys, time
    sys.stdin.read()
    with open(os.path.join(os.environ["HOOK_LOG_DIR"], "hanging.pid"), "w") as fh:
        fh.write(str(os.getpid()))
    time.sleep(300)
'''


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    monkeypatch.setenv("HOOK_LOG_DIR", str(folder))
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def journal_hooks(tmp_path: Path) -> list[dict[str, Any]]:
    [journal] = list((tmp_path / "home").rglob("journal.jsonl"))
    return [r for r in lines(journal) if r.get("kind") == "hook"]


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@needs_jq
def test_a_session_end_hook_runs_when_a_print_run_ends(fake_api, tmp_path, ws, logs):
    hook = str(script(tmp_path / "hooks" / "end.sh", END_LOG_HOOK))
    never = str(script(tmp_path / "hooks" / "never.sh", "#!/bin/bash\necho ran >> \"$HOOK_LOG_DIR/never.log\"\n"))
    fake_api.enqueue(Reply.text("Everything is in order."))
    hooks = {"SessionEnd": [
        {"matcher": "other", "hooks": [{"type": "command", "command": hook}]},
        {"matcher": "clear|logout", "hooks": [{"type": "command", "command": never}]},
    ]}
    out = agent(fake_api, tmp_path, "check things", hooks)
    assert out.returncode == 0, out.stderr
    # It ran once the turn was over: the transcript holds the last answer.
    assert lines(logs / "end.log") == [{"event": "SessionEnd", "reason": "other", "has_id": False,
                                         "last": "Everything is in order."}]
    assert not (logs / "never.log").exists()
    [record] = journal_hooks(tmp_path)
    assert (record["event"], record["ending"], record["exit_code"]) == ("SessionEnd", "exited", 2)
    assert record["decision"] == "none"
    result = events_of(out.stdout)[-1]
    assert result["type"] == "result" and result["subtype"] == "success"


def test_a_hanging_session_end_hook_is_ended_at_its_timeout(fake_api, tmp_path, ws, logs):
    hook = script(tmp_path / "hooks" / "hang.py", HANGING_HOOK)
    fake_api.enqueue(Reply.text("done"))
    hooks = {"SessionEnd": [{"hooks": [
        {"type": "command", "command": python_hook(hook), "timeout": 1}]}]}
    out = agent(fake_api, tmp_path, "go", hooks)
    assert out.returncode == 0, out.stderr
    pid = int((logs / "hanging.pid").read_text())
    assert gone(pid)  # killed, not left behind
    [record] = journal_hooks(tmp_path)
    assert (record["event"], record["ending"]) == ("SessionEnd", "timed_out")
    notices = [e["text"] for e in events_of(out.stdout) if e["type"] == "notice"]
    assert any("SessionEnd hook" in n and "timed out after 1 s" in n for n in notices)


def test_ctrl_c_ends_a_running_session_end_hook(fake_api, tmp_path, ws, logs):
    hook = script(tmp_path / "hooks" / "hang.py", HANGING_HOOK)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"SessionEnd": [{"hooks": [
        {"type": "command", "command": python_hook(hook), "timeout": 600}]}]}}))
    fake_api.enqueue(Reply.text("done"))
    proc = popen_agent(
        ["-p", "go", "--output-format", "stream-json", "--permission-mode", "auto",
         "--cwd", str(ws), "--settings", str(settings)],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                    HOOK_LOG_DIR=str(logs)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        pid_file = logs / "hanging.pid"
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, "the hook never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert gone(int(pid_file.read_text()))
    [record] = journal_hooks(tmp_path)
    assert (record["event"], record["ending"]) == ("SessionEnd", "cancelled")
    assert events_of(stdout)[-1]["subtype"] == "success"


CLEAR_END = '''
    data = json.load(sys.stdin)
    with open(data["transcript_path"]) as fh:
        said = [json.loads(line) for line in fh]
    with open(os.environ["HOOK_LOG_DIR"] + "/end.log", "a") as log:
        log.write(json.dumps({"reason": data["reason"], "lines": len(said)}) + "\\n")
'''
CLEAR_START = '''
    data = json.load(sys.stdin)
    with open(os.environ["HOOK_LOG_DIR"] + "/start.log", "a") as log:
        log.write(data["source"] + "\\n")
    if data["source"] == "clear":
        print("NEW-CONVERSATION-CONTEXT")
'''


@pytest.mark.asyncio
async def test_clear_runs_session_end_then_session_start_and_quitting_says_so(
    fake_api, tmp_path, logs
):
    folder = tmp_path / "scripts"
    hooks = command_hooks(tmp_path, tmp_path / "ws", {
        "SessionEnd": [{"hooks": [{"type": "command", "command": hook_script(folder, "end", CLEAR_END)}]}],
        "SessionStart": [{"matcher": "startup|clear", "hooks": [
            {"type": "command", "command": hook_script(folder, "start", CLEAR_START)}]}],
    })
    run, _ = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("OLD-ANSWER"), Reply.text("fresh"))
    run.submit(UserMessage(text="the old question"))
    await run.idle()
    run.submit(ClearConversation())
    run.submit(UserMessage(text="a new question"))  # held until /clear's hooks are done
    await run.idle()
    # SessionEnd read the old conversation before it was cleared.
    assert lines(logs / "end.log") == [{"reason": "clear", "lines": 2}]
    assert (logs / "start.log").read_text() == "startup\nclear\n"
    [first] = fake_api.requests[1]["messages"]
    assert "NEW-CONVERSATION-CONTEXT" in " ".join(texts(first))
    assert "OLD-ANSWER" not in json.dumps(fake_api.requests[1])
    run.submit(Shutdown(reason=SessionEndReason.PROMPT_INPUT_EXIT))
    await asyncio.wait_for(run.task, 30)
    assert [json.loads(x)["reason"] for x in (logs / "end.log").read_text().splitlines()] == [
        "clear", "prompt_input_exit"]
    events = [(r.event, r.ending) for r in hook_records(run)]
    assert [str(e) for e, _ in events] == [
        "SessionStart", "SessionEnd", "SessionStart", "SessionEnd"]
    assert {str(ending) for _, ending in events} == {"exited"}


@needs_jq
@pytest.mark.asyncio
async def test_an_acp_session_runs_session_end_when_it_ends(fake_api, tmp_path, logs):
    from acp import text_block

    from tests.acp_client import RecordingClient, spawn, start as acp_start

    hook = str(script(tmp_path / "hooks" / "end.sh", END_LOG_HOOK))
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"SessionEnd": [{"matcher": "other", "hooks": [
        {"type": "command", "command": f"HOOK_LOG_DIR={logs} {hook}"}]}]}}))
    fake_api.enqueue(Reply.text("Answered over ACP."))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api, "--settings", str(settings)) as (conn, _):
        sid = await acp_start(conn, tmp_path)
        response = await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        assert response.stop_reason == "end_turn"
        assert not (logs / "end.log").exists()  # the session goes on between prompts
    assert lines(logs / "end.log") == [{"event": "SessionEnd", "reason": "other", "has_id": False,
                                         "last": "Answered over ACP."}]


@pytest.mark.asyncio
async def test_esc_ends_a_hanging_session_end_hook_of_clear_and_the_conversation_is_cleared(
    fake_api, tmp_path, logs
):
    from agent_tui.protocol import Interrupt

    hang = hook_script(tmp_path / "scripts", "hang", HANGING_HOOK)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"SessionEnd": [{"matcher": "clear", "hooks": [
        {"type": "command", "command": hang, "timeout": 600}]}]})
    run, _ = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("OLD-ANSWER"), Reply.text("fresh"))
    run.submit(UserMessage(text="the old question"))
    await run.idle()
    run.submit(ClearConversation())
    pid_file = logs / "hanging.pid"
    await run.rec.wait_for(lambda: pid_file.exists() and pid_file.read_text() != "", timeout=30)
    run.submit(Interrupt())
    await run.idle(timeout=30)
    assert gone(int(pid_file.read_text()))
    [record] = hook_records(run)
    assert (str(record.event), str(record.ending)) == ("SessionEnd", "cancelled")
    assert run.rec.of("conversation_cleared")
    run.submit(UserMessage(text="a new question"))
    await run.idle()
    assert "OLD-ANSWER" not in json.dumps(fake_api.requests[-1])
    await run.close()
