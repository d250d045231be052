"""The hook events beyond the first six, on a real session (real SDK, the fake API,
real hook commands): ``StopFailure`` after an API error (as Claude Code 2.1.332 sends
it, ``fidelity_fixtures/claude_code_hooks.json``), ``PostCompact`` with the summary
saved, and agent-tui's own ``Interrupt`` after Esc: every tool call's end state and
the processes Esc ended, told after the turn is said ended."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.protocol import Compact, Interrupt, UserMessage
from tests.fake_api import Reply
from tests.hooks_support import LOG_INPUT, command_hooks, hook_script, logged, start, tool_results

pytestmark = pytest.mark.asyncio
SEEN = json.loads((Path(__file__).parent / "fidelity_fixtures" / "claude_code_hooks.json").read_text())



def _hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *events: str):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    log = hook_script(tmp_path / "hooks", "log", LOG_INPUT)
    return command_hooks(tmp_path, tmp_path / "ws", {
        e: [{"hooks": [{"type": "command", "command": log}]}] for e in events})


async def test_an_api_error_runs_stop_failure_hooks(fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, "StopFailure", "Stop")
    run, _ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.error(400, "invalid_request_error"))
    run.submit(UserMessage(text="hello"))
    await run.idle()
    await run.rec.wait_for(lambda: bool(logged(tmp_path / "hook.log")))
    [seen] = logged(tmp_path / "hook.log")  # no Stop: the model never stopped on its own
    assert seen["hook_event_name"] == "StopFailure" and seen["error"] == "invalid_request"
    assert seen["last_assistant_message"].startswith("API Error: ")  # as Claude Code words it
    assert "Invalid request" in seen["error_details"]
    assert {"session_id", "transcript_path", "cwd"} <= set(seen)
    assert run.rec.of("turn_ended")[-1].status == "failed"


async def test_post_compact_gets_the_summary_and_session_start_compact_adds_context(
        fake_api, tmp_path, monkeypatch):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    log = hook_script(tmp_path / "hooks", "log", LOG_INPUT)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {
        "PostCompact": [{"hooks": [{"type": "command", "command": log}]}],
        "SessionStart": [{"matcher": "compact", "hooks": [
            {"type": "command", "command": f"{log} && echo 'REMEMBER: the branch is main'"}]}]})
    run, _ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("first answer"), Reply.text("SUMMARY: the user said hello"),
                     Reply.text("next answer"))
    run.submit(UserMessage(text="hello"))
    await run.idle()
    run.submit(Compact(instructions=""))
    await run.rec.wait_for(lambda: len(logged(tmp_path / "hook.log")) == 2)
    start_again, post = logged(tmp_path / "hook.log")  # in Claude Code 2.1.332's order
    assert post["hook_event_name"] == "PostCompact" and post["trigger"] == "manual"
    assert "SUMMARY: the user said hello" in post["compact_summary"]
    assert start_again["hook_event_name"] == "SessionStart" and start_again["source"] == "compact"
    await run.idle()
    run.submit(UserMessage(text="go on"))
    await run.idle()
    assert "REMEMBER: the branch is main" in json.dumps(fake_api.requests[-1]["messages"])


async def test_interrupt_tells_each_calls_end_and_the_processes_esc_ended(
        fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, "Interrupt")
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_uses([("bash", {"command": "echo done > first"}),
                                      ("bash", {"command": "touch started; sleep 60"}),
                                      ("bash", {"command": "touch never"})]))
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(lambda: (ws / "started").exists())
    run.submit(Interrupt())
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    await run.rec.wait_for(lambda: bool(logged(tmp_path / "hook.log")))
    [seen] = logged(tmp_path / "hook.log")
    assert seen["hook_event_name"] == "Interrupt"
    states = [(c["tool_name"], c["state"]) for c in seen["tool_calls"]]
    assert states == [("Bash", "succeeded"), ("Bash", "cancelled_while_running"),
                      ("Bash", "cancelled_before_start")]
    [ended] = seen["processes_ended"]
    assert ended["tool_use_id"] == seen["tool_calls"][1]["tool_use_id"]
    assert ended["signal"] in ("SIGTERM", "SIGKILL")
    assert seen["processes_left"] == []
    assert not (ws / "never").exists()


ANSWER = """
    given = json.load(sys.stdin)
    with open(os.environ["HOOK_LOG"], "a") as log:
        log.write(json.dumps(given) + "\\n")
    if given["hook_event_name"] == "PermissionRequest":
        ok = given["tool_input"]["command"].startswith("echo")
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
              "decision": {"behavior": "allow"} if ok else
                          {"behavior": "deny", "message": "only echo, please"}}}))
