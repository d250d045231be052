"""A Claude Code user's settings files, as they bring them: read, merged and kept safe.

The files in ``claude_settings_fixtures/`` are in the shapes Claude Code documents
(``$schema``, keys agent-tui does not have, rules with ``*``, ``:*``, ``./``, ``//``,
``~/``, ``/``, ``domain:`` and ``mcp__``), installed here as a user's
``~/.claude/settings.json`` and a project's ``.claude/settings.json`` and
``.claude/settings.local.json``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult
from agent_tui.permissions import PermissionRules, Permissions, Rule
from agent_tui.protocol import PermissionMode
from agent_tui.protocol import Verdict
from agent_tui.settings import load_settings
from agent_tui.tools.bash import BashTool
from agent_tui.tools.files import EditFileTool, ReadFileTool, WriteFileTool
from agent_tui.tools.search.tools import GlobTool, GrepTool
from agent_tui.tools.web.tool import WebFetchTool
from tests.fake_api import Reply
from tests.forked_runs import run_agent

FIXTURES = Path(__file__).parent / "claude_settings_fixtures"
AGENT = [sys.executable, "-m", "agent_tui.cli"]
BASH, READ, WRITE, EDIT = BashTool(), ReadFileTool(), WriteFileTool(), EditFileTool()
GREP, GLOB, FETCH = GrepTool(), GlobTool(), WebFetchTool()


class _Mcp(Tool):
    description = "an MCP tool"

    class Input(BaseModel):
        text: str = ""

    def __init__(self, name: str) -> None:
        self.name = name

    async def run(self, args, ctx: ToolContext) -> ToolResult:  # pragma: no cover
        return ToolResult.ok("")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A made-up home folder: ``~``, ``~/.claude`` and the XDG folders are in it."""
    home = tmp_path / "home-of-user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    return home


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    return root


def install(home: Path, ws: Path, *, local: bool = True) -> dict[str, Path]:
    placed = {
        "user": home / ".claude" / "settings.json",
        "project": ws / ".claude" / "settings.json",
    }
    if local:
        placed["local"] = ws / ".claude" / "settings.local.json"
    for name, path in placed.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / f"{name}_settings.json", path)
    return placed


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def policy_of(ws: Path, mode: str = "auto") -> Permissions:
    return Permissions(ws, mode, load_settings(ws, trusted=True).permissions_rules())


def verdict(policy: Permissions, tool: Tool, **args) -> Verdict:
    return policy.check(tool, tool.parse(args)).verdict


# -- reading and merging -----------------------------------------------------------


def test_claude_code_files_are_read_in_order_and_merged(home: Path, ws: Path) -> None:
    placed = install(home, ws)
    loaded = load_settings(ws, trusted=True)
    assert loaded.files == [placed["user"], placed["project"], placed["local"]]
    deny = [r.text for r in loaded.deny]
    assert "Read(~/.ssh/**)" in deny  # the user's
    assert "Bash(rm -rf *)" in deny  # the project's
    assert "Bash(git reset --hard:*)" in deny  # the local file's
    assert loaded.model == "claude-opus-4-1"  # the local file is highest
    assert loaded.default_mode is PermissionMode.PLAN  # the local file's plan
    assert loaded.env == {"DISABLE_TELEMETRY": "1", "NODE_ENV": "test"}  # no BASH_ENV


def test_unknown_keys_are_named_once_and_the_files_deny_rules_stay(home: Path, ws: Path) -> None:
    placed = install(home, ws, local=False)
    loaded = load_settings(ws, trusted=True)
    user = [p for p in loaded.problem_details if p.file == placed["user"]]
    [notice] = [p for p in user if "not supported by agent-tui" in p.message]
    for key in ("includeCoAuthoredBy", "cleanupPeriodDays", "forceLoginMethod"):
        assert notice.message.count(key) == 1, key
    assert "outputStyle" not in notice.message  # taken: the output style
    assert "enabledPlugins" not in notice.message  # read by plugins/
    assert "statusLine" not in notice.message  # run by the TUI
    assert "additionalDirectories" not in notice.message  # taken, as --add-dir
    assert loaded.additional_directories == ["../shared-docs/"]
    assert "$schema" not in notice.message and "apiKeyHelper" not in notice.message
    assert loaded.api_key_helper == "~/bin/print-api-key.sh"  # the user's: taken
    assert (notice.line, notice.column) == (line_of(placed["user"], "includeCoAuthoredBy"), 3)
    assert user == [notice]  # nothing else is wrong in that file
    # its rules, mode and env apply all the same
    p = policy_of(ws)
    assert verdict(p, READ, path=str(home / ".ssh" / "id_rsa")) is Verdict.DENY
    assert verdict(p, BASH, command="curl https://example.com") is Verdict.DENY
    project = [p for p in loaded.problem_details if p.file == placed["project"]]
    assert any("enableAllProjectMcpServers" in p.message for p in project)
    assert all(p.only_this for p in loaded.problem_details)


