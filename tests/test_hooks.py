"""Hooks with real hook scripts, through a real session, the real SDK and the fake API:
PreToolUse blocks (exit 2, JSON), allows and asks; Esc and timeouts end a hook's
process; PostToolUse feedback and a formatter that rewind still sees; Stop asks the
agent to go on; UserPromptSubmit and SessionStart."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import psutil
import pytest

from agent_tui.cancel import CancelScope
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.journal.journal import Journal
from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.calls.tool import ToolSet
from agent_tui.permissions import Permissions
from agent_tui.protocol import (
    Decide,
    Decision,
    HookDecision,
    HookEnding,
    HookEvent,
    Interrupt,
    PlanRewind,
    RestoreWhat,
    Rewind,
    UserMessage,
)
from tests.fake_api import Reply
from tests.harness import Recorder, plain
from tests.hooks_support import command_hooks, hook_records, hook_script, start, texts, tool_results
from tests.harness import route

pytestmark = pytest.mark.asyncio

# A PreToolUse guard: reads the call from stdin, answers as told by its argument.
GUARD = """
    call = json.load(sys.stdin)
    with open(os.environ["HOOK_LOG"], "a") as log:
        log.write(json.dumps(call) + "\\n")
    mode = sys.argv[1]
    if "rm -rf" not in call["tool_input"].get("command", ""):
        sys.exit(0)
    if mode == "exit2":
        print("no rm -rf in this repository", file=sys.stderr)
        sys.exit(2)
    if mode == "json-deny":
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "rm -rf is refused by policy"}}))
    if mode == "json-block":
        print(json.dumps({"decision": "block", "reason": "legacy block: no rm -rf"}))
"""


def pre_tool(command: str, matcher: str = "Bash", **extra) -> dict:
    return {"PreToolUse": [{"matcher": matcher, "hooks": [
        {"type": "command", "command": command, **extra}]}]}


@pytest.mark.parametrize(("mode", "said"), [
    ("exit2", "no rm -rf in this repository"),
    ("json-deny", "rm -rf is refused by policy"),
    ("json-block", "legacy block: no rm -rf"),
])
async def test_a_pre_tool_use_hook_blocks_the_call_and_the_model_is_told_why(
    fake_api, tmp_path, monkeypatch, mode, said,
):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    guard = hook_script(tmp_path / "hooks", "guard", GUARD)
    hooks = command_hooks(tmp_path, tmp_path / "ws", pre_tool(f"{guard} {mode}"))
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "rm -rf build; touch ran"}),
                     Reply.text("understood"))
    run.submit(UserMessage(text="clean up"))
    await run.idle()
    assert not (ws / "ran").exists()
    assert run.rec.tool_states(name="bash")[-1] == "denied"
    result = tool_results(fake_api.requests[1])[0]
    assert result["is_error"] and said in result["content"], result
    assert "PreToolUse hook" in result["content"]
    # What the hook saw: Claude Code's input fields.
    seen = json.loads((tmp_path / "hook.log").read_text().splitlines()[0])
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "Bash"
    assert seen["tool_input"]["command"] == "rm -rf build; touch ran"
    assert seen["session_id"] == "s-hooks" and seen["cwd"] == str(ws)
    assert seen["transcript_path"] == str(run.journal.path.parent / "transcript.jsonl")
    assert seen["permission_mode"] == "default"
    [record] = hook_records(run)
    assert record.decision is HookDecision.BLOCK and record.ending is HookEnding.EXITED
    assert record.exit_code == (2 if mode == "exit2" else 0) and record.command == f"{guard} {mode}"
    await run.close()


async def test_a_hook_that_allows_skips_the_permission_question(fake_api, tmp_path):
    allow = hook_script(tmp_path / "hooks", "allow", """
        json.load(sys.stdin)
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
              "permissionDecision": "allow", "permissionDecisionReason": "tests are fine"}}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", pre_tool(allow))
    ws = tmp_path / "ws"
    ws.mkdir()
    run, _ = start(fake_api, tmp_path, hooks, policy=Permissions(ws, "ask"))
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch ran"}), Reply.text("done"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert (ws / "ran").exists()
    assert run.rec.of("permission_requested") == []
    assert run.rec.tool_states(name="bash")[-1] == "succeeded"
    [permission] = [r for r in run.journal.records if r.kind == "permission"]
    assert permission.decided_by == "hook" and permission.reason == "tests are fine"
    await run.close()


