"""Claude Code's later hook events on a real session (real SDK, the fake API, real hook
processes), with the input shapes Claude Code 2.1.332's schemas give:
``PreSkillShellCommand`` before a command's ``!`` lines, ``PostToolBatch`` once a
reply's calls all ended, ``PreModelSwitch``/``PostModelSwitch`` around ``/model``,
``InstructionsLoaded`` for the CLAUDE.md read at the start; and the Claude Code events
agent-tui does not run, each named as not supported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.commands.line import CommandLine
from agent_tui.commands.use import use_line
from agent_tui.core.commands.command_run import CommandRun, ShellStep
from agent_tui.hooks.config import OTHER_CLAUDE_EVENTS, parse_hooks
from agent_tui.protocol import SetModel, UserMessage
from agent_tui.settings.schema import HooksSource
from tests.fake_api import Reply
from tests.hooks_support import LOG_INPUT, command_hooks, hook_script, logged, start

pytestmark = pytest.mark.asyncio

#: A hook that logs its input, then says no when the input holds the text of the file
#: ``$HOOK_LOG.refuse`` (exit 2), else prints ``$HOOK_LOG.answer``.
LOG_THEN_REFUSE = LOG_INPUT + """
    def said(kind):
        path = os.environ["HOOK_LOG"] + "." + kind
        return open(path).read() if os.path.exists(path) else ""
    if said("refuse") and said("refuse") in json.dumps(given):
        print("not this one: " + said("refuse"), file=sys.stderr)
        sys.exit(2)
    print(said("answer"))
