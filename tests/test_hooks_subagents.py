"""Sub-agent hooks as Claude Code runs them, through the real ``agent-tui -p`` process
against the fake API: tool hooks inside a sub-agent get its ``agent_id`` and
``agent_type``, ``SubagentStart`` gives it context before its first request (matched
on the agent type), ``SubagentStop`` keeps it working (exit 2 or a ``block``
decision), under the loop guard ``Stop`` has. Hook scripts in Python and in shell."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.fake_api import Reply
from tests.hooks_support import agent, python_hook, script
from tests.print_agent import events_of

REVIEWER = """\
---
name: reviewer
description: Reviews a change. Use after editing code.
tools: Bash, Read
---
REVIEWER-SYSTEM-PROMPT: review the change and report.
"""

# Logs what each tool hook reads about the agent it runs in, one line per call.
TOOL_LOG_HOOK = '''
    #!/bin/bash
    jq -c '{tool: .tool_name, command: .tool_input.command, has_id: has("agent_id"),
            agent_id: .agent_id, agent_type: .agent_type}' >> "$HOOK_LOG_DIR/pre_tool.log"
    exit 0
'''

POST_LOG_HOOK = '''
    #!/bin/bash
    jq -c '{tool: .tool_name, agent_id: .agent_id, agent_type: .agent_type}' \\
        >> "$HOOK_LOG_DIR/post_tool.log"
'''

START_HOOK = '''
    import json, os, sys
    data = json.load(sys.stdin)
    with open(os.path.join(os.environ["HOOK_LOG_DIR"], "start.log"), "a") as log:
        log.write(json.dumps(data) + "\\n")
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "SubagentStart",
        "additionalContext": "REVIEWER-START-CONTEXT: the tests are in tests/"}}))
'''

# Blocks the first stop (the reason is the sub-agent's next instruction), then lets it.
STOP_ONCE_HOOK = '''
    import json, os, sys
    data = json.load(sys.stdin)
    with open(os.path.join(os.environ["HOOK_LOG_DIR"], "subagent_stop.log"), "a") as log:
        log.write(json.dumps(data) + "\\n")
    if data["stop_hook_active"]:
        sys.exit(0)
    print(json.dumps({"decision": "block", "reason": "RUN THE TESTS before you report."}))
'''

MAIN_STOP_HOOK = '''
    #!/bin/bash
    jq -c '{has_id: has("agent_id"), event: .hook_event_name}' >> "$HOOK_LOG_DIR/stop.log"
'''

NEVER_HOOK = '''
    #!/bin/bash
    echo ran >> "$HOOK_LOG_DIR/never.log"
'''


def is_child(body: dict[str, Any]) -> bool:
    system = body.get("system", "")
    text = system if isinstance(system, str) else "".join(b["text"] for b in system)
    return "REVIEWER-SYSTEM-PROMPT" in text


def steps(body: dict[str, Any]) -> int:
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


def serve(fake_api: Any, child: list[Reply], main: list[Reply]) -> None:
    def answer(body: dict[str, Any]) -> Reply:
        script_ = child if is_child(body) else main
        n = steps(body)
        return (script_[n] if n < len(script_) else Reply.text("finished")).copy()

    fake_api.enqueue(*[answer for _ in range(12)])


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def journals(tmp_path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The hook records of the main journal and of the sub-agent's."""
    [main] = list((tmp_path / "home").rglob("journal.jsonl"))
    [child] = list(main.parent.glob("agents/*.jsonl"))
    return ([r for r in lines(main) if r.get("kind") == "hook"],
            [r for r in lines(child) if r.get("kind") == "hook"])


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    monkeypatch.setenv("HOOK_LOG_DIR", str(folder))
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / ".claude" / "agents").mkdir(parents=True)
    (folder / ".claude" / "agents" / "reviewer.md").write_text(REVIEWER)
    return folder


def command(path: Path) -> dict[str, Any]:
    return {"type": "command", "command": python_hook(path) if path.suffix == ".py" else str(path)}


needs_jq = pytest.mark.skipif(shutil.which("jq") is None, reason="the shell hooks use jq")