def test_a_rule_naming_no_tool_is_warned_about_with_its_place(home: Path, ws: Path) -> None:
    placed = install(home, ws)
    local = placed["local"]
    loaded = load_settings(ws, trusted=True)
    problems = [str(p) for p in loaded.problem_details if p.file == local]
    line = line_of(local, "Bsah(ls)")
    assert (f"{local}:{line}:7: permissions.deny[0]: permission rule 'Bsah(ls)' names no "
            "known tool 'Bsah' (did you mean \"Bash\"?) (skipped)") in problems
    line = line_of(local, '"ReadFile"')
    assert any(p.startswith(f"{local}:{line}:7: permissions.deny[1]: permission rule "
                            "'ReadFile' names no known tool") for p in problems)
    # the file's other rules apply
    assert verdict(policy_of(ws), BASH, command="git reset --hard HEAD~1") is Verdict.DENY
    assert "defaultMode plan" not in " ".join(problems)  # plan mode is there
    assert loaded.default_mode is PermissionMode.PLAN
    assert loaded.auto_disabled_by == local  # disableBypassPermissionsMode is understood


def test_disable_bypass_permissions_mode_refuses_auto(fake_api, tmp_path: Path, home: Path,
                                                      ws: Path) -> None:
    placed = install(home, ws)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=fake_api.url, HOME=str(home),
               AGENT_TUI_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(home / ".config"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    out = run_agent(
        ["-p", "hi", "--cwd", str(ws), "--permission-mode", "auto",
         "--model", "claude-haiku-4-5"],
        env=env, timeout=90,
    )
    assert out.returncode != 0
    assert (f"turned off by permissions.disableBypassPermissionsMode in {placed['local']}"
            in out.stderr)
    assert fake_api.requests == []  # nothing reached the model


def test_a_project_cannot_grant_itself_bypass_mode_or_set_bash_env(home: Path, ws: Path) -> None:
    placed = install(home, ws, local=False)
    loaded = load_settings(ws, trusted=True)
    assert loaded.default_mode is PermissionMode.ACCEPT_EDITS  # the user's acceptEdits
    said = " ".join(str(p) for p in loaded.problem_details if p.file == placed["project"])
    assert "defaultMode bypassPermissions is only taken from your user settings" in said
    assert "env BASH_ENV: not taken from a project's file" in said


def test_claude_code_mode_words(home: Path, ws: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    for word, mode in [("default", "ask"), ("acceptEdits", "accept-edits"),
                       ("bypassPermissions", "auto"), ("plan", "plan"), ("dontAsk", "dont-ask"),
                       ("auto", "ask")]:
        path.write_text(json.dumps({"permissions": {"defaultMode": word}}))
        loaded = load_settings(ws, trusted=True)
        assert loaded.default_mode == PermissionMode(mode), word
        noted = word == "auto"  # Claude Code's auto (a classifier) is not agent-tui's
        assert bool(loaded.problems) is noted, (word, loaded.problems)


# -- tool names --------------------------------------------------------------------


@pytest.mark.parametrize(("claude", "ours"), [
    ("Bash(rm:*)", "bash(rm:*)"), ("Read(.env)", "read_file(.env)"),
    ("Write(*.lock)", "write_file(*.lock)"), ("WebFetch(domain:x.org)", "web_fetch(domain:x.org)"),
])
def test_both_spellings_are_one_rule_shown_in_claude_codes(claude: str, ours: str) -> None:
    a, b = Rule.parse(claude), Rule.parse(ours)
    assert a.text == b.text == claude
    assert a.tools == b.tools


def test_both_spellings_deny_alike(ws: Path) -> None:
    for rules in (["Bash(rm:*)", "Read(.env)"], ["bash(rm:*)", "read_file(.env)"]):
        p = Permissions(ws, "auto", PermissionRules(deny=rules))
        assert verdict(p, BASH, command="rm -rf src") is Verdict.DENY
        assert verdict(p, READ, path="config/.env") is Verdict.DENY
        ruling = p.check(BASH, BASH.parse({"command": "rm x"}))
        assert ruling.reason == "denied by rule Bash(rm:*)"


def test_session_rules_and_reasons_speak_claude_codes_names(ws: Path) -> None:
    p = Permissions(ws, "ask")
    ruling = p.check(BASH, BASH.parse({"command": "make"}))
    assert ruling.reason == "Bash runs a command"
    p.remember(BASH, BASH.parse({"command": "make"}))
    p.remember(WRITE, WRITE.parse({"path": "src/a.py", "content": ""}))
    assert [r.text for r in p.session_rules] == [
        "Bash(make)", f"Write(/{os.path.realpath(ws / 'src' / 'a.py')})"]
    assert Rule.parse(p.session_rules[1].text).path.root == "filesystem"  # // is absolute


# -- rule syntax -------------------------------------------------------------------


def test_bash_wildcards_prefixes_and_compound_commands(ws: Path) -> None:
    p = Permissions(ws, "ask", PermissionRules(
        allow=["Bash(git diff *)", "Bash(npm run test:*)", "Bash(ls*)"],
        deny=["Bash(rm -rf *)"],
    ))
    allowed = ["git diff", "git diff HEAD~1 -- src", "npm run test", "npm run test -- -x",
               "lsof -i", "git diff && npm run test"]
    for command in allowed:
        assert verdict(p, BASH, command=command) is Verdict.ALLOW, command
    for command in ["git difftool", "npm run testx", "git diff; make", "git diff $(make)"]:
        assert verdict(p, BASH, command=command) is Verdict.ASK, command
    for command in ["rm -rf /", "git diff && rm -rf src", "echo hi | rm -rf x"]:
        assert verdict(p, BASH, command=command) is Verdict.DENY, command
    assert verdict(Permissions(ws, "ask", PermissionRules(allow=["Bash(*)"])), BASH,
                   command="anything at all") is Verdict.ALLOW


def test_path_forms_resolve_as_claude_code_says(home: Path, ws: Path) -> None:
    install(home, ws, local=False)
    p = policy_of(ws)
    # //path: from the filesystem's root
    assert verdict(p, READ, path="/etc/shadow") is Verdict.DENY
    assert verdict(p, READ, path="etc/shadow") is Verdict.ALLOW
    # ~/path: from the home folder
    assert verdict(p, READ, path=str(home / ".ssh" / "config")) is Verdict.DENY
    assert verdict(p, READ, path=".ssh/config") is Verdict.ALLOW
    # ./path and a bare name: the working directory; no slash matches at any depth
    assert verdict(p, READ, path=".env") is Verdict.DENY
    assert verdict(p, READ, path="api/.env") is Verdict.DENY
    assert verdict(p, READ, path="secrets/token") is Verdict.DENY
    assert verdict(p, READ, path="api/secrets/token") is Verdict.ALLOW  # anchored by its "/"
    # /path in a project file: the project root (a deny also from the filesystem's root)
    assert verdict(p, WRITE, path=".github/workflows/ci.yml", content="") is Verdict.DENY
    ask = policy_of(ws, "ask")
    assert verdict(ask, EDIT, path="src/a.py", old_string="a", new_string="b") is Verdict.ALLOW
    assert verdict(ask, EDIT, path="lib/src/a.py", old_string="a", new_string="b") is Verdict.ASK
    # /path in the user's ~/.claude/settings.json: that folder
    assert verdict(p, WRITE, path=str(home / ".claude" / "hooks" / "x.sh"), content="") \
        is Verdict.DENY
    assert verdict(p, WRITE, path="hooks/x.sh", content="") is Verdict.ALLOW


def test_a_deny_slash_rule_also_covers_the_absolute_reading(tmp_path: Path, ws: Path) -> None:
    outside = tmp_path / "vault"
    p = Permissions(ws, "auto", PermissionRules(deny=[f"Read({outside}/**)"]))
    assert verdict(p, READ, path=str(outside / "key")) is Verdict.DENY  # as the user meant
    allow = Permissions(ws, "ask", PermissionRules(allow=[f"Edit({outside}/**)"]))
    assert verdict(allow, WRITE, path=str(outside / "key"), content="") is Verdict.ASK
    old = Permissions(ws, "ask", PermissionRules(allow=[f"write_file({outside}/**)"]))
    assert verdict(old, WRITE, path=str(outside / "key"), content="") is Verdict.ALLOW


def test_read_rules_govern_glob_and_grep_and_edit_rules_every_editing_tool(ws: Path) -> None:
    p = Permissions(ws, "auto", PermissionRules(deny=["Read(./secrets/**)", "Edit(docs/**)"]))
    assert verdict(p, GREP, pattern="key", path="secrets") is Verdict.DENY
    assert verdict(p, GLOB, pattern="*", path="secrets/deeper") is Verdict.DENY
    assert verdict(p, GREP, pattern="key") is Verdict.ALLOW  # the workspace is not secrets/
    assert verdict(p, WRITE, path="docs/a.md", content="") is Verdict.DENY
    assert verdict(p, EDIT, path="docs/a.md", old_string="a", new_string="b") is Verdict.DENY
    assert verdict(p, READ, path="docs/a.md") is Verdict.ALLOW
    everything = Permissions(ws, "auto", PermissionRules(deny=["Read"]))
    assert verdict(everything, GREP, pattern="x") is Verdict.DENY


def test_web_fetch_domains_and_mcp_servers(home: Path, ws: Path) -> None:
    install(home, ws, local=False)
    p = policy_of(ws, "ask")
    assert verdict(p, FETCH, url="https://docs.python.org/3/") is Verdict.ALLOW
    assert verdict(p, FETCH, url="https://evil.example/") is Verdict.ASK
    assert verdict(p, _Mcp("mcp__github__create_issue")) is Verdict.ALLOW  # mcp__github
    assert verdict(p, _Mcp("mcp__githubx__create_issue")) is Verdict.ASK
    assert verdict(p, _Mcp("mcp__slack__post_message")) is Verdict.DENY
    assert verdict(p, _Mcp("mcp__slack__read_channel")) is Verdict.ASK
    star = Permissions(ws, "ask", PermissionRules(allow=["mcp__slack__*"]))
    assert verdict(star, _Mcp("mcp__slack__read_channel")) is Verdict.ALLOW


# -- through print mode ------------------------------------------------------------


def test_a_denied_command_never_runs_in_print_mode(fake_api, tmp_path: Path, home: Path,
                                                   ws: Path) -> None:
    """Claude Code's files in their places, ``--permission-mode auto``: only the deny
    rules stand between the model and the command, and they hold."""
    placed = install(home, ws, local=False)
    (ws / "victim").mkdir()
    fake_api.enqueue(
        Reply.tool_uses([
            ("bash", {"command": "make -v >/dev/null; rm -rf victim"}, "toolu_rm"),
            ("bash", {"command": "curl -s http://127.0.0.1:9/ > fetched"}, "toolu_curl"),
            ("bash", {"command": "echo ran > ran.txt"}, "toolu_ok"),
        ]),
        Reply.text("done"),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=fake_api.url, HOME=str(home),
               AGENT_TUI_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(home / ".config"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    out = run_agent(
        ["-p", "clean up", "--cwd", str(ws), "--permission-mode", "auto",
         "--model", "claude-haiku-4-5"],
        env=env, timeout=90,
    )
    assert out.returncode == 0, out.stderr
    assert (ws / "victim").is_dir() and not (ws / "fetched").exists()
    assert (ws / "ran.txt").read_text() == "ran\n"  # the rest ran: auto mode
    results = {
        block["tool_use_id"]: block for request in fake_api.requests
        for message in request["messages"] if isinstance(message["content"], list)
        for block in message["content"] if block.get("type") == "tool_result"
    }
    assert "denied by rule Bash(rm -rf *)" in json.dumps(results["toolu_rm"])
    assert "denied by rule Bash(curl *)" in json.dumps(results["toolu_curl"])
    notices = [line for line in out.stderr.splitlines() if "not supported by agent-tui" in line]
    assert len([n for n in notices if str(placed["user"]) in n]) == 1
    assert "includeCoAuthoredBy" in " ".join(notices)


def test_the_projects_hooks_wait_for_trust_and_the_users_do_not(home: Path, ws: Path) -> None:
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}
    files = [home / ".claude" / "settings.json", ws / ".claude" / "settings.json",
             ws / ".claude" / "settings.local.json", ws / ".agent-tui" / "settings.json"]
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"hooks": hooks, "statusLine": {"type": "command"}}))
    loaded = load_settings(ws, trusted=True)
    assert [(h.file, h.project) for h in loaded.hooks] == [
        (files[0], False), (files[1], True), (files[3], True), (files[2], True)]


