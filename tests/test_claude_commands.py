"""Custom commands in Claude Code's shapes (``tests/claude_commands_fixtures``): where
they are read from, their names and front matter (a malformed one said with file and
line), ``$ARGUMENTS`` and ``$1``..``$9``, ``!`cmd``` lines run first under the
permission rules and the command's ``allowed-tools``, ``@file`` inlined, ``model``,
and ``agent-tui -p "/name args"`` running them: the request the fake API receives
holds the expanded prompt, never the command line."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from agent_tui.commands.expand import expand, split_args
from agent_tui.commands.files import load_commands
from tests.fake_api import Reply
from tests.forked_runs import popen_agent, run_agent
from tests.print_agent import env_for, wait_until

FIXTURES = Path(__file__).parent / "claude_commands_fixtures"
AGENT = [sys.executable, "-m", "agent_tui.cli"]
# Claude Code's newer rule: $0 is the first word
MIGRATE = ("---\ndescription: Migrate a component to another framework\n"
           "argument-hint: [component] [from] [to]\n---\n"
           "Migrate the $0 component from $1 to $2.\n")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace, home = tmp_path / "project", tmp_path / "home"
    shutil.copytree(FIXTURES / "project", workspace)
    shutil.copytree(FIXTURES / "home", home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return workspace


def _agent(fake_api, ws: Path, prompt: str, *extra: str, **kw) -> subprocess.CompletedProcess:
    env = env_for(ws.parent, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  HOME=str(ws.parent / "home"), XDG_CONFIG_HOME=str(ws.parent / "config"))
    return run_agent(["-p", prompt, "--cwd", str(ws), *extra], env=env, timeout=90, **kw)


def _sent(fake_api, index: int = 0) -> str:
    """The text of the first user message of request ``index``."""
    content = fake_api.requests[index]["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


# ------------------------------------------------------------ files and names


def test_folders_names_and_descriptions_as_claude_code_gives_them(ws: Path) -> None:
    loaded = load_commands(ws)
    by_name = {c.name: c for c in loaded.commands}

    # Claude Code 2.1.x names frontend/component.md /frontend:component only; /component
    # is kept as a second name since it is unambiguous, /test is not (two test.md)
    assert {"commit", "review-pr", "explain", "frontend:component", "frontend:test",
            "backend:test", "standup", "broken"} <= set(by_name)
    assert "unclosed" not in by_name and "test" not in by_name and "component" not in by_name
    assert by_name["frontend:component"].scope == "project:frontend"
    assert loaded.find("component") is by_name["frontend:component"]
    assert loaded.find("test") is None
    assert by_name["standup"].scope == "user"
    assert by_name["commit"].description == "Create a git commit"
    assert by_name["commit"].argument_hint == "[message]"
    assert by_name["commit"].allowed_tools == ["Bash(git add:*)", "Bash(git status:*)",
                                               "Bash(git branch:*)"]
    assert by_name["commit"].model == "claude-haiku-4-5"
    assert by_name["explain"].description == "Explain a file"


def test_a_malformed_front_matter_is_said_with_file_and_line_and_the_rest_still_loads(ws: Path) -> None:
    loaded = load_commands(ws)
    commands = ws / ".claude" / "commands"
    problems = "\n".join(loaded.problems)

    assert f"{commands / 'broken.md'}:3: not 'key: value': 'this line is not yaml' (ignored)" in problems
    assert f"{commands / 'broken.md'}:4: front matter key 'context' is not supported (ignored)" in problems
    assert f"{commands / 'unclosed.md'}: line 1: the front matter opened here is never closed" in problems
    broken = loaded.find("broken")
    assert broken.description == "Has a line that is not YAML"
    assert expand(broken, "Ada").compose([]) == "Say hello to Ada."


def test_arguments_positional_words_split_as_a_shell_does(ws: Path) -> None:
    loaded = load_commands(ws)
    review = loaded.find("review-pr")
    assert split_args('"42" "very high" alice') == ["42", "very high", "alice"]
    # no $ARGUMENTS in the body: what was typed follows as "ARGUMENTS: ..." (Claude Code)
    assert expand(review, '42 "very high" alice').compose([]) == (
        "Review PR #42 with priority very high and assign it to alice.\n\n"
        'ARGUMENTS: 42 "very high" alice')
    # a placeholder past the last word stays as written (Claude Code keeps it)
    assert expand(review, "7").compose([]) == (
        "Review PR #7 with priority $2 and assign it to $3.\n\nARGUMENTS: 7")
    assert expand(review, "").compose([]) == "Review PR #$1 with priority $2 and assign it to $3."
    assert split_args('unbalanced "quote') == ["unbalanced", '"quote']


def test_arguments_counted_from_zero_where_the_file_uses_claude_codes_newer_rule(ws: Path) -> None:
    commands = ws / ".claude" / "commands"
    (commands / "migrate.md").write_text(MIGRATE)
    (commands / "indexed.md").write_text(
        "First $ARGUMENTS[0], second $ARGUMENTS[1], all: $ARGUMENTS; $1 is the first.\n")
    (commands / "plain.md").write_text("Summarise the open issues.\n")
    loaded = load_commands(ws)
    assert expand(loaded.find("migrate"), '"Search Bar" React Vue').compose([]) == (
        'Migrate the Search Bar component from React to Vue.\n\n'
        'ARGUMENTS: "Search Bar" React Vue')
    assert expand(loaded.find("indexed"), "a b").compose([]) == (
        "First a, second b, all: a b; a is the first.")
    # an argument is put in once: its own "$1" is not expanded again
    assert expand(loaded.find("indexed"), "'$1' b").compose([]) == (
        "First $1, second b, all: '$1' b; $1 is the first.")
    assert expand(loaded.find("plain"), "in the parser").compose([]) == (
        "Summarise the open issues.\n\nARGUMENTS: in the parser")
    assert expand(loaded.find("plain"), "").compose([]) == "Summarise the open issues."


def test_bang_lines_become_steps_with_file_and_line_and_their_output_goes_in_place(ws: Path) -> None:
    commit = load_commands(ws).find("commit")
    done = expand(commit, "fix the parser")
    source = ws / ".claude" / "commands" / "commit.md"
    assert [(s.command, s.where) for s in done.steps] == [
        ("git status --short", f"{source}:10"), ("git branch --show-current", f"{source}:11")]
    text = done.compose(["?? new.txt\n", "main\n"])
    assert "- Current git status: ?? new.txt\n- Current branch: main\n" in text
    assert text.endswith("with the message: fix the parser")


# ------------------------------------------------------------ print mode


def _git_repo(ws: Path) -> None:
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "t@example.com"],
                 ["config", "user.name", "T"]):
        subprocess.run(["git", *args], cwd=ws, check=True)
    (ws / "new.txt").write_text("new\n")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_print_mode_runs_the_bang_lines_under_allowed_tools_and_sends_the_expanded_prompt(fake_api, ws) -> None:
    _git_repo(ws)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "git add new.txt"}),
                     Reply.tool_use("bash", {"command": "rm new.txt"}), Reply.text("Committed."))
    out = _agent(fake_api, ws, "/commit fix the parser", "--output-format", "stream-json")

    assert out.returncode == 0, out.stderr
    sent = _sent(fake_api)
    assert "- Current git status: ?? .claude/\n" in sent and "?? new.txt\n" in sent  # real output
    assert "- Current branch: main" in sent
    assert "with the message: fix the parser" in sent
    assert "/commit" not in sent and "!`" not in sent and "$ARGUMENTS" not in sent
    assert fake_api.requests[0]["model"] == "claude-haiku-4-5"  # the command's model
    states = [e for e in map(json.loads, out.stdout.splitlines()) if e["type"] == "tool_state"]
    finals = [e["state"] for e in states if e["state"] in ("succeeded", "denied", "failed")]
    assert finals == ["succeeded", "denied"]  # git add: allowed-tools; rm: print mode denies
    assert (ws / "new.txt").exists()
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=ws,
                            capture_output=True, text=True).stdout
    assert staged.strip() == "new.txt"


def test_print_mode_inlines_files_and_fills_positional_arguments(fake_api, ws) -> None:
    fake_api.enqueue(Reply.text("explained"), Reply.text("reviewed"))
    out = _agent(fake_api, ws, "/explain")
    assert out.returncode == 0, out.stderr
    sent = _sent(fake_api)
    assert sent.startswith("Explain the implementation in @src/helpers.py")
    assert '<file path="src/helpers.py">\ndef helper_marker():' in sent and "HELPERS-MARKER" in sent
    assert "@src/missing.py: no such file (not inlined)" in out.stderr

    out = _agent(fake_api, ws, '/review-pr 42 "very high" alice')
    assert out.returncode == 0, out.stderr
    assert _sent(fake_api, 1) == ("Review PR #42 with priority very high and assign it to alice."
                                  '\n\nARGUMENTS: 42 "very high" alice')

    # a file that uses $0 counts from 0, as Claude Code's newer commands do
    (ws / ".claude" / "commands" / "migrate.md").write_text(MIGRATE)
    fake_api.enqueue(Reply.text("migrated"))
    out = _agent(fake_api, ws, '/migrate "Search Bar" React Vue')
    assert out.returncode == 0, out.stderr
    assert _sent(fake_api, 2) == ("Migrate the Search Bar component from React to Vue.\n\n"
                                  'ARGUMENTS: "Search Bar" React Vue')


def test_a_subfolder_command_runs_by_its_name_and_a_users_command_too(fake_api, ws) -> None:
    fake_api.enqueue(Reply.text("a"), Reply.text("b"), Reply.text("c"))
    assert _agent(fake_api, ws, "/component Button").returncode == 0
    assert _agent(fake_api, ws, "/backend:test api").returncode == 0
    assert _agent(fake_api, ws, "/standup the parser").returncode == 0
    assert [_sent(fake_api, i) for i in range(3)] == [
        "Create a React component named Button in src/components/.\n\nARGUMENTS: Button",
        "Run the backend tests matching api.",
        "Write my standup notes about the parser.",
    ]


def test_a_bang_line_a_deny_rule_names_never_runs_and_nothing_is_sent(fake_api, ws) -> None:
    (ws / ".agent-tui").mkdir()
    (ws / ".agent-tui" / "settings.json").write_text(json.dumps(
        {"permissions": {"deny": ["bash(touch:*)"]}}))
    out = _agent(fake_api, ws, "/make-marker", "--permission-mode", "auto")

    assert out.returncode == 1
    assert not (ws / "marker-file").exists()
    assert fake_api.requests == []
    source = ws / ".claude" / "commands" / "make-marker.md"
    assert f"/make-marker not run, nothing was sent: {source}:5: !`touch marker-file`: denied by rule" \
        in out.stderr


def test_without_allowed_tools_a_bang_line_that_would_ask_is_refused_in_print_mode(fake_api, ws) -> None:
    out = _agent(fake_api, ws, "/slow")
    assert out.returncode == 1
    assert not (ws / "slow-started").exists() and fake_api.requests == []
    assert "needs permission" in out.stderr and "allowed-tools" in out.stderr


def test_a_refused_bang_line_is_the_json_results_error(fake_api, ws) -> None:
    out = _agent(fake_api, ws, "/slow", "--output-format", "json")
    assert out.returncode == 1 and fake_api.requests == []
    result = json.loads(out.stdout)
    assert result["subtype"] == "error_during_execution" and result["num_turns"] == 0
    (error,) = result["errors"]
    assert error.startswith("/slow not run, nothing was sent: ") and "needs permission" in error


def test_an_unknown_command_in_print_mode_is_an_error_and_nothing_is_sent(fake_api, ws) -> None:
    out = _agent(fake_api, ws, "/nope some words")
    assert out.returncode == 1
    assert fake_api.requests == []
    assert "unknown command /nope: nothing was sent" in out.stderr and "/commit" in out.stderr
    out = _agent(fake_api, ws, "/test x")  # two subfolders have a test.md: not a name
    assert out.returncode == 1 and fake_api.requests == []


def test_a_command_line_on_stdin_runs_the_command_too(fake_api, ws) -> None:
    fake_api.enqueue(Reply.text("ok"))
    ops = json.dumps({"type": "user_message", "text": "/component Card"}) + "\n"
    out = _agent(fake_api, ws, "", "--input-format", "stream-json", "--output-format",
                 "stream-json", input=ops)
    assert out.returncode == 0, out.stderr
    assert _sent(fake_api) == ("Create a React component named Card in src/components/.\n\n"
                               "ARGUMENTS: Card")


def test_sigint_while_a_bang_line_runs_ends_its_process_and_sends_nothing(fake_api, ws) -> None:
    env = env_for(ws.parent, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  HOME=str(ws.parent / "home"), XDG_CONFIG_HOME=str(ws.parent / "config"))
    proc = popen_agent(["-p", "/slow", "--cwd", str(ws), "--permission-mode", "auto"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: (ws / "slow-started").exists(), 30), "the step never started"
        sleepers: list[psutil.Process] = []

        def sleeping() -> bool:
            sleepers[:] = [p for p in psutil.Process(proc.pid).children(recursive=True)
                           if "sleep" in " ".join(p.cmdline())]
            return bool(sleepers)

        assert wait_until(sleeping, 10), "the sleep is not a child of the agent"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "stopped" in err and "nothing was sent" in err
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE
                                              for p in sleepers):
        time.sleep(0.05)
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in sleepers)
    assert fake_api.requests == []


# ------------------------------------------------------------ allowed-tools and @file rules


def _policy(ws: Path, *, deny: list[str] = (), mode: str = "ask"):  # type: ignore[assignment]
    from agent_tui.permissions import PermissionRules, Permissions

    return Permissions(ws, mode, PermissionRules(deny=list(deny)), non_interactive=True)


def test_allowed_tools_allow_what_they_name_and_never_what_a_rule_denies(ws: Path) -> None:
    from agent_tui.commands.allowed import CommandPolicy, allowed_rules
    from agent_tui.protocol import Verdict
    from agent_tui.tools.registry import default_tools

    tools = default_tools(ws)
    bash = tools.get("bash")
    rules, problems = allowed_rules(["Bash(git status:*)", "Bash(git add:*)", "Bash(git commit:*)",
                                     "Frobnicate(x)"], "c.md")
    assert [r.text for r in rules] == ["Bash(git status:*)", "Bash(git add:*)", "Bash(git commit:*)"]
    assert problems == ["c.md: allowed-tools: 'Frobnicate(x)' names no tool (ignored)"]
    policy = CommandPolicy(_policy(ws, deny=["bash(git add:*)"]), rules, ws, "commit")

    def verdict(command: str):
        return policy.check(bash, bash.parse({"command": command}))

    assert verdict("git status --short").verdict is Verdict.ALLOW
    assert "allowed-tools" in verdict("git commit -m wip").reason  # (git status only reads)
    assert verdict("git add .").verdict is Verdict.DENY  # the session's deny rule stands
    assert verdict("git push").verdict is Verdict.DENY  # print mode: nobody to ask
    assert verdict("git status; rm -rf x").verdict is Verdict.DENY  # every part must be allowed


def test_a_file_a_deny_rule_protects_or_outside_the_workspace_is_not_inlined(ws: Path, tmp_path: Path) -> None:
    from agent_tui.commands.files import CommandFile
    from agent_tui.commands.prepare import prepare
    from agent_tui.tools.registry import default_tools

    (tmp_path / "outside.txt").write_text("OUTSIDE-MARKER")
    (ws / ".env").write_text("TOKEN=ENV-MARKER")
    command = CommandFile(name="look", path_name="look", description="", source="look.md",
                          scope="project", body="Look at @.env, @../outside.txt and @src/helpers.py.")
    run, said = prepare(command, "", workspace=ws, policy=_policy(ws, deny=["read_file(.env)"]),
                        tools=default_tools(ws))
    text = run.compose([])
    assert "ENV-MARKER" not in text and "OUTSIDE-MARKER" not in text and "HELPERS-MARKER" in text
    assert any(s.startswith("/look: @.env: denied by rule Read(.env)") for s in said)
    assert any(s.startswith("/look: @../outside.txt:") for s in said)
    assert not run.own_turn


def test_a_model_alias_runs_the_commands_turn_on_the_newest_model_of_that_name(fake_api, ws) -> None:
    (ws / ".claude" / "commands" / "quick.md").write_text(
        "---\nmodel: haiku\ndescription: A quick answer\n---\nAnswer briefly: $ARGUMENTS\n")
    fake_api.enqueue(Reply.text("4"), Reply.text("plain"))
    out = _agent(fake_api, ws, "/quick what is 2+2")
    assert out.returncode == 0, out.stderr
    turns = [r for r in fake_api.requests if r.get("messages")]
    assert turns[0]["model"] == "claude-haiku-4-5"
    assert _sent(fake_api, fake_api.requests.index(turns[0])) == "Answer briefly: what is 2+2"


def test_a_malformed_front_matter_is_said_at_use_and_its_body_still_runs(fake_api, ws) -> None:
    fake_api.enqueue(Reply.text("hello"))
    out = _agent(fake_api, ws, "/broken Ada")
    assert out.returncode == 0, out.stderr
    assert _sent(fake_api) == "Say hello to Ada."
    broken = ws / ".claude" / "commands" / "broken.md"
    assert f"{broken}:3: not 'key: value'" in out.stderr
    assert f"{broken}:4: front matter key 'context' is not supported (ignored)" in out.stderr
