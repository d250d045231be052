"""Secrets stay secret, state stays private, hostile input fails cleanly.

- The API key reaches neither the journal, the checkpoints nor any other file under
  ``$AGENT_TUI_HOME``, nor a command's environment, nor the output (the real
  ``agent-tui -p`` process against the fake API).
- State folders are 0700 and files 0600.
- Fuzzed tool inputs, journal lines: a clear refusal or a set-aside line, never a crash.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import NoticeRecord, UserMessageRecord
from agent_tui.core.calls.tool import InvalidInput
from tests.fake_api import Reply
from tests.forked_runs import run_agent

AGENT = [sys.executable, "-m", "agent_tui.cli"]
FIXTURE = HealthCheck.function_scoped_fixture  # tmp_path is shared by the examples: fine


def secret_env(tmp_path: Path, secret: str, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(
        ANTHROPIC_API_KEY=secret,
        ANTHROPIC_BASE_URL=url,
        AGENT_TUI_HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    return env


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.fixture
def secret_run(fake_api, tmp_path: Path):
    """One print-mode turn with a bash call that dumps its environment and a write."""
    secret = f"sk-ant-test-{uuid.uuid4().hex}"
    ws = tmp_path / "ws"
    ws.mkdir()
    fake_api.enqueue(
        Reply.tool_uses([
            ("bash", {"command": "env > env.txt; echo dumped"}),
            ("write_file", {"path": "notes.txt", "content": "written by the agent\n"}),
        ]),
        Reply.text("All done."),
    )
    out = run_agent(
        ["-p", "dump the environment", "--permission-mode", "auto", "--cwd", str(ws),
         "--output-format", "stream-json"],
        env=secret_env(tmp_path, secret, fake_api.url), timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return secret, ws, tmp_path / "home", out, fake_api


def test_api_key_reaches_no_file_no_command_and_no_output(secret_run) -> None:
    secret, ws, home, out, fake_api = secret_run
    # the key did go where it belongs: the API request (x-api-key or a bearer token)
    assert any(secret in value for value in fake_api.request_headers[0].values())
    env_txt = (ws / "env.txt").read_text()
    assert "AGENT_TUI_HOME=" in env_txt  # the command really dumped its environment
    assert "ANTHROPIC_API_KEY" not in env_txt and secret not in env_txt
    assert (ws / "notes.txt").read_text() == "written by the agent\n"
    assert secret not in out.stdout and secret not in out.stderr
    files = files_under(home)
    assert any(p.suffix == ".jsonl" for p in files), files  # the journal was written
    leaks = [p for p in files if secret.encode() in p.read_bytes()]
    assert leaks == []
    # nor in the workspace (checkpoints, snapshots) beyond what we looked at
    assert [p for p in files_under(ws) if secret.encode() in p.read_bytes()] == []


def test_state_folders_are_0700_and_files_0600(secret_run) -> None:
    _, _, home, _, _ = secret_run
    loose = []
    for path in [home, *home.rglob("*")]:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.lstat().st_mode)
        want = 0o700 if path.is_dir() else 0o600
        # A read-only private file (0400, e.g. content-addressed objects) is fine too.
        if mode & 0o077 or (not path.is_dir() and mode & 0o600 == 0):
            loose.append(f"{path.relative_to(home)} {mode:04o} (want {want:04o})")
    assert loose == [], "\n".join(loose)


def journal_records(home: Path) -> list[dict]:
    [path] = list(home.rglob("journal.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_every_permission_decision_is_in_the_journal(fake_api, tmp_path: Path) -> None:
    """Who decided and by which rule, from settings files through print mode."""
    ws = tmp_path / "ws"
    (ws / ".agent-tui").mkdir(parents=True)
    (ws / ".agent-tui" / "settings.json").write_text(json.dumps({
        "permissions": {"deny": ["bash(rm:*)"], "allow": ["write_file(notes.txt)"]},
        "env": {"FROM_SETTINGS": "yes"},
    }))
    user_dir = tmp_path / "config" / "agent-tui"
    user_dir.mkdir(parents=True)
    (user_dir / "settings.json").write_text('{\n  "theme": "dark",\n  "modle": "x"\n}')
    fake_api.enqueue(
        Reply.tool_uses([
            ("bash", {"command": "rm -rf src"}, "toolu_rm"),
            ("write_file", {"path": "notes.txt", "content": "hi\n"}, "toolu_write"),
            ("bash", {"command": "echo $FROM_SETTINGS > seen.txt"}, "toolu_echo"),
        ]),
        Reply.text("ok"),
    )
    out = run_agent(
        ["-p", "go", "--cwd", str(ws), "--trust"],  # no --permission-mode: ask, from nowhere
        env=secret_env(tmp_path, "sk-test", fake_api.url),
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert (f"{user_dir / 'settings.json'}:3:3: not supported by agent-tui, ignored: modle "
            '(did you mean "model"?)') in out.stderr
    records = [r for r in journal_records(tmp_path / "home") if r["kind"] == "permission"]
    got = {(r["tool_use_id"], r["verdict"], r["decided_by"], r["rule"]) for r in records}
    assert got == {
        ("toolu_rm", "deny", "rule", "deny:Bash(rm:*)"),
        ("toolu_write", "allow", "rule", "allow:Write(notes.txt)"),
        ("toolu_echo", "deny", "mode", "mode:ask"),  # print mode: no one to ask
    }
    assert (ws / "notes.txt").exists() and not (ws / "seen.txt").exists()


def test_settings_env_reaches_commands(fake_api, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".agent-tui").mkdir(parents=True)
    (ws / ".agent-tui" / "settings.json").write_text(json.dumps({"env": {"NODE_ENV": "yes"}}))
    fake_api.enqueue(Reply.tool_use("bash", {"command": "echo $NODE_ENV > seen.txt"}),
                     Reply.text("ok"))
    out = run_agent(
        ["-p", "go", "--cwd", str(ws), "--permission-mode", "auto", "--trust"],
        env=secret_env(tmp_path, "sk-test", fake_api.url),
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert (ws / "seen.txt").read_text() == "yes\n"


def test_commands_do_not_see_the_key_even_when_settings_ask_for_it(tmp_path: Path) -> None:
    from agent_tui.settings import load_settings

    ws = tmp_path / "ws"
    (ws / ".agent-tui").mkdir(parents=True)
    (ws / ".agent-tui" / "settings.json").write_text(
        json.dumps({"env": {"ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}"}})
    )
    loaded = load_settings(ws, user_dir=tmp_path / "none", trusted=True)
    assert loaded.env == {}  # the bad entry skipped alone
    assert "credentials never go to commands" in loaded.problems[0]


def test_command_env_drops_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_tui.credentials import command_env

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "t")
    env = command_env({"EXTRA": "1"})
    assert "ANTHROPIC_API_KEY" not in env and "ANTHROPIC_AUTH_TOKEN" not in env
    assert env["EXTRA"] == "1"


# -- hostile tool input --------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_KEYS = ["command", "timeout_ms", "run_in_background", "path", "offset", "limit", "content",
         "old_string", "new_string", "shell_id", "description", "prompt", "junk",
         "pattern", "glob", "output_mode", "-i", "head_limit", "todos", "url"]


def _default_tools(tmp_path: Path):
    from agent_tui.tools.background import BackgroundJobs
    from agent_tui.tools.registry import default_tools

    return list(default_tools(tmp_path, jobs=BackgroundJobs())._tools.values())


@settings(max_examples=100, deadline=None, suppress_health_check=[FIXTURE])
@given(raw=st.dictionaries(st.sampled_from(_KEYS), _json | st.integers(-(2**70), 2**70),
                           max_size=5))
def test_fuzzed_input_to_every_default_tool_parses_or_is_refused_clearly(
    tmp_path: Path, raw: dict
) -> None:
    for tool in _default_tools(tmp_path):
        try:
            args = tool.parse(raw)
        except InvalidInput as exc:
            assert str(exc).startswith(f"invalid input for {tool.name}: ")
            continue
        # what parses can be summarised on one line (the permission prompt shows it)
        tool.summary(args)
        tool.is_read_only(args)


@settings(max_examples=100, deadline=None)
@given(
    command=st.text(max_size=60),
    timeout_ms=st.none() | st.integers(-(2**40), 2**40) | st.floats() | st.text(max_size=4),
    background=st.none() | st.booleans() | st.integers() | st.text(max_size=4),
)
def test_fuzzed_bash_input(command: str, timeout_ms, background) -> None:
    from agent_tui.tools.bash import MAX_TIMEOUT_MS, BashTool

    raw: dict = {"command": command}
    if timeout_ms is not None:
        raw["timeout_ms"] = timeout_ms
    if background is not None:
        raw["run_in_background"] = background
    try:
        args = BashTool().parse(raw)
    except InvalidInput as exc:
        assert str(exc).startswith("invalid input for bash: ")
        return
    assert args.command == command
    assert args.timeout_ms is None or 1 <= args.timeout_ms <= MAX_TIMEOUT_MS
    assert isinstance(args.run_in_background, bool)


@settings(max_examples=100, deadline=None, suppress_health_check=[FIXTURE])
@given(command=st.text(max_size=60))
def test_fuzzed_commands_always_get_a_ruling(tmp_path: Path, command: str) -> None:
    from agent_tui.protocol import Verdict
    from agent_tui.tools.bash import BashTool
    from agent_tui.permissions import PermissionRules, Permissions

    rules = PermissionRules(allow=["bash(ls:*)", "bash(git status)"], deny=["bash(rm:*)"],
                            ask=["bash(git push:*)"])
    tool = BashTool()
    try:
        args = tool.parse({"command": command})
    except InvalidInput:  # e.g. a NUL character
        return
    for mode in ("ask", "accept-edits", "auto"):
        ruling = Permissions(tmp_path, mode, rules).check(tool, args)
        assert ruling.verdict in tuple(Verdict) and ruling.rule
        if ruling.verdict is Verdict.ALLOW and mode != "auto":  # a rule, or it only reads
            assert ruling.rule.startswith("allow:") or ruling.reason == "read-only command"


# -- hostile journal -----------------------------------------------------------------


def _good_lines() -> list[str]:
    journal = Journal()
    records = [UserMessageRecord(turn_id="t1", text="hi"), NoticeRecord(level="info", text="x")]
    return [journal.append(r).model_dump_json() for r in records]


@settings(max_examples=100, deadline=None, suppress_health_check=[FIXTURE])
@given(garbage=st.lists(st.binary(max_size=60) | _json.map(json.dumps).map(str.encode), max_size=5))
def test_fuzzed_journal_lines_are_set_aside_not_fatal(tmp_path: Path, garbage: list[bytes]) -> None:
    good = _good_lines()
    path = tmp_path / "j.jsonl"
    body = [good[0].encode(), *garbage, good[1].encode()]
    path.write_bytes(b"\n".join(body) + b"\n")
    journal = Journal.load(path)
    texts = [getattr(r, "text", None) for r in journal.records]
    assert texts[0] == "hi" and texts[-1] == "x"  # the good lines survive the garbage
    assert len(journal.records) + len(journal.set_aside) >= 2


def test_torn_last_line_is_set_aside(tmp_path: Path) -> None:
    good = _good_lines()
    path = tmp_path / "j.jsonl"
    path.write_text(good[0] + "\n" + good[1][: len(good[1]) // 2])
    journal = Journal.load(path)
    assert [r.kind for r in journal.records] == ["user_message"]
    assert journal.set_aside == [good[1][: len(good[1]) // 2]]


def test_deeply_nested_journal_line_is_set_aside_not_fatal(tmp_path: Path) -> None:
    good = _good_lines()
    path = tmp_path / "j.jsonl"
    nested = ["[" * 100_000, '{"kind": ' * 50_000]
    path.write_text("\n".join([good[0], *nested, good[1]]) + "\n")
    journal = Journal.load(path)
    assert [r.kind for r in journal.records] == ["user_message", "notice"]
    assert len(journal.set_aside) == 2


def test_the_agent_process_hides_its_environment_from_other_processes() -> None:
    """Not dumpable: /proc/<agent>/environ (which holds the key) is closed to the
    user's other processes, the commands the model runs among them."""
    code = ("from agent_tui.process_guard import keep_environ_private, dumpable; "
            "print(dumpable(), keep_environ_private(), dumpable())")
    env = {k: v for k, v in os.environ.items() if k != "AGENT_TUI_DEBUGGABLE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["True", "True", "False"]
    env["AGENT_TUI_DEBUGGABLE"] = "1"  # opting out leaves it as it was
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["True", "False", "True"]


#: Inputs that crashed the shell grammar's lexer (tree-sitter-bash 0.25.1) with a
#: segmentation fault: ``{`` then a character far outside the Basic Multilingual Plane.
LEXER_CRASHERS = ["{\U000d5e60\u0342", "echo {\U000d0000a}", "x{\U000e0000a", "{\U0010fffda",
                  "{\U0002d411a", "ls {\U000e0100,b}"]


def test_a_command_that_crashed_the_grammar_is_judged_and_doubted() -> None:
    # in a process of its own: a crash must fail this test, not take the test run down
    script = ("import sys\nfrom agent_tui.permissions import parse_command\n"
              f"for text in {LEXER_CRASHERS!r}:\n"
              "    parsed = parse_command(text)\n"
              "    far = any(ord(c) >= 0x40000 for c in text)\n"
              "    assert bool(parsed.doubts) or not far, (text, parsed)\n"
              "print('judged', len(" + repr(LEXER_CRASHERS) + "))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert f"judged {len(LEXER_CRASHERS)}" in done.stdout
