"""What a hook reads on stdin is what Claude Code sends: every built-in tool's
``PreToolUse`` payload under Claude Code's tool name and input keys, ``PostToolUse``'s
``tool_response`` in the shape hooks read, ``permission_mode`` in Claude Code's words,
an ``updatedInput`` applied (in our keys) before the call runs, matchers in either
spelling. Real hook scripts, a real session, the real SDK and the fake API."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_tui.protocol import UserMessage
from agent_tui.protocol.tool_names import CLAUDE_NAMES
from agent_tui.hooks.matchers import Matcher
from tests.fake_api import Reply
from tests.hooks_support import command_hooks, hook_script, start, tool_results

pytestmark = pytest.mark.asyncio

# Logs what it read, then blocks: nothing it sees runs (no fetch, no sub-agent).
LOG_AND_BLOCK = """
    given = json.load(sys.stdin)
    with open(os.environ["HOOK_LOG"], "a") as log:
        log.write(json.dumps(given) + "\\n")
    if len(sys.argv) > 1 and sys.argv[1] == "block":
        print("seen", file=sys.stderr)
        sys.exit(2)
"""

#: Claude Code's input keys for each of its tools (its hooks reference), ours beside.
CLAUDE_KEYS: dict[str, set[str]] = {
    "Bash": {"command", "description", "timeout", "run_in_background"},
    "Write": {"file_path", "content"},
    "Edit": {"file_path", "old_string", "new_string", "replace_all"},
    "Read": {"file_path", "offset", "limit"},
    "Glob": {"pattern", "path"},
    "Grep": {"pattern", "path", "glob", "output_mode", "-i", "-A", "-B", "-C", "-n",
             "multiline", "type", "head_limit"},
    "WebFetch": {"url", "prompt"},
    "Task": {"description", "prompt", "subagent_type", "model", "run_in_background"},
    "TodoWrite": {"todos"},
    "ExitPlanMode": {"plan"},
}

CALLS = [
    ("bash", {"command": "echo hi", "timeout_ms": 5000, "run_in_background": False}),
    ("write_file", {"path": "src/new.py", "content": "x = 1\n"}),
    ("edit_file", {"path": "src/old.py", "old_string": "a", "new_string": "b"}),
    ("read_file", {"path": "./docs/../README.md", "offset": 1, "limit": 5}),
    ("glob", {"pattern": "**/*.py", "path": "src"}),
    ("grep", {"pattern": "TODO", "path": "src", "glob": "*.py", "output_mode": "content",
              "-i": True, "context": 2, "head_limit": 10}),
    ("web_fetch", {"url": "https://example.com/", "prompt": "the title"}),
    ("task", {"description": "look around", "prompt": "list the files"}),
    ("todo_write", {"todos": [{"content": "a", "status": "pending", "activeForm": "doing a"}]}),
    ("exit_plan_mode", {"plan": "1. change nothing"}),
]


def logged(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "hook.log").read_text().splitlines()]


async def test_every_built_in_tools_pre_tool_use_payload_is_claude_codes(
    fake_api, tmp_path, monkeypatch,
):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    hook = hook_script(tmp_path / "hooks", "log", LOG_AND_BLOCK)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PreToolUse": [
        {"matcher": "*", "hooks": [{"type": "command", "command": f"{hook} block"}]}]})
    run, ws = start(fake_api, tmp_path, hooks)
    assert {name for name, _ in CALLS} == set(run.session.deps.tools.names())  # all of them
    fake_api.enqueue(Reply.tool_uses(CALLS), Reply.text("ok"))
    run.submit(UserMessage(text="use every tool"))
    await run.idle()
    seen = logged(tmp_path)
    assert sorted(p["tool_name"] for p in seen) == sorted(CLAUDE_NAMES[n] for n, _ in CALLS)
    by_name = {p["tool_name"]: p for p in seen}
    for payload in seen:
        name, given = payload["tool_name"], payload["tool_input"]
        assert set(given) <= CLAUDE_KEYS[name], (name, given)
        assert payload["hook_event_name"] == "PreToolUse"
        assert payload["tool_use_id"].startswith("toolu_")
        assert payload["session_id"] == "s-hooks" and payload["cwd"] == str(ws)
        assert payload["permission_mode"] == "default"
        assert payload["transcript_path"] == str(tmp_path / "state" / "transcript.jsonl")
    assert by_name["Bash"]["tool_input"] == {"command": "echo hi", "timeout": 5000,
                                             "run_in_background": False}
    assert by_name["Write"]["tool_input"] == {"file_path": str(ws / "src" / "new.py"),
                                              "content": "x = 1\n"}
    assert by_name["Edit"]["tool_input"]["file_path"] == str(ws / "src" / "old.py")
    assert by_name["Read"]["tool_input"]["file_path"] == str(ws / "README.md")  # normalized
    assert by_name["Grep"]["tool_input"]["-C"] == 2
    # Nothing ran: every call was blocked, and the model was told so.
    results = tool_results(fake_api.requests[1])
    assert len(results) == len(CALLS) and all("seen" in r["content"] for r in results)
    assert not (ws / "src" / "new.py").exists()
    await run.close()


async def test_post_tool_use_gets_tool_response_in_claude_codes_shape(
    fake_api, tmp_path, monkeypatch,
):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    hook = hook_script(tmp_path / "hooks", "log", LOG_AND_BLOCK)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PostToolUse": [
        {"matcher": "Write|Edit|Read|Bash", "hooks": [{"type": "command", "command": hook}]}]})
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("write_file", {"path": "a.txt", "content": "one\n"}),
                     Reply.tool_use("edit_file", {"path": "a.txt", "old_string": "one",
                                                  "new_string": "two"}),
                     Reply.tool_use("read_file", {"path": "a.txt"}),
                     Reply.tool_use("bash", {"command": "echo out; echo err >&2"}),
                     Reply.text("ok"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    write, edit, read, bash = logged(tmp_path)
    path = str(ws / "a.txt")
    assert write["tool_name"] == "Write" and write["hook_event_name"] == "PostToolUse"
    assert write["tool_response"]["filePath"] == path and write["tool_response"]["success"] is True
    assert write["tool_response"]["content"] == "one\n" and write["tool_response"]["type"] == "create"
    assert edit["tool_response"]["filePath"] == path
    assert (edit["tool_response"]["oldString"], edit["tool_response"]["newString"]) == ("one", "two")
    assert read["tool_response"]["file"]["filePath"] == path
    assert "two" in read["tool_response"]["file"]["content"]
    response = bash["tool_response"]
    assert "out" in response["stdout"] and response["interrupted"] is False
    assert set(response) >= {"stdout", "stderr", "interrupted"}
    await run.close()


async def test_updated_input_changes_the_call_before_it_runs(fake_api, tmp_path):
    rewrite = hook_script(tmp_path / "hooks", "dry_run", """
        given = json.load(sys.stdin)
        command = given["tool_input"]["command"]
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "updatedInput": {"command": command.replace("deploy", "echo dry-run >", 1)}}}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": rewrite}]}]})
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "deploy prod.txt"}), Reply.text("ok"))
    run.submit(UserMessage(text="deploy"))
    await run.idle()
    assert (ws / "prod.txt").read_text() == "dry-run\n"  # the hook's command ran, not the model's
    assert any("changed the input of Bash: command" in n.text for n in run.rec.of("notice"))
    await run.close()


