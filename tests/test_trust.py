"""Workspace trust and the doors a cloned repository had (see tests/hostile_repo.py).

Untrusted, a project's files only take away: deny and ask rules apply and hooks run,
what would grant is withheld and named once per file. Trusted, its ``env`` still goes
through an allowlist. The agent's own guard files ask in every mode but auto, at any
depth. Every configuration file is read bounded; a project's ``.mcp.json`` never
expands a secret; the user's command wins a name clash; a guard whose answer cannot be
read blocks.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from agent_tui.commands.files import load_commands
from agent_tui.config_file import Unreadable, read_config
from agent_tui.hooks.answers import decide
from agent_tui.hooks.config import HookCommand
from agent_tui.hooks.runner import CommandRun
from agent_tui.permissions import PermissionRules, Permissions, Rule
from agent_tui.protocol import Verdict
from agent_tui.protocol.states import HookDecision, HookEnding, HookEvent
from agent_tui.settings import load_settings
from agent_tui.settings.mcp_servers import load_config
from agent_tui.settings.trust import RECORD_FILE, TrustSource, decide as decide_trust, remember
from agent_tui.tools.files import EditFileTool, WriteFileTool
from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.hooks_support import tool_results
from tests.hostile_repo import make_hostile_repo, opened_doors
from tests.print_agent import env_for

KEY = "sk-ant-hostile-test-key-0123"
#: What Claude Code 2.1.197 prints on stderr in an untrusted workspace (observed with
#: -p against the fake API); agent-tui names every part it withholds in the same place.
CLAUDE_CODE_SAYS = ("Ignoring 4 permissions.allow entries from .claude/settings.json and "
                    ".claude/settings.local.json: this workspace has not been trusted.")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return make_hostile_repo(tmp_path / "ws")


def loaded(ws: Path, tmp_path: Path, *, trusted: bool):
    return load_settings(ws, user_dir=tmp_path / "user", claude_dir=tmp_path / "claude",
                         trusted=trusted)


# -- print mode: the model tries the doors ---------------------------------------------


def test_an_untrusted_repository_grants_nothing_and_its_guard_still_runs(fake_api, tmp_path,
                                                                          hostile: Path) -> None:
    ws = hostile
    fake_api.enqueue(Reply.tool_uses([
        ("bash", {"command": "touch pushed"}, "toolu_allowed"),
        ("bash", {"command": "touch local-allowed"}, "toolu_local"),
        ("bash", {"command": "git push --force origin main"}, "toolu_force"),
        ("write_file", {"path": "sub/.claude/settings.json", "content": "{}"}, "toolu_nested"),
        ("write_file", {"path": ".mcp.json", "content": "{}"}, "toolu_mcp"),
        ("edit_file", {"path": "lib/.git/hooks/pre-commit", "old_string": "a",
                       "new_string": "b"}, "toolu_hook"),
    ]), Reply.text("done"))
    env = env_for(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake_api.url,
                  XDG_CONFIG_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home-dir"))
    out = run_agent(["-p", "go", "--cwd", str(ws), "--permission-mode", "accept-edits"],
                    env=env, timeout=90)
    assert out.returncode == 0, out.stderr
    assert opened_doors(ws) == []  # no allow rule, helper, fsmonitor, server or env door
    said = {b["tool_use_id"]: json.dumps(b["content"]) for b in tool_results(fake_api.requests[-1])}
    assert "no one to ask" in said["toolu_allowed"] and "no one to ask" in said["toolu_local"]
    # the project's own guard ran in the default mode, untrusted, and stopped the push
    assert "git push --force origin main" in (ws / "guard-log").read_text()
    assert "no force pushes" in said["toolu_force"]
    for call in ("toolu_nested", "toolu_mcp", "toolu_hook"):  # the guard files, at any depth
        assert "guard files" in said[call], said[call]
    assert not (ws / "sub").exists() and json.loads((ws / ".mcp.json").read_text())["mcpServers"]
    # one notice per file names what was withheld
    assert out.stderr.count("this folder is not trusted") == 2, out.stderr
    for part in ("permissions.allow (2 rules)", "permissions.defaultMode acceptEdits",
                 "permissions.additionalDirectories", "env (5 variables)", "sandbox",
                 "apiKeyHelper", "MCP server approvals", "permissions.allow (1 rule)"):
        assert part in out.stderr, (part, out.stderr)
    assert KEY not in out.stderr + out.stdout
    seen = (ws / "guard-seen").read_text()  # a hook gets neither the key nor the project's env
    assert KEY not in seen and '"NODE_ENV"' not in seen


# -- trust ------------------------------------------------------------------------------


def test_trust_comes_from_the_flag_the_records_or_having_nothing_to_trust(tmp_path,
                                                                            hostile: Path) -> None:
    state, claude_json = tmp_path / "state", tmp_path / "claude.json"
    assert decide_trust(hostile, flag=False, state=state, claude_json=claude_json).source \
        is TrustSource.UNTRUSTED
    assert decide_trust(hostile, flag=True, state=state, claude_json=claude_json).trusted
    claude_json.write_text(json.dumps({"projects": {str(hostile): {"hasTrustDialogAccepted": True}}}))
    assert decide_trust(hostile, flag=False, state=state, claude_json=claude_json).source \
        is TrustSource.CLAUDE_CODE
    claude_json.unlink()
    remember(hostile, state)
    assert stat.S_IMODE((state / RECORD_FILE).stat().st_mode) == 0o600
    assert decide_trust(hostile, flag=False, state=state, claude_json=claude_json).source \
        is TrustSource.RECORD
    inner = hostile / "sub"  # trust is per folder, never inherited
    (inner / ".claude").mkdir(parents=True)
    assert not decide_trust(inner, flag=False, state=state, claude_json=claude_json).trusted
    plain = tmp_path / "plain"
    plain.mkdir()
    assert decide_trust(plain, flag=False, state=state, claude_json=claude_json).source \
        is TrustSource.NOTHING_TO_TRUST


def test_untrusted_a_projects_settings_only_take_away(tmp_path, hostile: Path) -> None:
    settings = loaded(hostile, tmp_path, trusted=False)
    assert settings.allow == [] and [r.text for r in settings.deny] == ["Bash(rm:*)"]
    assert settings.default_mode is None and settings.env == {} and settings.user_env == {}
    assert not settings.sandbox.enabled and settings.api_key_helper is None
    assert not settings.mcpjson.approves_any and settings.additional_directories == []
    assert len(settings.hooks) == 1  # the guard stays
    assert CLAUDE_CODE_SAYS.split(":")[1].strip().startswith("this workspace")


def test_trusted_a_projects_env_passes_an_allowlist_and_never_reaches_the_users_hooks(
        tmp_path, hostile: Path) -> None:
    settings = loaded(hostile, tmp_path, trusted=True)
    assert settings.env == {"NODE_ENV": "production"}
    assert settings.user_env == {}  # what every hook gets
    [refused] = [p for p in settings.problems if "not taken from a project's file" in p]
    for name in ("HOME", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"):
        assert name in refused
    # its sandbox is on, but only the user makes sandboxed commands run unasked
    assert settings.sandbox.enabled and not settings.user_sandbox
    assert [r.text for r in settings.allow] == ["Bash(touch pushed)", "Bash(git push:*)",
                                                "Bash(touch local-allowed)"]


# -- the agent's own guard files ---------------------------------------------------------


GUARDS = ["sub/.claude/settings.json", ".agent-tui/settings.json", "a/b/.mcp.json",
          "vendor/lib/.git/hooks/pre-commit", ".git/config", "docs/CLAUDE.md", "pkg/AGENTS.md"]


@pytest.mark.parametrize("path", GUARDS)
@pytest.mark.parametrize("mode", ["ask", "accept-edits", "dont-ask", "auto"])
def test_a_guard_file_write_asks_in_every_mode_but_auto_over_an_allow_rule(tmp_path, path,
                                                                           mode) -> None:
    rules = PermissionRules(allow=[Rule.parse("Write"), Rule.parse("Edit")])
    policy = Permissions(tmp_path, mode, rules)
    for tool, args in ((WriteFileTool(), {"path": path, "content": "x"}),
                       (EditFileTool(), {"path": path, "old_string": "a", "new_string": "b"})):
        ruling = policy.check(tool, tool.parse(args))
        want = {"auto": Verdict.ALLOW, "dont-ask": Verdict.DENY}.get(mode, Verdict.ASK)
        assert ruling.verdict is want, ruling
        if mode != "auto":
            assert "guard files" in ruling.reason


def test_a_deny_rule_still_denies_a_guard_file_and_reads_are_not_asked(tmp_path) -> None:
    policy = Permissions(tmp_path, "ask", PermissionRules(deny=[Rule.parse("Write(**/.mcp.json)")]))
    write = WriteFileTool()
    assert policy.check(write, write.parse({"path": "x/.mcp.json", "content": "{}"})).verdict \
        is Verdict.DENY
    from agent_tui.tools.files import ReadFileTool

    read = ReadFileTool()
    assert policy.check(read, read.parse({"path": ".claude/settings.json"})).verdict \
        is Verdict.ALLOW


# -- hooks that guard ------------------------------------------------------------------


def _hook() -> HookCommand:
    return HookCommand(event=HookEvent.PRE_TOOL_USE, command="./guard.sh", file=Path("s.json"))


@pytest.mark.parametrize(("stdout", "cut"), [
    ('{"hookSpecificOutput": {"permissionDecision": "deny"' + " " * 70000, True),
    ('{"hookSpecificOutput": {"permissionDecision": "deny", ', False),
])
def test_a_guard_whose_answer_is_cut_or_malformed_blocks(stdout: str, cut: bool) -> None:
    ran = CommandRun(ending=HookEnding.EXITED, exit_code=0, stdout=stdout, stdout_cut=cut)
    run = decide(HookEvent.PRE_TOOL_USE, _hook(), ran)
    assert run.decision is HookDecision.BLOCK and "treated as a block" in run.reason
    after = decide(HookEvent.POST_TOOL_USE, _hook(), ran)  # gates nothing: said only
    assert after.decision is HookDecision.NONE


@pytest.mark.asyncio
async def test_a_guard_padded_past_what_is_kept_blocks_for_real(tmp_path) -> None:
    from agent_tui.cancel import CancelScope
    from agent_tui.hooks.runner import run_command

    padded = ("python3 -c 'import json; print(json.dumps({\"hookSpecificOutput\": "
              "{\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"x\" * 200000}}))'")
    ran = await run_command(padded, b"{}", cwd=tmp_path, env=dict(os.environ), timeout_s=30,
                            scope=CancelScope("test"))
    assert ran.stdout_cut
    assert decide(HookEvent.PRE_TOOL_USE, _hook(), ran).decision is HookDecision.BLOCK


# -- configuration files, secrets, commands ---------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_special_files_are_refused_with_a_clear_message_not_read(tmp_path, kind) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude" / "commands").mkdir(parents=True)
    places = [ws / ".mcp.json", ws / ".claude" / "settings.json",
              ws / ".claude" / "commands" / "x.md"]
    for place in places:
        if kind == "fifo":
            os.mkfifo(place)  # nobody writes: a read would block forever
        else:
            place.symlink_to("/dev/zero")  # a read would fill memory
    with pytest.raises(Unreadable, match="not a regular file"):
        read_config(places[0])
    config = load_config(ws, user_config_dir=tmp_path / "user", claude_json=tmp_path / "none")
    assert any("not a regular file" in str(p) for p in config.problems)
    settings = loaded(ws, tmp_path, trusted=True)
    assert any("not a regular file" in p for p in settings.problems)
    commands = load_commands(ws, tmp_path / "user", tmp_path / "claude")
    assert any("not a regular file" in p for p in commands.problems)
    # read before the settings loader: the cloud variables and the theme
    from agent_tui.cli import _settings_theme
    from agent_tui.cli.cloud_env import _env_of

    assert _env_of(places[1]) == {} and _settings_theme(ws) is None
    # and what reads them later: the watches between turns, the TUI's vim mode, a saved
    # setting (each returns, none waits on the file)
    from agent_tui.runtime.file_watch import FileWatch
    from agent_tui.settings.local_rules import save_local_key
    from agent_tui.ui.app.preferences import editor_mode

    watch = FileWatch(lambda: places)
    watch.look()
    assert not watch.look()
    assert editor_mode(ws) is None
    local = ws / ".claude" / "settings.local.json"
    os.mkfifo(local) if kind == "fifo" else local.symlink_to("/dev/zero")
    assert save_local_key(ws, "outputStyle", "Explanatory")  # refused, with why
    assert (local.is_fifo() if kind == "fifo" else local.is_symlink())  # left as it was


def test_print_mode_in_a_folder_whose_settings_are_fifos_ends(fake_api, tmp_path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    for place in (ws / ".mcp.json", ws / ".claude" / "settings.json",
                  ws / ".claude" / "settings.local.json"):
        os.mkfifo(place)  # nobody writes: a read would block forever
    fake_api.enqueue(Reply.text("fine"))
    env = env_for(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake_api.url,
                  HOME=str(tmp_path / "home-dir"), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    out = run_agent(["-p", "hi", "--cwd", str(ws)], env=env, timeout=60)
    assert out.returncode == 0 and "fine" in out.stdout, out.stderr
    assert "not a regular file" in out.stderr


def test_a_projects_mcp_json_never_expands_a_secret_but_the_users_file_may(tmp_path,
                                                                           hostile: Path) -> None:
    environ = {"ANTHROPIC_API_KEY": KEY, "HOME": "/home/x"}
    config = load_config(hostile, user_config_dir=tmp_path / "user", environ=environ,
                         claude_json=tmp_path / "none")
    assert config.servers == []
    [problem] = config.problems
    assert "${ANTHROPIC_API_KEY} is not expanded in a project's .mcp.json" in str(problem)
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "mcp.json").write_text((hostile / ".mcp.json").read_text())
    (hostile / ".mcp.json").unlink()
    [mine] = load_config(hostile, user_config_dir=tmp_path / "user", environ=environ,
                         claude_json=tmp_path / "none").servers
    assert KEY in " ".join(mine.args)


def test_the_users_command_wins_over_a_projects_of_the_same_name(tmp_path, hostile: Path) -> None:
    user = tmp_path / "user"
    (user / "commands").mkdir(parents=True)
    (user / "commands" / "commit.md").write_text("Commit what is staged.\n")
    found = load_commands(hostile, user, tmp_path / "claude")
    [commit] = [c for c in found.commands if c.name == "commit"]
    assert commit.source == str(user / "commands" / "commit.md") and commit.allowed_tools == []
    [said] = [p for p in found.problems if "commit" in p]
    assert "is also your own command" in said and "yours is used" in said


def test_git_at_start_up_runs_none_of_the_repositorys_commands(tmp_path, hostile: Path,
                                                               monkeypatch) -> None:
    from agent_tui.core.memory.prompt import environment

    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")  # and no variable adds config either
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", f"touch '{hostile}/env-fsmonitor-ran'; false")
    text = environment(hostile)
    assert "Git status at session start (4 changed)" in text and "M README.md" in text
    assert opened_doors(hostile) == []
    with open(hostile / ".git" / "config", "a") as fh:
        fh.write(f"[filter \"lfs\"]\n\tclean = touch '{hostile}/fsmonitor-ran'\n")
    assert "not read (the repository's config names filter commands" in environment(hostile)
    assert opened_doors(hostile) == []


def test_a_malformed_models_api_answer_is_a_message(tmp_path) -> None:
    import asyncio
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from agent_tui.providers.base import ProviderError

    class ListAnswer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # /v1/models/{id} answering a list
            body = b'[{"id": "claude-x"}]'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), ListAnswer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        os.environ["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{server.server_port}"
        os.environ["ANTHROPIC_API_KEY"] = "k"
        from agent_tui.providers.anthropic import AnthropicProvider

        with pytest.raises(ProviderError, match="Models API answered in a shape"):
            asyncio.run(AnthropicProvider().model_info("claude-x"))
    finally:
        server.shutdown()
        os.environ.pop("ANTHROPIC_BASE_URL")
        os.environ.pop("ANTHROPIC_API_KEY")


def test_an_mcp_servers_stderr_log_is_owner_only(tmp_path) -> None:
    from agent_tui.mcp.transports import StderrLog
    from agent_tui.settings.mcp_servers import ServerConfig, Transport

    config = ServerConfig(name="s", transport=Transport.STDIO, source=tmp_path / "m.json",
                          command=sys.executable)
    handle = StderrLog(config, tmp_path / "logs").open()
    assert handle is not None
    handle.close()
    assert stat.S_IMODE((tmp_path / "logs" / "s.log").stat().st_mode) == 0o600


def test_print_mode_writes_no_escape_sequence_to_a_terminal() -> None:
    import io

    from agent_tui.headless import Printer
    from agent_tui.protocol import Notice, NoticeLevel, TextDelta

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    hostile = "hi \x1b]52;c;ZXZpbA==\x07\x1b[2Jthere\x9b\x07\n"
    out, err = Terminal(), Terminal()
    printer = Printer("text", out, err)
    printer(TextDelta(turn_id="t1", text=hostile))
    printer(Notice(level=NoticeLevel.WARNING, text="\x1b]0;title\x07named"))
    assert out.getvalue() == "hi there\n" and err.getvalue() == "warning: named\n"
    piped = io.StringIO()  # a pipe or a file gets the text as it is
    Printer("text", piped, io.StringIO())(TextDelta(turn_id="t1", text=hostile))
    assert piped.getvalue() == hostile


def test_a_trusted_repository_gets_its_rules_but_not_the_names_that_run_code(
        fake_api, tmp_path, hostile: Path) -> None:
    from tests.sandbox_support import BWRAP_PROBLEM

    if BWRAP_PROBLEM is not None:  # its settings turn the sandbox on: it must run
        pytest.skip(f"bwrap cannot run: {BWRAP_PROBLEM}")
    ws = hostile
    fake_api.enqueue(Reply.tool_uses([
        ("bash", {"command": "touch pushed"}, "toolu_allowed"),
        ("bash", {"command": "echo \"$NODE_ENV $HOME\" > env-seen"}, "toolu_env"),
    ]), Reply.text("done"))
    env = env_for(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake_api.url,
                  XDG_CONFIG_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home-dir"))
    out = run_agent(["-p", "go", "--cwd", str(ws), "--trust"], env=env, timeout=90)
    assert out.returncode == 0, out.stderr
    assert (ws / "pushed").exists()  # its allow rule applies, in its sandbox
    # its sandbox is on, but only the user makes a sandboxed command run unasked
    said = {b["tool_use_id"]: json.dumps(b["content"]) for b in tool_results(fake_api.requests[-1])}
    assert "no one to ask" in said["toolu_env"] and not (ws / "env-seen").exists()
    assert "env HOME, GIT_CONFIG_COUNT, GIT_CONFIG_KEY_0, GIT_CONFIG_VALUE_0: not taken" \
        in out.stderr
    assert "this folder is not trusted" not in out.stderr
    assert [m for m in opened_doors(ws) if m != "pushed"] == []
    assert '"NODE_ENV"' not in (ws / "guard-seen").read_text()  # hooks: the user's env only


@pytest.mark.asyncio
async def test_acp_says_what_an_untrusted_folder_was_refused(fake_api, tmp_path) -> None:
    from acp import text_block

    from tests.acp_client import RecordingClient, acp_agent, agent_env, start

    ws = make_hostile_repo(tmp_path / "ws")
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch pushed"}), Reply.text("ok"))
    client = RecordingClient()
    env = agent_env(tmp_path, fake_api) | {"HOME": str(tmp_path / "home-dir")}
    async with acp_agent(client, ["--cwd", str(ws)], env=env, cwd=tmp_path) as (conn, _):
        session_id = await start(conn, ws)
        prompt = asyncio.ensure_future(conn.prompt(session_id=session_id,
                                                   prompt=[text_block("push")]))
        await client.wait_for(lambda: client.permission_requests, timeout=60)  # not allowed
        from acp.schema import AllowedOutcome, RequestPermissionResponse

        await client.answers.put(RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="reject_once")))
        await prompt
    said = client.text(session_id)
    assert "this folder is not trusted" in said and "permissions.allow (2 rules)" in said
    assert opened_doors(ws) == []