@needs_jq
def test_subagent_hooks_get_its_id_and_type_start_gives_context_stop_blocks_once(
    fake_api, tmp_path, ws, logs
):
    hooks_dir = tmp_path / "hooks"
    serve(fake_api,
          child=[Reply.tool_use("bash", {"command": "echo child-work"}, id="toolu_child"),
                 Reply.text("Review: looks fine."),
                 Reply.text("Tests pass. Review: looks fine.")],
          main=[Reply.tool_use("bash", {"command": "echo main-work"}, id="toolu_main"),
                Reply.tool_use("task", {"description": "review", "prompt": "review the change",
                                        "subagent_type": "reviewer"}, id="toolu_task"),
                Reply.text("all done")])
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            command(script(hooks_dir / "tool_log.sh", TOOL_LOG_HOOK))]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [
            command(script(hooks_dir / "post_log.sh", POST_LOG_HOOK))]}],
        "SubagentStart": [
            {"matcher": "reviewer", "hooks": [command(script(hooks_dir / "start.py", START_HOOK))]},
            {"matcher": "Explore|Plan", "hooks": [command(script(hooks_dir / "never.sh", NEVER_HOOK))]},
        ],
        "SubagentStop": [
            {"matcher": "reviewer", "hooks": [command(script(hooks_dir / "stop_once.py", STOP_ONCE_HOOK))]},
            {"matcher": "general-purpose", "hooks": [command(hooks_dir / "never.sh")]},
        ],
        "Stop": [{"hooks": [command(script(hooks_dir / "main_stop.sh", MAIN_STOP_HOOK))]}],
    }
    out = agent(fake_api, tmp_path, "change and review", hooks)
    assert out.returncode == 0, out.stderr
    assert fake_api.rejections == []

    # Tool hooks: the main agent's call has no agent keys; the sub-agent's has both.
    main_call, child_call = lines(logs / "pre_tool.log")
    assert main_call == {"tool": "Bash", "command": "echo main-work", "has_id": False,
                         "agent_id": None, "agent_type": None}
    agent_id = child_call["agent_id"]
    assert child_call["has_id"] and child_call["agent_type"] == "reviewer"
    assert child_call["command"] == "echo child-work" and isinstance(agent_id, str) and agent_id

    assert lines(logs / "post_tool.log") == [
        {"tool": "Bash", "agent_id": None, "agent_type": None},
        {"tool": "Bash", "agent_id": agent_id, "agent_type": "reviewer"}]

    # SubagentStart: once, for this agent; its context is in the first request only.
    [started] = lines(logs / "start.log")
    assert started["hook_event_name"] == "SubagentStart"
    assert (started["agent_id"], started["agent_type"]) == (agent_id, "reviewer")
    assert started["cwd"] == str(ws) and started["session_id"]
    assert not (logs / "never.log").exists()  # the other types' matchers do not match
    child_requests = [r for r in fake_api.requests if is_child(r)]
    assert "REVIEWER-START-CONTEXT: the tests are in tests/" in json.dumps(
        child_requests[0]["messages"])
    assert all("REVIEWER-START-CONTEXT" not in json.dumps(r) for r in fake_api.requests
               if not is_child(r))

    # SubagentStop: blocked once (its reason is the next instruction), then it stops.
    first, second = lines(logs / "subagent_stop.log")
    assert first["hook_event_name"] == "SubagentStop"
    assert (first["agent_id"], first["agent_type"]) == (agent_id, "reviewer")
    assert (first["stop_hook_active"], second["stop_hook_active"]) == (False, True)
    assert first["last_assistant_message"] == "Review: looks fine."
    assert second["last_assistant_message"] == "Tests pass. Review: looks fine."
    transcript = Path(second["agent_transcript_path"])
    assert transcript.name == f"agent-{agent_id}.jsonl"
    entries = lines(transcript)
    assert all(e["isSidechain"] and e["agentId"] == agent_id for e in entries)
    said = [e["message"]["content"] for e in entries if e["type"] == "assistant"]
    assert any(b.get("text") == "Tests pass. Review: looks fine." for c in said for b in c)
    assert second["transcript_path"].endswith("transcript.jsonl")  # the main session's
    assert len(child_requests) == 3
    assert "RUN THE TESTS before you report." in json.dumps(child_requests[2]["messages"][-1])
    task_result = next(b for r in fake_api.requests if not is_child(r)
                       for m in r["messages"] if m["role"] == "user" for b in m["content"]
                       if b.get("tool_use_id") == "toolu_task")
    assert "Tests pass. Review: looks fine." in json.dumps(task_result)

    # Stop runs for the main agent only, without agent keys.
    assert lines(logs / "stop.log") == [{"has_id": False, "event": "Stop"}]

    # Each run is a hook record: the sub-agent's in its own journal.
    main_hooks, child_hooks = journals(tmp_path)
    assert [r["event"] for r in main_hooks] == ["PreToolUse", "PostToolUse", "Stop"]
    assert [r["event"] for r in child_hooks] == [
        "SubagentStart", "PreToolUse", "PostToolUse", "SubagentStop", "SubagentStop"]
    assert [r["decision"] for r in child_hooks if r["event"] == "SubagentStop"] == ["block", "none"]
    assert "REVIEWER-START-CONTEXT" in child_hooks[0]["context"]


