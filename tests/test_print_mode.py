"""Print mode end to end: the real ``agent-tui`` process, both providers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.fake_api import Reply
from tests.forked_runs import popen_agent, run_agent
from tests.print_agent import env_for, events_of, marked, wait_until


def run_command_in_print_mode(fake_api, tmp_path: Path, command: str) -> subprocess.Popen:
    """The real agent in stream-json print mode, asked by the model to run ``command``."""
    fake_api.enqueue(Reply.tool_use("bash", {"command": command}))
    return popen_agent(
        ["-p", "run it", "--output-format", "stream-json", "--permission-mode", "auto",
         "--cwd", str(tmp_path)],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _stream_json_agent(workspace: Path, env: dict[str, str]) -> subprocess.Popen:
    """The agent reading ops from stdin and writing events to stdout (auto mode)."""
    return popen_agent(
        ["-p", "--input-format", "stream-json", "--output-format", "stream-json",
         "--permission-mode", "auto", "--cwd", str(workspace), "--trust"],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_scripted_stream_json_events_and_exit_zero(tmp_path):
    out = run_agent(
        ["-p", "list files", "--output-format", "stream-json", "--permission-mode", "auto",
         "--cwd", str(tmp_path)],
        env=env_for(tmp_path), timeout=60,
    )
    assert out.returncode == 0, out.stderr
    events = events_of(out.stdout)
    types = [e["type"] for e in events]
    assert types[:2] == ["session_started", "turn_started"]
    assert types[-1] == "result"
    assert "text_delta" in types
    bash_states = [e["state"] for e in events if e["type"] == "tool_state"]
    assert bash_states == ["streaming", "queued", "running", "succeeded"]
    assert events[-3] == {"type": "turn_ended", "turn_id": "t1", "status": "completed", "detail": ""}


def test_anthropic_text_mode_against_the_fake_api(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("Hello from the fake API."))
    out = run_agent(
        ["-p", "hi", "--cwd", str(tmp_path)],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url), timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Hello from the fake API."
    assert fake_api.requests[0]["messages"][0]["content"][0]["text"] == "hi"


def test_ask_mode_in_print_mode_denies_and_says_so(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch should-not-exist"}), Reply.text("ok"))
    out = run_agent(
        ["-p", "touch it", "--output-format", "stream-json", "--cwd", str(tmp_path)],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url), timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "should-not-exist").exists()
    states = [e for e in events_of(out.stdout) if e["type"] == "tool_state"]
    assert states[-1]["state"] == "denied"
    assert "print mode" in states[-1]["detail"]
    result = fake_api.requests[1]["messages"][-1]["content"][0]
    assert "not run" in result["content"] and "print mode" in result["content"]


def test_failed_request_exits_one_with_a_clear_message(fake_api, tmp_path):
    fake_api.enqueue(Reply.error(401, "authentication_error", "invalid x-api-key"))
    out = run_agent(
        ["-p", "hi", "--cwd", str(tmp_path)],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="bad", ANTHROPIC_BASE_URL=fake_api.url), timeout=60,
    )
    assert out.returncode == 1
    assert "invalid x-api-key" in out.stderr


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stop_signal_interrupts_a_process_tree_and_exits(fake_api, tmp_path, signum, code):
    """SIGINT, and a script's ``timeout`` (SIGTERM): without an answer of its own to SIGTERM
    the agent died at once and left its command running with nobody to stop it."""
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    command = f"bash -c 'sleep 300; : {marker}' & bash -c 'sleep 300; : {marker}'; wait"
    proc = run_command_in_print_mode(fake_api, tmp_path, command)
    try:
        assert wait_until(lambda: len(marked(marker)) >= 2), "the tree never started"
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, stderr
    assert wait_until(lambda: not marked(marker), timeout=5), "processes escaped"
    events = events_of(stdout)
    final = [e for e in events if e["type"] == "tool_state"][-1]
    assert final["state"] == "cancelled_while_running"
    assert final["side_effects"] == "unverified"
    assert [e for e in events if e["type"] == "turn_ended"][-1]["status"] == "cancelled"


def test_sigterm_in_claude_code_s_protocol_ends_the_run_and_exits_143(fake_api, tmp_path):
    """The Agent SDK's ``close`` ends the process with SIGTERM, as Claude Code's exits 143."""
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    fake_api.enqueue(Reply.tool_use("bash", {"command": f"sleep 300; : {marker}"}, id="toolu_t"))
    proc = popen_agent(
        ["-p", "--input-format", "stream-json", "--output-format", "stream-json",
         "--stream-shape", "claude-code", "--permission-mode", "bypassPermissions",
         "--cwd", str(tmp_path), "--trust"],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user",
                                                                 "content": "run it"}}) + "\n")
        proc.stdin.flush()
        assert wait_until(lambda: marked(marker)), "the command never started"
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, stderr
    assert wait_until(lambda: not marked(marker), timeout=5), "processes escaped"
    result = [json.loads(line) for line in stdout.splitlines() if '"type": "result"' in line
              or '"type":"result"' in line]
    assert result and result[-1]["subtype"] != "success", stdout[-2000:]


def test_stream_json_input_steers_interrupts_and_ends_at_eof(fake_api, tmp_path):
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    fake_api.enqueue(
        Reply.tool_use("bash", {"command": f"sleep 300; : {marker}"}, id="toolu_in"),
    )
    proc = _stream_json_agent(tmp_path, env_for(tmp_path, ANTHROPIC_API_KEY="test-key",
                                                ANTHROPIC_BASE_URL=fake_api.url))
    try:
        proc.stdin.write(json.dumps({"type": "user_message", "text": "start"}) + "\n")
        proc.stdin.flush()
        assert wait_until(lambda: marked(marker)), "the command never started"
        rest = (
            json.dumps({"type": "user_message", "text": "steer"}) + "\n"
            + "this is not json\n"
            + json.dumps({"type": "interrupt"}) + "\n"
        )
        stdout, stderr = proc.communicate(input=rest, timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    events = events_of(stdout)
    assert proc.returncode == 130, stderr
    steer = [(e["text"], e["state"]) for e in events if e["type"] == "steer_state"]
    assert steer == [("steer", "queued"), ("steer", "returned")]
    assert any(e["type"] == "notice" and "line 3" in e["text"] for e in events)
    assert not marked(marker)


def test_bad_cwd_and_bad_script_get_a_clear_message(tmp_path):
    out = run_agent(
        ["-p", "hi", "--cwd", str(tmp_path / "missing")],
        env=env_for(tmp_path), timeout=60,
    )
    assert out.returncode == 1 and "not a directory" in out.stderr
    bad = tmp_path / "script.json"
    bad.write_text("{not json")
    out = run_agent(
        ["-p", "hi", "--provider", "scripted", "--script", str(bad), "--cwd", str(tmp_path)],
        env=env_for(tmp_path), timeout=60,
    )
    assert out.returncode == 1 and f"invalid script {bad}:1:2" in out.stderr


def _mcp_project(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = Path(__file__).parent / "mcp_servers" / "sdk_server.py"
    config = {"mcpServers": {"demo": {
        "command": sys.executable, "args": [str(server), str(tmp_path / "record.jsonl")],
    }}}
    (workspace / ".mcp.json").write_text(json.dumps(config))
    return workspace


def _mcp_env(tmp_path: Path, fake_api) -> dict[str, str]:
    return env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                   XDG_CONFIG_HOME=str(tmp_path / "config"), MCP_TIMEOUT="20000")


def _run_in_mcp_project(fake_api, tmp_path: Path, prompt: str) -> subprocess.CompletedProcess:
    """Print mode in a trusted project whose .mcp.json starts the SDK test server."""
    workspace = _mcp_project(tmp_path)
    return run_agent(
        ["-p", prompt, "--output-format", "stream-json", "--permission-mode", "auto",
         "--cwd", str(workspace), "--trust"],
        env=_mcp_env(tmp_path, fake_api), timeout=90,
    )


def test_project_mcp_tools_reach_the_model_when_the_project_is_trusted(fake_api, tmp_path):
    fake_api.enqueue(
        Reply.tool_use("mcp__demo__echo", {"text": "hello mcp"}, id="toolu_mcp"),
        Reply.text("echoed"),
    )
    out = _run_in_mcp_project(fake_api, tmp_path, "echo")
    assert out.returncode == 0, out.stderr
    states = [e["state"] for e in events_of(out.stdout) if e.get("tool_use_id") == "toolu_mcp"
              and e["type"] == "tool_state"]
    assert states[-1] == "succeeded", out.stdout
    notices = [e["text"] for e in events_of(out.stdout) if e["type"] == "notice"]
    assert "MCP server demo: ready (7 tools)" in notices
    result = fake_api.requests[1]["messages"][-1]["content"][0]
    assert "hello mcp" in result["content"]


def test_project_mcp_servers_do_not_start_in_an_untrusted_project(fake_api, tmp_path):
    workspace = _mcp_project(tmp_path)
    fake_api.enqueue(Reply.text("hi"))
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  XDG_CONFIG_HOME=str(tmp_path / "config"))
    out = run_agent(
        ["-p", "hi", "--output-format", "stream-json", "--cwd", str(workspace)],
        env=env, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    notices = [e["text"] for e in events_of(out.stdout) if e["type"] == "notice"]
    assert any("demo" in n and "not started" in n for n in notices), notices
    assert not (tmp_path / "record.jsonl").exists()
    tool_names = [t["name"] for t in fake_api.requests[0].get("tools", [])]
    assert not any(n.startswith("mcp__") for n in tool_names)


def test_second_sigint_exits_at_once_and_still_leaves_nothing_running(fake_api, tmp_path):
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    # Ignores TERM: the first SIGINT's cleanup would wait out the grace.
    command = f"trap '' TERM; bash -c \"trap '' TERM; sleep 300; : {marker}\"; : {marker}"
    proc = run_command_in_print_mode(fake_api, tmp_path, command)
    try:
        assert wait_until(lambda: len(marked(marker)) >= 2), "the tree never started"
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    # It did not wait for the first interrupt's cleanup (the grace of a TERM-ignoring
    # tree): the turn never got to end.
    assert not [e for e in events_of(stdout) if e["type"] == "turn_ended"]
    assert wait_until(lambda: not marked(marker), timeout=5), "processes escaped the hard exit"


def test_a_closed_stdout_interrupts_the_turn_ends_its_tree_and_exits(fake_api, tmp_path):
    # `agent-tui -p ... | head`: the reader goes away while a command streams output.
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    command = f"bash -c 'while :; do echo tick; sleep 0.1; done; : {marker}'"
    proc = run_command_in_print_mode(fake_api, tmp_path, command)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if '"tool_output"' in line:
                break
        assert marked(marker), "the command never started"
        proc.stdout.close()  # like head, once it has read enough
        code = proc.wait(timeout=20)
        stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 130, stderr
    assert "BrokenPipe" not in stderr and "Traceback" not in stderr
    assert wait_until(lambda: not marked(marker), timeout=5), "the tree outlived the turn"


def test_text_mode_under_head_exits_promptly(tmp_path):
    proc = popen_agent(
        ["--provider", "scripted", "-p", "hello", "--cwd", str(tmp_path)],
        env=env_for(tmp_path, AGENT_TUI_SCRIPTED_DELAY="0.01"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        assert len(proc.stdout.read(20)) == 20
        proc.stdout.close()
        code = proc.wait(timeout=20)
        stderr = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 130, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr


def test_stream_json_input_sigint_while_idle_exits_zero(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("first answer"))
    proc = _stream_json_agent(tmp_path, env_for(tmp_path, ANTHROPIC_API_KEY="test-key",
                                                ANTHROPIC_BASE_URL=fake_api.url))
    try:
        proc.stdin.write(json.dumps({"type": "user_message", "text": "hi"}) + "\n")
        proc.stdin.flush()
        seen: list[dict] = []
        for line in proc.stdout:
            seen.append(json.loads(line))
            if seen[-1]["type"] == "turn_ended":
                break
        proc.send_signal(signal.SIGINT)  # idle now, stdin still open
        code = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert seen[-1]["status"] == "completed"
    assert code == 0, proc.stderr.read()


def test_stream_json_input_sigint_during_a_turn_exits_130_without_end_of_input(fake_api, tmp_path):
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    fake_api.enqueue(Reply.tool_use("bash", {"command": f"sleep 300; : {marker}"}))
    proc = _stream_json_agent(tmp_path, env_for(tmp_path, ANTHROPIC_API_KEY="test-key",
                                                ANTHROPIC_BASE_URL=fake_api.url))
    try:
        proc.stdin.write(json.dumps({"type": "user_message", "text": "start"}) + "\n")
        proc.stdin.flush()
        assert wait_until(lambda: marked(marker)), "the command never started"
        proc.send_signal(signal.SIGINT)  # stdin stays open: the signal alone ends it
        code = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 130, proc.stderr.read()
    assert wait_until(lambda: not marked(marker), timeout=5)


def test_an_mcp_image_reaches_the_model_inside_the_tool_result(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("mcp__demo__picture", {}, id="toolu_pic"), Reply.text("seen"))
    out = _run_in_mcp_project(fake_api, tmp_path, "show it")
    assert out.returncode == 0, out.stderr
    assert fake_api.rejections == []
    [result] = [b for b in fake_api.requests[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    text, image = result["content"]
    assert text["type"] == "text" and text["text"].startswith("a picture:")
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"


def test_a_changed_mcp_tool_list_reaches_the_model_at_the_next_turn_with_a_notice(fake_api, tmp_path):
    workspace = _mcp_project(tmp_path)
    fake_api.enqueue(Reply.tool_use("mcp__demo__add_tool", {"name": "extra"}), Reply.text("added"),
                     Reply.text("second turn"))
    proc = _stream_json_agent(workspace, _mcp_env(tmp_path, fake_api))
    events: list[dict] = []
    try:
        for text in ("add a tool", "and now?"):
            proc.stdin.write(json.dumps({"type": "user_message", "text": text}) + "\n")
            proc.stdin.flush()
            for line in proc.stdout:
                events.append(json.loads(line))
                if events[-1]["type"] == "turn_ended":
                    break
        stdout, stderr = proc.communicate(timeout=60)
        events += events_of(stdout)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    names = [[t["name"] for t in r.get("tools", [])] for r in fake_api.requests]
    assert "mcp__demo__extra" not in names[0] and "mcp__demo__extra" not in names[1]  # not mid-turn
    assert "mcp__demo__extra" in names[2]
    [notice] = [e for e in events if e["type"] == "notice" and e.get("code") == "tools_changed"]
    assert "+mcp__demo__extra" in notice["text"] and "prompt cache" in notice["text"]
    ended = [i for i, e in enumerate(events) if e["type"] == "turn_ended"]
    assert ended[0] < events.index(notice) < ended[1]  # told between the turns


def test_text_output_has_a_case_for_every_event_type() -> None:
    from agent_tui.headless import Printer
    from tests.event_cases import unhandled_events

    assert unhandled_events(Printer._show) == set()


def test_text_output_shows_tool_states_and_notices_on_stderr_and_text_on_stdout() -> None:
    import io

    from agent_tui.headless import Printer
    from agent_tui.protocol import (
        Notice,
        NoticeLevel,
        TextDelta,
        ToolState,
        ToolStateChanged,
        TurnEnded,
        TurnStarted,
        TurnStatus,
        Usage,
    )

    out, err = io.StringIO(), io.StringIO()
    printer = Printer("text", out, err)
    for event in [
        TurnStarted(turn_id="t1", text="hi"),
        TextDelta(turn_id="t1", text="working"),
        ToolStateChanged(turn_id="t1", tool_use_id="toolu_abcdef", name="bash",
                         state=ToolState.STREAMING),
        ToolStateChanged(turn_id="t1", tool_use_id="toolu_abcdef", name="bash",
                         state=ToolState.FAILED, detail="exit 2"),
        Notice(level=NoticeLevel.WARNING, text="careful"),
        Usage(turn_id="t1", model="m", input_tokens=1, output_tokens=1),
        TurnEnded(turn_id="t1", status=TurnStatus.FAILED, detail="boom"),
    ]:
        printer(event)
    assert out.getvalue() == "working\n"
    assert err.getvalue() == ("[bash abcdef] failed (exit 2)\nwarning: careful\n"
                              "turn failed: boom\n")
    assert printer.statuses == [TurnStatus.FAILED]