"""


async def test_permission_request_answers_for_the_user_and_never_lifts_a_deny_rule(
        fake_api, tmp_path, monkeypatch):
    from agent_tui.permissions import PermissionRules, Permissions
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    answer = hook_script(tmp_path / "hooks", "answer", ANSWER)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {
        e: [{"matcher": "Bash", "hooks": [{"type": "command", "command": answer}]}]
        for e in ("PermissionRequest", "PermissionDenied")})
    (tmp_path / "ws").mkdir()
    policy = Permissions(tmp_path / "ws", "ask", PermissionRules(deny=["Bash(echo secret*)"]),
                         non_interactive=True)  # print mode: no one to ask
    run, ws = start(fake_api, tmp_path, hooks, policy=policy)
    fake_api.enqueue(Reply.tool_uses([("bash", {"command": "echo hi > said"}),
                                      ("bash", {"command": "touch other"}),
                                      ("bash", {"command": "echo secret > leak"})]),
                     Reply.text("done"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    seen_cc = SEEN["PermissionRequest_answers_in_print_mode"]["calls"]
    assert seen_cc["echo hi > said"] == "ran" and "denied" in seen_cc["echo secret > leak"]
    assert (ws / "said").exists()  # allowed by the hook, where print mode would deny
    assert not (ws / "other").exists() and not (ws / "leak").exists()
    seen = [(p["hook_event_name"], p["tool_input"]["command"]) for p in logged(tmp_path / "hook.log")]
    assert seen == [("PermissionRequest", "echo hi > said"), ("PermissionRequest", "touch other"),
                    ("PermissionDenied", "echo secret > leak")]  # the deny rule is never asked
    results = {str(r["content"]) for r in tool_results(fake_api.requests[-1])}
    assert any("only echo, please" in r for r in results)
    denied = [p for p in logged(tmp_path / "hook.log") if p["hook_event_name"] == "PermissionDenied"]
    assert "Bash(echo secret*)" in denied[0]["reason"]



async def test_a_permission_prompt_notifies_beside_it(fake_api, tmp_path, monkeypatch):
    from agent_tui.permissions import Permissions
    hooks = _hooks(tmp_path, monkeypatch, "Notification")
    (tmp_path / "ws").mkdir()
    run, ws = start(fake_api, tmp_path, hooks, policy=Permissions(tmp_path / "ws", "ask"))
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch asked"}))
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(lambda: bool(logged(tmp_path / "hook.log")))
    [seen] = logged(tmp_path / "hook.log")
    assert seen["notification_type"] == "permission_prompt"
    assert seen["message"] == "agent-tui needs your permission to use Bash"
    assert run.rec.tool_states(name="bash")[-1] == "awaiting_approval"  # the prompt is up
    run.submit(Interrupt())
    await run.idle()
    assert not (ws / "asked").exists()


async def test_a_projects_permission_request_hook_may_deny_but_never_allow(
        fake_api, tmp_path, monkeypatch):
    from agent_tui.permissions import Permissions
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    answer = hook_script(tmp_path / "hooks", "answer", ANSWER)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PermissionRequest": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": answer}]}]})
    hooks.commands = [h.model_copy(update={"project": True}) for h in hooks.commands]
    (tmp_path / "ws").mkdir()
    run, ws = start(fake_api, tmp_path, hooks,
                    policy=Permissions(tmp_path / "ws", "ask", non_interactive=True))
    fake_api.enqueue(Reply.tool_use("bash", {"command": "echo hi > said"}), Reply.text("done"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert len(logged(tmp_path / "hook.log")) == 1  # it ran, and said allow
    assert not (ws / "said").exists()  # print mode's deny stands
    assert any("cannot allow a call" in n.text for n in run.rec.of("notice"))


SETUP_HOOK = LOG_INPUT + """
    if given["hook_event_name"] == "Setup":
        with open(os.environ["CLAUDE_ENV_FILE"], "a") as env:
            env.write("export BUILT_BY=setup\\n")
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "Setup",
                                                 "additionalContext": "deps installed"}}))