# -- searches never show what Read may not -------------------------------------------

SECRET = "sk-live-0123456789"


@pytest.mark.asyncio
@pytest.mark.parametrize("backend", ["ripgrep", "python"])
async def test_a_search_leaves_out_the_files_a_deny_read_rule_names(ws: Path, backend) -> None:
    from agent_tui.cancel import CancelScope
    from agent_tui.files.ripgrep import find_rg

    rg = find_rg() if backend == "ripgrep" else None
    if backend == "ripgrep" and rg is None:
        pytest.skip("ripgrep is not installed")
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    (ws / "api").mkdir()
    (ws / "api" / ".env").write_text(f"API_KEY={SECRET}\n")
    (ws / "src" / "app.py").write_text("API_KEY = os.environ['API_KEY']\n")
    p = Permissions(ws, "auto", PermissionRules(deny=["Read(./.env)"]))
    ctx = ToolContext(scope=CancelScope(), workspace=ws, tool_use_id="t", operation_id="op")
    grep, glob = GrepTool(rg=rg), GlobTool(rg=rg)
    grep.read_denied = glob.read_denied = p.read_denied
    found = await grep.run(grep.parse({"pattern": "API_KEY", "output_mode": "content"}), ctx)
    assert "src/app.py" in found.content and SECRET not in found.content
    assert "[2 files left out: a deny rule forbids reading them.]" in found.content
    listed = await glob.run(glob.parse({"pattern": "**/.env"}), ctx)
    assert ".env" not in listed.content.replace("[2 files left out", "")
    assert "left out" in listed.content
    grep.read_denied = None  # without the rule the search would have shown it
    assert SECRET in (await grep.run(grep.parse({"pattern": "API_KEY", "output_mode": "content"}),
                                     ctx)).content


