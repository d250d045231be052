"""Hooks re-read when a settings file changes during a session: between turns, never
inside one, with one notice; a broken edit keeps the last good hooks and says why; a
project's hooks keep the trust rule of the start. The session is the CLI's own
(``cli/wiring``), on the real SDK against the fake API, with real hook scripts."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from tests.fake_api import Reply
from tests.harness import Recorder, Running
from tests.hooks_support import hook_script

pytestmark = pytest.mark.asyncio


@pytest.fixture
def env(tmp_path, fake_api, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def open_session(ws: Path, *args: str) -> Running:
    from agent_tui.cli.options import parse_options
    from agent_tui.cli.wiring import Wiring

    wiring = Wiring(parse_options(["--cwd", str(ws), "--allowedTools", "Bash", *args]),
                    interactive=False)
    rec = Recorder()
    session = wiring.make_session(rec)
    return Running(session, rec, session.deps.journal)


def user_settings() -> Path:
    return Path(os.environ["HOME"]) / ".config" / "agent-tui" / "settings.json"


def write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value, indent=2))


def hooks_logging(tmp_path: Path, log: Path, *, editing: Path | None = None) -> dict:
    """A Python PreToolUse hook and a shell PostToolUse hook, each adding a line to
    ``log``; with ``editing``, the Python one empties that settings file when the
    command says ``edit-settings`` (an edit made inside a turn)."""
    edit = (f"if 'edit-settings' in data['tool_input']['command']:\n"
            f"    open({str(editing)!r}, 'w').write('{{}}')\n") if editing else ""
    pre = hook_script(tmp_path / "hooks", "pre", f"""
        data = json.load(sys.stdin)
        with open({str(log)!r}, "a") as f:
            f.write("pre " + data["tool_input"]["command"] + "\\n")
        {edit.replace(chr(10), chr(10) + '        ')}
    """)
    post = f"cat > /dev/null; echo post >> {shlex.quote(str(log))}"
    return {"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": pre}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": post}]}],
    }}


async def turn(run: Running, fake_api, text: str, *commands: str) -> None:
    replies = [Reply.tool_use("bash", {"command": c}, id=f"toolu_{i}_{len(run.rec.events)}")
               for i, c in enumerate(commands)]
    fake_api.enqueue(*replies, Reply.text("done"))
    n = len(run.rec.of("turn_ended"))
    from agent_tui.protocol import UserMessage

    run.submit(UserMessage(text=text))
    await run.rec.wait_type("turn_ended", n + 1)
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "completed", run.rec.summary()


def lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def notices(run: Running, word: str) -> list:
    return [n for n in run.rec.of("notice") if word in n.text]


async def test_hooks_added_during_a_session_fire_from_the_next_turn(tmp_path, env, fake_api):
    log = tmp_path / "log"
    run = open_session(env)  # no hooks at all when the session opens
    await turn(run, fake_api, "one", "echo first")
    assert lines(log) == []
    write(user_settings(), hooks_logging(tmp_path, log))
    await turn(run, fake_api, "two", "echo second")
    assert lines(log) == ["pre echo second", "post"]
    said = notices(run, "hooks reloaded")
    assert len(said) == 1 and said[0].level == "info", [n.text for n in run.rec.of("notice")]
    assert "added PreToolUse [Bash]" in said[0].text and "PostToolUse [Bash]" in said[0].text
    assert [r.command for r in run.session.hooks()] == [
        h["hooks"][0]["command"] for h in (
            hooks_logging(tmp_path, log)["hooks"]["PreToolUse"][0],
            hooks_logging(tmp_path, log)["hooks"]["PostToolUse"][0])]
    await turn(run, fake_api, "three", "echo third")  # unchanged: no new notice
    assert len(notices(run, "hooks reloaded")) == 1
    await run.close()


async def test_an_edit_inside_a_turn_waits_for_the_next_turn(tmp_path, env, fake_api):
    log = tmp_path / "log"
    settings = user_settings()
    write(settings, hooks_logging(tmp_path, log, editing=settings))
    run = open_session(env)
    # the hook empties the settings file during the turn: the turn keeps its hooks
    await turn(run, fake_api, "one", "echo edit-settings", "echo same turn")
    assert json.loads(settings.read_text()) == {}
    assert lines(log) == ["pre echo edit-settings", "post", "pre echo same turn", "post"]
    await turn(run, fake_api, "two", "echo next turn")
    assert lines(log)[4:] == []
    said = notices(run, "hooks reloaded")
    assert len(said) == 1 and "removed PreToolUse [Bash]" in said[0].text
    assert run.session.hooks() == []
    await run.close()


@pytest.mark.parametrize("broken, why", [
    ('{"hooks": {"PreToolUse": [', "invalid JSON"),
    (json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "agent", "prompt": "is this fine?"}]}]}}), 'type is "agent"'),
])
async def test_a_broken_edit_keeps_the_last_good_hooks_and_says_why(tmp_path, env, fake_api,
                                                                     broken, why):
    log = tmp_path / "log"
    settings = user_settings()
    good = hooks_logging(tmp_path, log)
    write(settings, good)
    run = open_session(env)
    await turn(run, fake_api, "one", "echo before")
    write(settings, broken)
    await turn(run, fake_api, "two", "echo after")
    assert lines(log) == ["pre echo before", "post", "pre echo after", "post"]  # still run
    said = [n for n in run.rec.of("notice") if "stay as they were" in n.text]
    assert len(said) == 1 and said[0].level == "warning"
    assert why in said[0].text and f"{settings}:" in said[0].text, said[0].text
    write(settings, good)  # fixed again: the same hooks, nothing to say
    await turn(run, fake_api, "three", "echo fixed")
    assert lines(log)[-2:] == ["pre echo fixed", "post"]
    assert len([n for n in run.rec.of("notice") if "hooks" in n.text]) == 1
    await run.close()


async def test_a_projects_hooks_added_later_run_in_every_mode(tmp_path, env, fake_api):
    log = tmp_path / "log"
    run = open_session(env)  # not trusted, not auto mode: a guard still runs
    await turn(run, fake_api, "one", "echo first")
    project = env / ".claude" / "settings.json"
    write(project, hooks_logging(tmp_path, log))
    await turn(run, fake_api, "two", "echo second")
    assert lines(log) == ["pre echo second", "post"]
    said = [n for n in run.rec.of("notice") if "hooks reloaded" in n.text]
    assert len(said) == 1, [n.text for n in run.rec.of("notice")]
    await run.close()


async def test_config_change_hooks_judge_each_changed_file_before_it_applies(tmp_path, env,
                                                                            fake_api):
    """The user's ConfigChange hook blocks edits of the project's file (its hooks stay
    as they were); a project's ConfigChange hook that blocks everything cannot keep a
    guard added to the user's own file from applying."""
    seen = tmp_path / "config-change.jsonl"
    user_hook = (f"tee -a {shlex.quote(str(seen))} | grep -q project_settings "
                 "&& { echo 'no project edits mid-session' >&2; exit 2; }; echo >> "
                 f"{shlex.quote(str(seen))}; exit 0")
    project_hook = "cat > /dev/null; echo 'the project says no' >&2; exit 2"

    def with_config_change(command: str, extra: dict | None = None) -> dict:
        hooks = {"ConfigChange": [{"hooks": [{"type": "command", "command": command}]}]}
        return {"hooks": {**hooks, **(extra or {})}}

    user, project = user_settings(), env / ".agent-tui" / "settings.json"
    write(user, with_config_change(user_hook))
    write(project, with_config_change(project_hook))
    run = open_session(env)
    await turn(run, fake_api, "one", "echo first")
    assert not seen.exists()  # nothing changed yet: no ConfigChange
    user_log, project_log = tmp_path / "user.log", tmp_path / "project.log"
    write(user, with_config_change(user_hook, hooks_logging(tmp_path / "u", user_log)["hooks"]))
    write(project, with_config_change(project_hook,
                                      hooks_logging(tmp_path / "p", project_log)["hooks"]))
    await turn(run, fake_api, "two", "echo second")
    assert lines(user_log) == ["pre echo second", "post"]  # the user's guard applies
    assert lines(project_log) == []  # the blocked change never applied
    given = [json.loads(line) for line in seen.read_text().split("\n") if line.strip()]
    assert [(g["hook_event_name"], g["source"], g["file_path"]) for g in given] == [
        ("ConfigChange", "user_settings", str(user)),
        ("ConfigChange", "project_settings", str(project))]
    assert {"session_id", "cwd", "permission_mode", "transcript_path"} <= set(given[0])
    texts = [n.text for n in run.rec.of("notice")]
    assert any("cannot block a change to user_settings" in t for t in texts), texts
    blocked = [t for t in texts if "ConfigChange hook blocked the change" in t]
    assert len(blocked) == 1 and str(project) in blocked[0], texts
    assert "no project edits mid-session" in blocked[0]
    kinds = [r.event for r in run.journal.records if getattr(r, "kind", "") == "hook"]
    assert kinds.count("ConfigChange") == 4  # two hooks, two files: each journalled
    await turn(run, fake_api, "three", "echo third")  # nothing changed: no hook runs
    assert len([line for line in seen.read_text().split("\n") if line.strip()]) == 2
    await run.close()