async def test_a_hook_that_asks_makes_an_allowed_call_wait_for_the_user(fake_api, tmp_path):
    ask = hook_script(tmp_path / "hooks", "ask", """
        json.load(sys.stdin)
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
              "permissionDecision": "ask", "permissionDecisionReason": "pushes need a look"}}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", pre_tool(ask))
    run, ws = start(fake_api, tmp_path, hooks)  # the policy alone would allow it
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch ran"}), Reply.text("done"))
    run.submit(UserMessage(text="go"))
    await run.rec.wait_type("permission_requested")
    request = run.rec.of("permission_requested")[0]
    assert request.reason == "pushes need a look" and not (ws / "ran").exists()
    run.submit(Decide(tool_use_id=request.tool_use_id, decision=Decision.ALLOW_ONCE))
    await run.idle()
    assert (ws / "ran").exists()
    await run.close()


async def test_in_print_mode_a_hook_that_asks_blocks_since_no_one_can_answer(fake_api, tmp_path):
    ask = hook_script(tmp_path / "hooks", "ask", """
        print(json.dumps({"hookSpecificOutput": {"permissionDecision": "ask"}}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", pre_tool(ask), interactive=False)
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch ran"}), Reply.text("ok"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert not (ws / "ran").exists()
    assert "no one to ask" in tool_results(fake_api.requests[1])[0]["content"]
    await run.close()


async def test_esc_while_a_slow_pre_tool_use_hook_runs_ends_it_and_the_call_never_runs(
    fake_api, tmp_path,
):
    slow = hook_script(tmp_path / "hooks", "slow", f"""
        import subprocess
        child = subprocess.Popen(["sleep", "60"])
        with open({str(tmp_path / "pids")!r}, "w") as fh:
            fh.write(f"{{os.getpid()}} {{child.pid}}")
        child.wait()
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", pre_tool(slow, matcher="*"))
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch ran"}))
    run.submit(UserMessage(text="go"))
    pids = tmp_path / "pids"
    await run.rec.wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2)
    # The tools pane is told a hook is checking the queued call.
    checking = run.rec.of("hook")[0]
    assert checking.state == "running" and checking.event is HookEvent.PRE_TOOL_USE
    assert checking.tool_use_id == run.rec.of("tool_state")[-1].tool_use_id
    assert run.rec.tool_states(name="bash")[-1] == "queued"
    run.submit(Interrupt())
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    assert run.rec.tool_states(name="bash")[-1] == "cancelled_before_start"
    assert not (ws / "ran").exists()
    for pid in map(int, pids.read_text().split()):
        assert not _alive(pid), f"hook process {pid} still running"
    [record] = hook_records(run)
    assert record.ending is HookEnding.CANCELLED
    assert run.rec.of("hook")[-1].state == "ended"
    await run.close()


@pytest.mark.parametrize("on_failure", [None, "continue"])
async def test_a_hook_that_times_out_is_killed_and_treated_as_configured(
    fake_api, tmp_path, on_failure,
):
    stuck = hook_script(tmp_path / "hooks", "stuck", f"""
        with open({str(tmp_path / "pid")!r}, "w") as fh:
            fh.write(str(os.getpid()))
        time.sleep(60)
    """)
    extra = {"timeout": 0.5} | ({"onFailure": on_failure} if on_failure else {})
    hooks = command_hooks(tmp_path, tmp_path / "ws", pre_tool(stuck, **extra))
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch ran"}), Reply.text("ok"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert not _alive(int((tmp_path / "pid").read_text()))
    [record] = hook_records(run)
    assert record.ending is HookEnding.TIMED_OUT
    notices = [n.text for n in run.rec.of("notice")]
    assert any("timed out after 0.5 s" in n for n in notices), notices
    if on_failure is None:  # default: a gate that cannot answer blocks
        assert not (ws / "ran").exists()
        result = tool_results(fake_api.requests[1])[0]["content"]
        assert "timed out after 0.5 s" in result and "treated as a block" in result
    else:
        assert (ws / "ran").exists()
    await run.close()


async def test_a_post_tool_use_formatter_rewrites_the_file_and_rewind_still_restores_it(
    fake_api, tmp_path,
):
    formatter = hook_script(tmp_path / "hooks", "fmt", """
        call = json.load(sys.stdin)
        path = call["tool_input"]["file_path"]  # Claude Code's field, absolute
        with open(path) as fh:
            text = fh.read()
        with open(path, "w") as fh:
            fh.write(text.replace("  ", " ").rstrip() + "\\n# formatted\\n")
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
              "additionalContext": "formatted " + os.path.basename(path)}}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PostToolUse": [
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": formatter}]}]})
    run, ws = start(fake_api, tmp_path, hooks, checkpoints=True)
    fake_api.enqueue(Reply.tool_use("write_file", {"path": "a.py", "content": "x  =  1"}),
                     Reply.text("written"))
    run.submit(UserMessage(text="write a.py"))
    await run.idle()
    assert (ws / "a.py").read_text() == "x = 1\n# formatted\n"
    last_user = plain(fake_api.requests[1]["messages"])[-1]
    assert "[PostToolUse hook] formatted a.py" in texts(last_user)
    assert last_user["content"][0]["type"] == "tool_result"  # the note comes after it
    run.submit(PlanRewind(checkpoint_id="t1"))
    await run.rec.wait_type("rewind_plan")
    plan = run.rec.of("rewind_plan")[-1]
    assert [(c.path, c.kind, c.conflict) for c in plan.changes] == [("a.py", "deleted", False)]
    run.submit(Rewind(checkpoint_id="t1", restore=RestoreWhat.CODE))
    await run.rec.wait_type("rewound")
    rewound = run.rec.of("rewound")[-1]
    assert rewound.skipped_conflicts == [] and rewound.errors == [], rewound
    assert not (ws / "a.py").exists()
    await run.close()


async def test_post_tool_use_exit_2_tells_the_model_after_the_result(fake_api, tmp_path):
    lint = hook_script(tmp_path / "hooks", "lint", """
        json.load(sys.stdin)
        print("lint: line 1 is too long", file=sys.stderr)
        sys.exit(2)
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PostToolUse": [
        {"hooks": [{"type": "command", "command": lint}]}]})
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "echo hi"}), Reply.text("ok"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert run.rec.tool_states(name="bash")[-1] == "succeeded"  # it ran: the hook came after
    assert "[PostToolUse hook] lint: line 1 is too long" in texts(plain(fake_api.requests[1]["messages"])[-1])
    await run.close()


async def test_a_stop_hook_asks_the_agent_to_go_on_once(fake_api, tmp_path):
    gate = hook_script(tmp_path / "hooks", "gate", f"""
        given = json.load(sys.stdin)
        with open({str(tmp_path / "stops")!r}, "a") as fh:
            fh.write(json.dumps(given) + "\\n")
        if not given["stop_hook_active"]:
            print(json.dumps({{"decision": "block", "reason": "run the tests before you stop"}}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"Stop": [
        {"hooks": [{"type": "command", "command": gate}]}]})
    run, _ = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("all done"), Reply.text("tests pass, done"))
    run.submit(UserMessage(text="fix it"))
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "completed"
    assert len(fake_api.requests) == 2
    messages = plain(fake_api.requests[1]["messages"])
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert texts(messages[-1]) == ["[Stop hook] run the tests before you stop"]
    seen = [json.loads(line) for line in (tmp_path / "stops").read_text().splitlines()]
    assert [s["stop_hook_active"] for s in seen] == [False, True]
    assert all(s["hook_event_name"] == "Stop" for s in seen)
    await run.close()


async def test_a_stop_hook_that_always_blocks_is_obeyed_at_most_n_times(fake_api, tmp_path):
    nag = hook_script(tmp_path / "hooks", "nag", """
        print(json.dumps({"decision": "block", "reason": "keep going"}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"Stop": [
        {"hooks": [{"type": "command", "command": nag}]}]}, max_stop_continues=2)
    run, _ = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("one"), Reply.text("two"), Reply.text("three"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert len(fake_api.requests) == 3
    assert run.rec.of("turn_ended")[-1].status == "completed"
    assert any("go on 2 time(s) in a row" in n.text for n in run.rec.of("notice"))
    await run.close()


async def test_a_user_prompt_submit_hook_blocks_a_prompt_the_model_never_sees(fake_api, tmp_path):
    screen = hook_script(tmp_path / "hooks", "screen", """
        given = json.load(sys.stdin)
        if "secret" in given["prompt"]:
            print("prompts may not mention the secret", file=sys.stderr)
            sys.exit(2)
        print("Today is the test day.")  # plain stdout: context for the model
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": screen}]}]})
    run, _ = start(fake_api, tmp_path, hooks)
    run.submit(UserMessage(text="tell me the secret"))
    await run.idle()
    ended = run.rec.of("turn_ended")[-1]
    assert ended.status == "failed" and "prompts may not mention the secret" in ended.detail
    assert fake_api.requests == []
    fake_api.enqueue(Reply.text("hello"))
    run.submit(UserMessage(text="hello"))
    await run.idle()
    assert plain(fake_api.requests[0]["messages"]) == [{"role": "user", "content": [
        {"type": "text", "text": "hello"},
        {"type": "text", "text": "[UserPromptSubmit hook] Today is the test day."},
    ]}]
    await run.close()


async def test_a_session_start_hook_gives_the_first_request_context(fake_api, tmp_path):
    hello = hook_script(tmp_path / "hooks", "hello", """
        given = json.load(sys.stdin)
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
              "additionalContext": "started by " + given["source"]}}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"SessionStart": [
        {"matcher": "startup", "hooks": [{"type": "command", "command": hello}]}]})
    run, _ = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("hi"))
    run.submit(UserMessage(text="hi"))
    await run.idle()
    assert "[SessionStart hook] started by startup" in texts(plain(fake_api.requests[0]["messages"])[0])
    await run.close()


async def test_continue_false_from_a_post_tool_use_hook_ends_the_turn(fake_api, tmp_path):
    halt = hook_script(tmp_path / "hooks", "halt", """
        print(json.dumps({"continue": False, "stopReason": "deploy window closed"}))
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PostToolUse": [
        {"matcher": "bash", "hooks": [{"type": "command", "command": halt}]}]})
    run, _ = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "echo hi"}), Reply.text("never asked"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert len(fake_api.requests) == 1  # no model call after the batch
    assert run.rec.of("turn_ended")[-1].status == "completed"
    assert any("deploy window closed" in n.text for n in run.rec.of("notice"))
    # The next turn is still well formed for the API.
    fake_api.enqueue(Reply.text("ok"))
    run.submit(UserMessage(text="and now?"))
    await run.idle()
    assert fake_api.rejections == []
    await run.close()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _doc_blocks(kind: str) -> list[str]:
    text = (Path(__file__).parent.parent / "docs" / "hooks.md").read_text()
    return re.findall(rf"```{kind}\n(.*?)```", text, flags=re.S)


async def test_the_documented_examples_load_and_the_guard_blocks_a_push_to_main(
    fake_api, tmp_path,
):
    examples = [json.loads(block) for block in _doc_blocks("json") if '"hooks"' in block]
    assert len(examples) >= 6
    for example in examples:  # every example is well formed here
        command_hooks(tmp_path, tmp_path / "ws", example["hooks"])
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (the documented scripts use it)")
    guard = tmp_path / "ws" / "scripts" / "hooks" / "guard.sh"
    guard.parent.mkdir(parents=True)
    guard.write_text(next(b for b in _doc_blocks("bash") if "rm -rf" in b))
    guard.chmod(0o755)
    config = next(e for e in examples if "guard.sh" in json.dumps(e))
    run, ws = start(fake_api, tmp_path, command_hooks(tmp_path, tmp_path / "ws", config["hooks"]))
    fake_api.enqueue(Reply.tool_use("bash", {"command": "git push origin main && touch ran"}),
                     Reply.text("ok"))
    run.submit(UserMessage(text="ship it"))
    await run.idle()
    assert not (ws / "ran").exists()
    assert "Blocked: 'git push origin main && touch ran' is not allowed here" in (
        tool_results(fake_api.requests[1])[0]["content"])
    await run.close()


async def test_a_sub_agents_tool_calls_pass_through_the_same_hooks(fake_api, tmp_path, monkeypatch):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    guard = hook_script(tmp_path / "hooks", "guard", GUARD)
    hooks = command_hooks(tmp_path, tmp_path / "ws", pre_tool(f"{guard} exit2"))
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(*[route({
        ("go", 0): Reply.tool_use("task", {"description": "clean", "prompt": "clean up"},
                                  id="toolu_task"),
        ("clean up", 0): Reply.tool_use("bash", {"command": "rm -rf x; touch ran"},
                                        id="toolu_child"),
    }) for _ in range(4)])
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert not (ws / "ran").exists()
    child = [e for e in run.rec.of("tool_state") if e.tool_use_id == "toolu_child"]
    assert child[-1].state == "denied"
    [checked] = [e for e in run.rec.of("hook") if e.state == "ended"]
    assert checked.tool_use_id == "toolu_child" and checked.parent_tool_use_id == "toolu_task"
    await run.close()


async def test_hook_records_are_durable_journal_records(fake_api, tmp_path):
    lint = hook_script(tmp_path / "hooks", "lint", """
        print("looks fine", file=sys.stderr)
        sys.exit(1)
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PostToolUse": [
        {"hooks": [{"type": "command", "command": lint}]}]})
    run, _ = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "true"}), Reply.text("ok"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    await run.close()
    [record] = [r for r in Journal.load(run.journal.path).records if r.kind == "hook"]
    assert record.event is HookEvent.POST_TOOL_USE and record.exit_code == 1
    assert record.decision is HookDecision.NONE and record.context == ""  # a failed hook: no note
    assert record.source.startswith(str(tmp_path / "hook-settings.json") + ":")
    assert any("failed (exit code 1): looks fine" in n.text for n in run.rec.of("notice"))


async def test_pre_compact_hooks_answer_the_compaction(tmp_path):
    refuse = hook_script(tmp_path / "hooks", "refuse", f"""
        given = json.load(sys.stdin)
        with open({str(tmp_path / "seen")!r}, "w") as fh:
            json.dump(given, fh)
        print("keep the full history during the release", file=sys.stderr)
        sys.exit(2)
    """)
    ws = tmp_path / "ws"
    ws.mkdir()
    hooks = command_hooks(tmp_path, ws, {"PreCompact": [
        {"matcher": "auto", "hooks": [{"type": "command", "command": refuse}]}]})
    rec, journal = Recorder(), Journal()
    deps = SessionDeps(config=AgentConfig(workspace=ws, model="m"), provider=None,  # type: ignore[arg-type]
                       tools=ToolSet(), policy=AllowAll(), journal=journal, emit=rec, hooks=hooks)
    points = HookPoints(deps, CancelScope(), journal.append)
    assert (await points.pre_compact("manual")).decision is HookDecision.NONE  # no match
    answer = await points.pre_compact("auto", "keep the API notes")
    assert answer.decision is HookDecision.BLOCK
    assert answer.reason == "keep the full history during the release"
    seen = json.loads((tmp_path / "seen").read_text())
    assert (seen["trigger"], seen["custom_instructions"]) == ("auto", "keep the API notes")
    assert [r.event for r in journal.records if r.kind == "hook"] == [HookEvent.PRE_COMPACT]