BLOCK_ALWAYS = '''
    #!/bin/bash
    input=$(cat)
    printf '%s\\n' "$(printf '%s' "$input" | jq -c '{active: .stop_hook_active}')" \\
        >> "$HOOK_LOG_DIR/blocks.log"
    echo "Not yet: write the summary file first." >&2
    exit 2
'''


@needs_jq
def test_a_subagent_stop_hook_that_always_blocks_is_cut_off_like_stop(fake_api, tmp_path, ws, logs):
    serve(fake_api, child=[Reply.text(f"attempt {n}") for n in range(10)],
          main=[Reply.tool_use("task", {"description": "review", "prompt": "review it",
                                        "subagent_type": "reviewer"}, id="toolu_task"),
                Reply.text("done")])
    hooks = {"SubagentStop": [{"matcher": "*", "hooks": [
        command(script(tmp_path / "hooks" / "block.sh", BLOCK_ALWAYS))]}]}
    out = agent(fake_api, tmp_path, "review it", hooks)
    assert out.returncode == 0, out.stderr
    # Eight times it is kept working (as many as Stop allows: Claude Code's bound), the
    # ninth it stops.
    assert [e["active"] for e in lines(logs / "blocks.log")] == [False] + [True] * 8
    child_requests = [r for r in fake_api.requests if is_child(r)]
    assert len(child_requests) == 9
    assert "Not yet: write the summary file first." in json.dumps(child_requests[1]["messages"][-1])
    notices = [e["text"] for e in events_of(out.stdout) if e["type"] == "notice"]
    assert any("SubagentStop hooks asked the agent to go on 8 time(s) in a row" in n
               for n in notices)
    _, child_hooks = journals(tmp_path)
    assert [r["decision"] for r in child_hooks] == ["block"] * 9


def test_subagent_start_cannot_block_and_a_general_subagent_is_general_purpose(
    fake_api, tmp_path, ws, logs
):
    refuse = script(tmp_path / "hooks" / "refuse.py", '''
        import json, os, sys
        data = json.load(sys.stdin)
        with open(os.path.join(os.environ["HOOK_LOG_DIR"], "start.log"), "a") as log:
            log.write(json.dumps(data) + "\\n")
        print("subagents are not welcome", file=sys.stderr)
        sys.exit(2)
    ''')

    def answer(body: dict[str, Any]) -> Reply:
        first = json.dumps(body["messages"][0])
        if "dig through the logs" in first:
            return Reply.text("found nothing")
        if steps(body) == 0:
            return Reply.tool_use("task", {"description": "dig", "prompt": "dig through the logs"},
                                  id="toolu_task")
        return Reply.text("done")

    fake_api.enqueue(*[answer for _ in range(6)])
    hooks = {"SubagentStart": [{"matcher": "general-purpose", "hooks": [command(refuse)]}]}
    out = agent(fake_api, tmp_path, "look", hooks)
    assert out.returncode == 0, out.stderr
    [started] = lines(logs / "start.log")
    assert started["agent_type"] == "general-purpose"
    # Exit 2 cannot stop it: the sub-agent ran and answered; the user is told.
    assert any("dig through the logs" in json.dumps(r["messages"][0]) for r in fake_api.requests)
    assert "found nothing" in json.dumps(fake_api.requests[-1]["messages"])
    notices = [e["text"] for e in events_of(out.stdout) if e["type"] == "notice"]
    assert any("subagents are not welcome" in n for n in notices)