def test_a_search_in_print_mode_never_shows_a_denied_file(fake_api, tmp_path: Path, home: Path,
                                                          ws: Path) -> None:
    install(home, ws, local=False)
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    fake_api.enqueue(
        Reply.tool_uses([("grep", {"pattern": "API_KEY", "output_mode": "content"}, "toolu_g")]),
        Reply.text("done"),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=fake_api.url, HOME=str(home),
               AGENT_TUI_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(home / ".config"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    out = run_agent(
        ["-p", "find the key", "--cwd", str(ws), "--model", "claude-haiku-4-5"],
        env=env, timeout=90,
    )
    assert out.returncode == 0, out.stderr
    sent = json.dumps(fake_api.requests[-1]["messages"])
    assert "left out: a deny rule forbids reading" in sent and SECRET not in sent


def test_a_specifier_on_a_tool_that_has_nothing_to_match_is_said(home: Path, ws: Path) -> None:
    path = ws / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"permissions": {"deny": [\n  "TodoWrite(x)",\n  "mcp__github__create_issue(x)",'
                    '\n  "Bash(x)"\n]}}')
    loaded = load_settings(ws, trusted=True)
    assert [r.text for r in loaded.deny] == ["Bash(x)"]
    said = [str(p) for p in loaded.problem_details]
    assert said[0].startswith(f"{path}:2:3: permissions.deny[0]: permission rule 'TodoWrite(x)' "
                              "never matches: TodoWrite calls have nothing for (x) to match")
    assert said[1].startswith(f"{path}:3:3: permissions.deny[1]: permission rule "
                              "'mcp__github__create_issue(x)' never matches")


def test_permissions_page_names_each_rules_claude_code_file(home: Path, ws: Path) -> None:
    from agent_tui.ui.commands.reports import permissions_report
    from agent_tui.ui.link.session_facts import permission_facts

    placed = install(home, ws)
    loaded = load_settings(ws, trusted=True)
    policy = Permissions(ws, loaded.default_mode or "ask", loaded.permissions_rules())
    page = permissions_report(permission_facts(policy, ws)).plain
    assert placed["user"] == home / ".claude" / "settings.json"  # shown from ~ and the project
    assert "deny     Read(~/.ssh/**)   ~/.claude/settings.json\n" in page
    assert "deny     Bash(rm -rf *)   .claude/settings.json\n" in page
    assert "allow    Bash(pytest:*)   .claude/settings.local.json\n" in page
    assert "mode: plan  (from .claude/settings.local.json)" in page


def test_parent_steps_and_folder_patterns_never_match_less(tmp_path: Path, ws: Path) -> None:
    (tmp_path / "shared").mkdir()
    p = Permissions(ws, "auto", PermissionRules(deny=["Read(../shared/**)", "Read(keys/)"]))
    assert verdict(p, READ, path=str(tmp_path / "shared" / "token")) is Verdict.DENY
    assert verdict(p, READ, path="../shared/token") is Verdict.DENY
    assert verdict(p, READ, path=str(tmp_path / "other")) is Verdict.ALLOW
    assert verdict(p, READ, path="keys/id_rsa") is Verdict.DENY
    assert verdict(p, READ, path="deploy/keys/id_rsa") is Verdict.DENY  # gitignore: any depth
    assert verdict(p, READ, path="keys.txt") is Verdict.ALLOW