"""


def _say(tmp_path: Path, kind: str, text: str) -> None:
    (tmp_path / f"hook.log.{kind}").write_text(text)


def _hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, groups: dict[str, list[dict]]):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    log = hook_script(tmp_path / "hooks", "log", LOG_THEN_REFUSE)
    for event in groups.values():
        for group in event:
            group["hooks"] = [{"type": "command", "command": log}]
    return command_hooks(tmp_path, tmp_path / "ws", groups)


def _command(*lines: str) -> CommandRun:
    return CommandRun(name="check", steps=[ShellStep(command=line, where=f"check.md:{n}")
                                            for n, line in enumerate(lines, 3)],
                      compose=lambda outputs: "the lines said: " + "".join(outputs))


async def test_a_pre_skill_shell_command_hook_refuses_a_line_and_none_runs(
        fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, {"PreSkillShellCommand": [{"matcher": "Bash"}]})
    _say(tmp_path, "refuse", "touch second")
    run, ws = start(fake_api, tmp_path, hooks)
    run.session.run_command(_command("touch first", "touch second"))
    await run.rec.wait_for(lambda: any("not run" in n.text for n in run.rec.of("notice")))
    await run.idle()
    assert not (ws / "first").exists() and not (ws / "second").exists()  # all or none
    said = next(n.text for n in run.rec.of("notice") if "not run" in n.text)
    assert "check.md:4: !`touch second`: not this one: touch second" in said
    first, second = logged(tmp_path / "hook.log")
    assert first["hook_event_name"] == "PreSkillShellCommand"
    assert first["tool_name"] == "Bash" and first["tool_input"] == {"command": "touch first"}
    assert first["command_name"] == "check" and first["invoked_by"] == "user"
    assert first["tool_use_id"] != second["tool_use_id"]
    assert fake_api.requests == []  # nothing was sent
    await run.close()


async def test_pre_skill_shell_command_lets_lines_run_and_treats_a_changed_input_as_no(
        fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, {"PreSkillShellCommand": [{}]})
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("ok"))
    run.session.run_command(_command("echo hello"))
    await run.rec.wait_type("turn_started")
    await run.idle()
    assert run.rec.of("turn_started")[-1].text == "the lines said: hello\n"
    # updatedInput is never applied, and any value keeps the line from running
    _say(tmp_path, "answer", json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreSkillShellCommand", "updatedInput": {"command": "touch other"}}}))
    run.session.run_command(_command("touch mine"))
    await run.rec.wait_for(lambda: any("not run" in n.text for n in run.rec.of("notice")))
    assert not (ws / "mine").exists() and not (ws / "other").exists()
    _say(tmp_path, "answer", json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreSkillShellCommand", "permissionDecision": "defer"}}))
    run.session.run_command(_command("touch deferred"))
    await run.rec.wait_for(lambda: sum("not run" in n.text for n in run.rec.of("notice")) == 2)
    assert not (ws / "deferred").exists()
    await run.close()


async def test_post_tool_batch_sees_every_call_of_a_reply_once_and_its_context_reaches_the_model(
        fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, {"PostToolBatch": [{}]})
    _say(tmp_path, "answer", json.dumps({"hookSpecificOutput": {
        "hookEventName": "PostToolBatch", "additionalContext": "BATCH-NOTE: both ran"}}))
    run, _ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_uses([("bash", {"command": "echo one"}),
                                      ("bash", {"command": "echo two"})]), Reply.text("done"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    [seen] = logged(tmp_path / "hook.log")
    assert seen["hook_event_name"] == "PostToolBatch"
    calls = seen["tool_calls"]
    assert [c["tool_name"] for c in calls] == ["Bash", "Bash"]
    assert [c["tool_input"]["command"] for c in calls] == ["echo one", "echo two"]
    assert [c["tool_response"]["stdout"].strip() for c in calls] == ["one", "two"]
    assert all(c["tool_use_id"] for c in calls)
    assert json.dumps(fake_api.requests[-1]["messages"]).count("BATCH-NOTE: both ran") == 1
    await run.close()


async def test_a_post_tool_batch_block_ends_the_turn(fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, {"PostToolBatch": [{}]})
    _say(tmp_path, "refuse", "PostToolBatch")
    run, _ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "echo one"}))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert len(fake_api.requests) == 1  # the loop stopped after the batch
    assert len(logged(tmp_path / "hook.log")) == 1
    (tmp_path / "hook.log.refuse").unlink()
    _say(tmp_path, "answer", json.dumps({"continue": False, "stopReason": "enough for now"}))
    fake_api.enqueue(Reply.tool_use("bash", {"command": "echo two"}))
    run.submit(UserMessage(text="again"))  # "continue": false ends the turn as well
    await run.idle()
    assert len(fake_api.requests) == 2
    assert any("enough for now" in n.text for n in run.rec.of("notice"))
    await run.close()


async def test_model_switch_hooks_can_refuse_a_switch_and_tell_the_new_model(
        fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, {"PreModelSwitch": [{"matcher": "opus"}],
                                           "PostModelSwitch": [{}]})
    _say(tmp_path, "refuse", "claude-opus")
    run, _ws = start(fake_api, tmp_path, hooks)
    run.submit(SetModel(model="claude-opus-5-5"))
    await run.rec.wait_for(lambda: any("still using" in n.text for n in run.rec.of("notice")))
    said = next(n.text for n in run.rec.of("notice") if "still using" in n.text)
    assert "claude-test" in said and "not this one" in said
    [refused] = logged(tmp_path / "hook.log")
    assert refused["hook_event_name"] == "PreModelSwitch"
    assert refused["from_model"] == "claude-test" and refused["to_model"] == "claude-opus-5-5"
    assert refused["requested_model"] == "claude-opus-5-5" and refused["source"] == "command"
    _say(tmp_path, "answer", "POST-SWITCH: now on haiku")
    run.submit(SetModel(model="claude-haiku-4-5"))  # the PreModelSwitch matcher is opus only
    await run.rec.wait_for(lambda: any(
        h.event == "PostModelSwitch" and h.state == "ended" for h in run.rec.of("hook")))
    assert run.rec.of("model_changed")[-1].model == "claude-haiku-4-5"
    post = logged(tmp_path / "hook.log")[1]
    assert post["hook_event_name"] == "PostModelSwitch" and post["to_model"] == "claude-haiku-4-5"
    fake_api.enqueue(Reply.text("hi"))
    run.submit(UserMessage(text="hello"))
    await run.idle()
    assert fake_api.requests[-1]["model"] == "claude-haiku-4-5"
    assert "POST-SWITCH: now on haiku" in json.dumps(fake_api.requests[-1]["messages"])
    await run.close()


async def test_instructions_loaded_tells_of_each_claude_md_read_at_the_start_and_later(
        fake_api, tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "CLAUDE.md").write_text("Answer briefly.\n@more.md\n")
    (ws / "more.md").write_text("And kindly.\n")
    hooks = _hooks(tmp_path, monkeypatch, {"InstructionsLoaded": [{}]})
    run, _ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("ok"))
    run.submit(UserMessage(text="hello"))
    await run.idle()
    seen = {Path(s["file_path"]).name: s for s in logged(tmp_path / "hook.log")
            if Path(s["file_path"]).parent == ws}
    assert seen["CLAUDE.md"]["hook_event_name"] == "InstructionsLoaded"
    assert seen["CLAUDE.md"]["memory_type"] == "Project"
    assert seen["CLAUDE.md"]["load_reason"] == "session_start"
    assert seen["more.md"]["load_reason"] == "include"
    assert seen["more.md"]["parent_file_path"] == str(ws / "CLAUDE.md")
    # a sub-folder's own CLAUDE.md, brought in by a call that read a file there
    (ws / "sub").mkdir()
    (ws / "sub" / "CLAUDE.md").write_text("Sub-folder rules.\n")
    (ws / "sub" / "code.py").write_text("x = 1\n")
    fake_api.enqueue(Reply.tool_use("read_file", {"path": "sub/code.py"}), Reply.text("read"))
    run.submit(UserMessage(text="read it"))
    await run.idle()
    nested = [s for s in logged(tmp_path / "hook.log") if s["load_reason"] == "nested_traversal"]
    assert [s["file_path"] for s in nested] == [str(ws / "sub" / "CLAUDE.md")]
    assert nested[0]["memory_type"] == "Project"
    await run.close()


async def test_each_claude_code_event_agent_tui_does_not_run_is_named_as_not_supported(tmp_path):
    value = {name: [{"hooks": [{"type": "command", "command": "true"}]}]
             for name in OTHER_CLAUDE_EVENTS}
    commands, problems = parse_hooks(HooksSource(file=tmp_path / "s.json", project=False,
                                                 value=value))
    assert commands == []
    assert len(problems) == len(OTHER_CLAUDE_EVENTS)
    for name, problem in zip(OTHER_CLAUDE_EVENTS, problems):
        assert f"{name} hooks are not supported by agent-tui" in problem.message
        assert OTHER_CLAUDE_EVENTS[name] in problem.message


async def test_directory_added_tells_of_a_folder_add_dir_added(fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, {"DirectoryAdded": [{"matcher": "slash_command"}]})
    run, _ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("ok"))
    run.submit(UserMessage(text="hello"))  # the session's loop runs
    await run.idle()
    other = tmp_path / "other"
    other.mkdir()
    run.session.added_dirs.append(other)  # as /add-dir does, then:
    run.session.directory_added(other)
    await run.rec.wait_for(lambda: any(
        h.event == "DirectoryAdded" and h.state == "ended" for h in run.rec.of("hook")))
    [seen] = logged(tmp_path / "hook.log")
    assert seen["hook_event_name"] == "DirectoryAdded"
    assert seen["directory"] == str(other) and seen["source"] == "slash_command"
    await run.close()


async def test_user_prompt_expansion_sees_a_commands_prompt_and_may_block_it(
        fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, {"UserPromptExpansion": [{"matcher": "review"}]})
    run, ws = start(fake_api, tmp_path, hooks)
    folder = ws / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("Review $ARGUMENTS carefully.\n")
    sent: list[str] = []
    _say(tmp_path, "answer", "EXPANSION-NOTE: be kind")
    fake_api.enqueue(Reply.text("reviewed"))
    # a command with no lines of its own: the session runs it, to run the hooks
    assert use_line(run.session, CommandLine("review", "main.py"), sent.append, sent.append)
    await run.rec.wait_type("turn_started")
    await run.idle()
    assert sent == []
    [seen] = logged(tmp_path / "hook.log")
    assert seen["hook_event_name"] == "UserPromptExpansion"
    assert seen["expansion_type"] == "slash_command" and seen["command_name"] == "review"
    assert seen["command_args"] == "main.py" and seen["command_source"] == "project"
    assert seen["prompt"].startswith("Review main.py carefully.")
    sent_text = json.dumps(fake_api.requests[-1]["messages"])
    assert "EXPANSION-NOTE: be kind" in sent_text and "Review main.py carefully." in sent_text
    _say(tmp_path, "refuse", "secrets")
    assert use_line(run.session, CommandLine("review", "secrets.env"), sent.append, sent.append)
    await run.rec.wait_for(lambda: any("not sent" in n.text for n in run.rec.of("notice")))
    said = next(n.text for n in run.rec.of("notice") if "not sent" in n.text)
    assert said.startswith("/review not sent: not this one: secrets")
    assert len(fake_api.requests) == 1  # the blocked prompt never reached the model
    await run.close()