"""


def _setup_run(fake_api, tmp_path: Path, *args: str):
    from tests.forked_runs import run_agent
    from tests.hooks_support import settings_file
    from tests.print_agent import env_for

    log = hook_script(tmp_path / "hooks", "setup", SETUP_HOOK)
    group = [{"hooks": [{"type": "command", "command": log}]}]
    settings = settings_file(tmp_path / "s.json", {
        "Setup": [{"matcher": "init", **group[0]}, {"matcher": "maintenance", **group[0]}],
        "SessionStart": group})
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = env_for(tmp_path, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=fake_api.url,
                  HOOK_LOG=str(tmp_path / "hook.log"), HOME=str(tmp_path / "home-dir"),
                  XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    return run_agent(["--cwd", str(ws), "--settings", str(settings), *args], env=env, timeout=90)


async def test_init_only_runs_setup_then_session_start_and_ends_without_a_request(
        fake_api, tmp_path):
    out = _setup_run(fake_api, tmp_path, "--init-only")
    assert out.returncode == 0, out.stderr
    seen = logged(tmp_path / "hook.log")
    assert [(s["hook_event_name"], s.get("trigger") or s.get("source")) for s in seen] == [
        ("Setup", "init"), ("SessionStart", "startup")]  # Claude Code's order and words
    assert {"session_id", "transcript_path", "cwd"} <= set(seen[0])
    assert fake_api.requests == []


async def test_maintenance_runs_its_setup_hooks_whose_context_and_env_reach_the_session(
        fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("bash", {"command": "echo built=$BUILT_BY"}),
                     Reply.text("done"))
    out = _setup_run(fake_api, tmp_path, "--maintenance", "-p", "go",
                     "--permission-mode", "auto")
    assert out.returncode == 0, out.stderr
    seen = logged(tmp_path / "hook.log")
    assert [s.get("trigger") for s in seen if s["hook_event_name"] == "Setup"] == ["maintenance"]
    assert "deps installed" in json.dumps(fake_api.requests[0]["messages"])
    assert "built=setup" in json.dumps(tool_results(fake_api.requests[1]))


async def test_an_idle_wait_after_an_answer_notifies_once_and_a_message_disarms_it(
        fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, "Notification")
    run, _ws = start(fake_api, tmp_path, hooks)
    run.session.idle.after_s = 1.0  # the TUI's is 60 s, as Claude Code's
    # the third answer takes 2 s: a reminder left armed by the second wait would fire in it
    fake_api.enqueue(Reply.text("one"), Reply.text("two"),
                     Reply.text("three", chunk=1, delay_between_events=0.2))
    run.submit(UserMessage(text="first"))
    await run.rec.wait_for(lambda: len(logged(tmp_path / "hook.log")) == 1)
    [seen] = logged(tmp_path / "hook.log")
    assert seen["notification_type"] == "idle_prompt"
    assert seen["message"] == "agent-tui is waiting for your input"
    run.submit(UserMessage(text="second"))
    await run.rec.wait_for(lambda: len(run.rec.of("turn_ended")) == 2)
    run.submit(UserMessage(text="third"))  # written before the wait ran out: no reminder
    await run.rec.wait_for(lambda: len(run.rec.of("turn_ended")) == 3)
    assert len(logged(tmp_path / "hook.log")) == 1
    await run.rec.wait_for(lambda: len(logged(tmp_path / "hook.log")) == 2)
    await run.idle()
    assert [s["notification_type"] for s in logged(tmp_path / "hook.log")] == ["idle_prompt"] * 2
