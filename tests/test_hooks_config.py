"""The settings files' ``hooks`` key: entries parsed one by one (a malformed one is
reported with file, line and column and skipped alone), matchers as Claude Code reads
them, and where each hook came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.protocol import HookEvent
from agent_tui.settings import load_settings
from agent_tui.hooks import CommandHooks, load_hooks
from agent_tui.hooks.matchers import Matcher

BROKEN = """{
  "model": "claude-from-file",
  "hooks": {
    "PreToolUse": [
      {"matcher": "bash", "hooks": [{"type": "command", "command": "echo good"}]},
      {"matcher": "(", "hooks": [{"type": "command", "command": "echo bad-regex"}]},
      {"matcher": "Edit", "hooks": [
        {"type": "agent", "prompt": "is this fine?"},
        {"type": "command", "comand": "typo"},
        {"type": "command", "command": "echo slow", "timeout": -1},
        {"type": "command", "command": "echo kept", "timeout": 5, "onFailure": "continue"}
      ]}
    ],
    "TeammateIdle": [{"hooks": []}],
    "PreTooluse": [],
    "Stop": {"hooks": []}
  }
}
"""


def where(text: str, needle: str, nth: int = 0) -> str:
    """line:column of the nth occurrence of ``needle``."""
    offset = -1
    for _ in range(nth + 1):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset) + 1
    return f"{line}:{offset - text.rfind(chr(10), 0, offset)}"


def test_a_malformed_entry_is_reported_with_file_line_column_and_the_rest_apply(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(BROKEN)
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none", extra=[path], trusted=True)
    assert loaded.problems == [] and loaded.model == "claude-from-file"  # the file applies
    config = load_hooks(loaded)
    assert [h.command for h in config.commands] == ["echo good", "echo kept"]
    kept = config.commands[1]
    assert kept.timeout_s == 5 and kept.on_failure == "continue" and kept.matcher.text == "Edit"
    problems = [str(p) for p in config.problems]
    expected = [
        (where(BROKEN, '"matcher": "("'), "hooks.PreToolUse[1].matcher: matcher '(' is not a "
         "valid regular expression"),
        (where(BROKEN, '"type": "agent"'), 'hooks.PreToolUse[2].hooks[0].type: type is "agent": '
         'agent-tui runs "command", "http", "prompt" and "mcp_tool" hooks (skipped)'),
        (where(BROKEN, '"comand"'), 'hooks.PreToolUse[2].hooks[1].comand: unknown key "comand" '
         '(did you mean "command"?) ignored'),
        (where(BROKEN, '{"type": "command", "comand"'), "hooks.PreToolUse[2].hooks[1]: command "
         "must be a non-empty string (skipped)"),
        (where(BROKEN, '"timeout": -1'), "hooks.PreToolUse[2].hooks[2].timeout: timeout must be a "
         "number of seconds above 0 (skipped)"),
        (where(BROKEN, '"TeammateIdle"'), "hooks.TeammateIdle: TeammateIdle hooks are not "
         "supported by agent-tui (agent-tui has no agent teams); they never run (skipped)"),
        (where(BROKEN, '"PreTooluse"'), 'hooks.PreTooluse: unknown hook event (did you mean '
         '"PreToolUse"?)'),
        (where(BROKEN, '"Stop"'), "hooks.Stop: expected a list of matcher groups, got an object"),
    ]
    assert len(problems) == len(expected), problems
    for problem, (position, text) in zip(problems, expected):
        assert problem.startswith(f"{path}:{position}: "), (problem, position)
        assert text in problem, problem
        assert problem.endswith("(skipped)") != ("unknown key" in problem)


def test_hooks_that_are_not_an_object_are_skipped_and_the_file_still_applies(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"theme": "light", "hooks": ["echo hi"]}))
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none", extra=[path], trusted=True)
    assert loaded.theme == "light"
    [problem] = load_hooks(loaded).problems
    assert str(problem) == (f"{path}:1:20: hooks: expected an object of events {{...}}, "
                            "got a list (skipped)")


def test_a_missing_settings_file_given_on_the_command_line_is_reported(tmp_path):
    missing = tmp_path / "nope.json"
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none", extra=[missing], trusted=True)
    assert loaded.problems == [f"{missing}: no such file (settings file ignored)"]


@pytest.mark.parametrize(("matcher", "name", "hit"), [
    ("", "bash", True),
    ("*", "mcp__files__read", True),
    ("bash", "bash", True),
    ("bash", "bash_output", False),  # plain names match exactly
    ("Bash", "bash", True),  # Claude Code's name for the same tool
    ("Edit|Write", "write_file", True),
    ("Edit|Write", "read_file", False),
    ("mcp__github__.*", "mcp__github__create_issue", True),
    ("mcp__github__.*", "mcp__gitlab__create_issue", False),
    ("mcp__github", "mcp__github__create_issue", False),
    ("Notebook.*", "NotebookEdit", True),
    ("^(bash|grep)$", "grep", True),
])
def test_matchers_read_tool_names_as_claude_code_does(matcher, name, hit):
    assert Matcher.parse(matcher).matches(name) is hit


def test_the_hooks_in_force_say_where_each_came_from(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(BROKEN)
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none", extra=[path], trusted=True)
    hooks = CommandHooks(load_hooks(loaded).commands, workspace=tmp_path)
    rows = hooks.rows()
    assert [(r.event, r.matcher, r.command, r.source) for r in rows] == [
        (HookEvent.PRE_TOOL_USE, "bash", "echo good", f"{path}:{where(BROKEN, 'echo good').split(':')[0]}"),
        (HookEvent.PRE_TOOL_USE, "Edit", "echo kept", f"{path}:{where(BROKEN, 'echo kept').split(':')[0]}"),
    ]
    assert [r.command for r in hooks.matching(HookEvent.PRE_TOOL_USE, "edit_file")] == ["echo kept"]
    assert hooks.matching(HookEvent.POST_TOOL_USE, "bash") == []


def test_a_project_files_hooks_run_trusted_or_not(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".agent-tui").mkdir(parents=True)
    (ws / ".agent-tui" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "echo project"}]}]}}))
    user = tmp_path / "user"
    user.mkdir()
    (user / "settings.json").write_text(json.dumps({"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "echo user"}]}]}}))
    for trusted in (False, True):  # a guard can only take away: it always runs
        loaded = load_settings(ws, user_dir=user, trusted=trusted)
        assert [h.command for h in load_hooks(loaded).commands] == ["echo user", "echo project"]


def test_a_misspelt_key_is_named_and_the_hook_still_runs(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./guard.sh", "tiemout": 5}]}]}}))
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none", extra=[path])
    config = load_hooks(loaded)
    assert [h.command for h in config.commands] == ["./guard.sh"]
    [problem] = [str(p) for p in config.problems]
    assert 'unknown key "tiemout" (did you mean "timeout"?) ignored' in problem
    assert "(skipped)" not in problem


def test_the_hook_row_points_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"hooks": {"Stop": [\n  {"hooks": [\n    {"type": "command", "command": "x"}]}]}}')
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none", extra=[path], trusted=True)
    [row] = CommandHooks(load_hooks(loaded).commands, workspace=tmp_path).rows()
    assert row.source == f"{path}:3"


UNKNOWN_NAMES = """{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash|Edit|Write", "hooks": [{"type": "command", "command": "echo known"}]},
      {"matcher": "Bsah", "hooks": [{"type": "command", "command": "echo typo"}]},
      {"matcher": "mcp__memory__.*|Nothing", "hooks": [{"type": "command", "command": "echo re"}]},
      {"matcher": "read_file|AskUserQuestion", "hooks": [{"type": "command", "command": "echo o"}]}
    ],
    "SessionStart": [
      {"matcher": "startup|resume", "hooks": [{"type": "command", "command": "echo s"}]},
      {"matcher": "boot", "hooks": [{"type": "command", "command": "echo b"}]}
    ]
  }
}
"""


def test_a_matcher_naming_no_tool_is_warned_about_with_its_place_and_still_loads(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(UNKNOWN_NAMES)
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none", extra=[path], trusted=True)
    config = load_hooks(loaded)
    assert len(config.commands) == 6  # warned about, not dropped
    problems = [str(p) for p in config.problems]
    bsah, other, boot = (where(UNKNOWN_NAMES, f'"matcher": "{m}"')
                         for m in ("Bsah", "read_file|AskUserQuestion", "boot"))
    assert problems == [
        f"{path}:{bsah}: hooks.PreToolUse[1].matcher: "
        "Bsah: no tool has this name (Claude Code's names, such as Bash, Read, Edit|Write, "
        "mcp__server__tool, or agent-tui's own); the matcher never matches it",
        f"{path}:{other}: "
        "hooks.PreToolUse[3].matcher: AskUserQuestion: no tool has this name (Claude Code's "
        "names, such as Bash, Read, Edit|Write, mcp__server__tool, or agent-tui's own); the "
        "matcher never matches it",
        f"{path}:{boot}: hooks.SessionStart[1].matcher: "
        "boot: not a SessionStart matcher (known: clear, compact, resume, startup); the matcher "
        "never matches it",
    ]


CLAUDE_FIELDS = """{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [
        {"type": "command", "if": "Bash(rm *)", "command": "./block-rm.sh", "shell": "bash"},
        {"type": "command", "command": "./slow.sh", "async": true, "once": true},
        {"type": "command", "command": "node", "args": ["lint.js"]},
        {"type": "command", "command": "Get-Date", "shell": "powershell"}
      ]}
    ]
  }
}
"""


def test_claude_code_fields_not_acted_on_keep_the_hook_and_say_so(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(CLAUDE_FIELDS)
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none", extra=[path], trusted=True)
    config = load_hooks(loaded)
    assert [h.command for h in config.commands] == ["./block-rm.sh", "./slow.sh"]  # guard kept
    problems = [str(p) for p in config.problems]
    said = "\n".join(problems)
    assert config.commands[0].condition is not None  # `if` is honoured: no warning
    assert config.commands[0].condition.text == "Bash(rm *)"
    assert "hooks.PreToolUse[0].hooks[1].async: `async` is not supported" in said
    assert "hooks.PreToolUse[0].hooks[2].args: exec form (`args`) is not supported" in said
    assert 'hooks.PreToolUse[0].hooks[3].shell: hooks run with bash here' in said
    assert len(problems) == 3
    first = next(p for p in problems if ".async:" in p)
    assert not first.endswith("(skipped)")


SUBAGENT_AND_END = """{
  "hooks": {
    "SubagentStart": [{"matcher": "code-reviewer", "hooks": [{"type": "command", "command": "echo a"}]}],
    "SubagentStop": [{"matcher": "Explore|Plan", "hooks": [{"type": "command", "command": "echo b"}]}],
    "SessionEnd": [
      {"matcher": "clear|prompt_input_exit", "hooks": [{"type": "command", "command": "echo c"}]},
      {"matcher": "quit", "hooks": [{"type": "command", "command": "echo d"}]}
    ]
  }
}
"""


def test_subagent_and_session_end_hooks_load_and_a_session_end_matcher_is_checked(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(SUBAGENT_AND_END)
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none", extra=[path], trusted=True)
    config = load_hooks(loaded)
    assert [(str(c.event), c.matcher.text) for c in config.commands] == [
        ("SubagentStart", "code-reviewer"), ("SubagentStop", "Explore|Plan"),
        ("SessionEnd", "clear|prompt_input_exit"), ("SessionEnd", "quit")]
    start, stop = config.commands[0].matcher, config.commands[1].matcher
    assert start.matches("code-reviewer") and not start.matches("general-purpose")
    assert stop.matches("Plan") and not stop.matches("Planner")  # exact names
    quit_ = where(SUBAGENT_AND_END, '"matcher": "quit"')
    assert [str(p) for p in config.problems] == [
        f"{path}:{quit_}: hooks.SessionEnd[1].matcher: quit: not a SessionEnd matcher (known: "
        "bypass_permissions_disabled, clear, logout, other, prompt_input_exit); the matcher "
        "never matches it"]