async def test_updated_input_that_is_not_valid_never_runs(fake_api, tmp_path):
    breaks = hook_script(tmp_path / "hooks", "breaks", """
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "updatedInput": {"command": 42}}}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": breaks}]}]})
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch ran"}), Reply.text("ok"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert not (ws / "ran").exists()
    [result] = tool_results(fake_api.requests[1])
    assert "changed its input into one that is not valid" in result["content"]
    await run.close()


async def test_permission_mode_is_given_in_claude_codes_words_as_it_is_now(
    fake_api, tmp_path, monkeypatch,
):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    hook = hook_script(tmp_path / "hooks", "log", LOG_AND_BLOCK)
    mode = ["accept-edits"]
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": hook}]}]}, permission_mode=lambda: mode[0])
    run, _ = start(fake_api, tmp_path, hooks)
    for ours in ("accept-edits", "plan", "auto", "ask", "dont-ask"):
        mode[0] = ours
        fake_api.enqueue(Reply.text("ok"))
        run.submit(UserMessage(text=ours))
        await run.idle()
    assert [p["permission_mode"] for p in logged(tmp_path)] == [
        "acceptEdits", "plan", "bypassPermissions", "default", "dontAsk"]
    await run.close()


@pytest.mark.parametrize(("matcher", "tool", "matches"), [
    ("Bash", "bash", True), ("bash", "bash", True), ("Bash", "read_file", False),
    ("Edit|Write", "write_file", True), ("Edit|Write", "edit_file", True),
    ("Edit|Write", "read_file", False), ("read_file", "read_file", True),
    ("Agent", "task", True), ("Task", "task", True),
    ("mcp__memory__.*", "mcp__memory__create_entities", True),
    ("mcp__memory__.*", "mcp__github__create_issue", False),
    ("mcp__memory", "mcp__memory__create_entities", False),  # exact, as in Claude Code
    ("Notebook.*", "bash", False), ("^Web", "web_fetch", True),
    ("*", "todo_write", True), ("", "glob", True),
])
async def test_matchers_take_claude_codes_names_and_ours(matcher, tool, matches):
    assert Matcher.parse(matcher).matches(tool) is matches


async def test_hooks_see_the_project_dir_and_only_session_start_the_env_file(
    fake_api, tmp_path, monkeypatch,
):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    env_hook = hook_script(tmp_path / "hooks", "env", """
        event = json.load(sys.stdin)["hook_event_name"]
        if event == "SessionStart":
            time.sleep(0.5)  # slow: the prompt's hooks must still come after it
        with open(os.environ["HOOK_LOG"], "a") as log:
            log.write(json.dumps({"event": event, **{k: os.environ.get(k) for k in
                                  ("CLAUDE_PROJECT_DIR", "CLAUDE_ENV_FILE")}}) + "\\n")
    """)
    group = [{"hooks": [{"type": "command", "command": env_hook}]}]
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"SessionStart": group,
                                                     "UserPromptSubmit": group})
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("ok"))
    run.submit(UserMessage(text="hi"))
    await run.idle()
    start_env, prompt_env = logged(tmp_path)  # in Claude Code's order
    assert (start_env["event"], prompt_env["event"]) == ("SessionStart", "UserPromptSubmit")
    assert start_env["CLAUDE_PROJECT_DIR"] == prompt_env["CLAUDE_PROJECT_DIR"] == str(ws)
    assert start_env["CLAUDE_ENV_FILE"] and prompt_env["CLAUDE_ENV_FILE"] is None
    assert not os.path.exists(start_env["CLAUDE_ENV_FILE"])  # gone once read
    await run.close()


async def test_continue_false_before_a_call_blocks_it_and_tells_you_not_the_model(fake_api, tmp_path):
    halt = hook_script(tmp_path / "hooks", "halt", """
        json.load(sys.stdin)
        print(json.dumps({"continue": False, "stopReason": "freeze until Monday"}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": halt}]}]})
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch ran"}), Reply.text("never asked"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert not (ws / "ran").exists() and len(fake_api.requests) == 1
    assert any("freeze until Monday" in n.text for n in run.rec.of("notice"))
    fake_api.enqueue(Reply.text("ok"))
    run.submit(UserMessage(text="and now?"))
    await run.idle()
    [result] = tool_results(fake_api.requests[1])
    assert "freeze until Monday" not in result["content"] and "stopped" in result["content"]
    await run.close()


async def test_the_coming_from_claude_code_example_guards_as_documented(fake_api, tmp_path):
    import re
    import shlex
    import sys

    page = (Path(__file__).parent.parent / "docs" / "claude-code.md").read_text()
    page = page[page.index("\n## Hooks"):]
    page = page[:page.index("\n## ", 1)]
    [code] = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    [config] = re.findall(r"```json\n(.*?)```", page, flags=re.S)
    guard = tmp_path / "guard.py"
    guard.write_text(code)
    hooks = json.loads(config.replace("python3 ~/.claude/hooks/guard.py",
                                      f"{shlex.quote(sys.executable)} {shlex.quote(str(guard))}"))
    run, ws = start(fake_api, tmp_path, command_hooks(tmp_path, tmp_path / "ws", hooks["hooks"]))
    (ws / ".env").write_text("TOKEN=secret\n")
    (ws / "keep").mkdir()
    fake_api.enqueue(Reply.tool_uses([("bash", {"command": "rm -rf keep"}),
                                      ("read_file", {"path": ".env"}),
                                      ("bash", {"command": "echo fine"})]),
                     Reply.text("ok"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    blocked, secret, fine = tool_results(fake_api.requests[1])
    assert (ws / "keep").is_dir() and "rm -rf is not allowed" in blocked["content"]
    assert "holds secrets" in secret["content"] and "TOKEN=secret" not in secret["content"]
    assert "fine" in fine["content"] and not fine.get("is_error")
    await run.close()


async def test_claude_code_answers_not_acted_on_are_named_and_suppress_output_is_quiet(
    fake_api, tmp_path,
):
    answer = hook_script(tmp_path / "hooks", "answer", """
        json.load(sys.stdin)
        print(json.dumps({"suppressOutput": True, "hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionApplyRules": [{"pattern": "Bash(ls *)", "behavior": "allow"}]}}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": answer}]}]})
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch ran"}), Reply.text("ok"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert (ws / "ran").exists()  # allowed
    said = [n.text for n in run.rec.of("notice") if "PreToolUse hook" in n.text]
    assert len(said) == 1 and "permissionApplyRules" in said[0] and "not support" in said[0]
    assert "suppressOutput" not in said[0]
    await run.close()
