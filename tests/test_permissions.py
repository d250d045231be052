"""Permission policy: modes, rule precedence, patterns, session memory, print mode."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.core.calls.permission import PermissionPolicy
from agent_tui.protocol import Verdict
from agent_tui.protocol import PermissionMode
from agent_tui.permissions import (
    InvalidRule,
    PermissionRules,
    Permissions,
    Rule,
)
from tests.permission_calls import (  # noqa: F401 (ws is a fixture)
    BASH, bash, edit, fake_tool, mcp, policy, read, verdict, write, ws,
)


# -- modes -------------------------------------------------------------------------


def test_ask_mode_allows_reads_and_asks_for_writes_and_commands(ws: Path) -> None:
    p = policy(ws, "ask")
    typed: PermissionPolicy = p  # the core sees only the protocol
    assert callable(typed.check) and callable(typed.remember)
    assert verdict(p, read("src/a.py")) is Verdict.ALLOW
    assert verdict(p, write("src/a.py")) is Verdict.ASK
    assert verdict(p, edit("src/a.py")) is Verdict.ASK
    assert verdict(p, bash("make")) is Verdict.ASK
    assert verdict(p, mcp()) is Verdict.ASK
    assert p.check(*bash("ls")).rule == "mode:ask"


def test_accept_edits_allows_file_edits_inside_the_workspace_only(ws: Path, tmp_path: Path) -> None:
    p = policy(ws, "accept-edits")
    assert verdict(p, write("src/a.py")) is Verdict.ALLOW
    assert verdict(p, edit(str(ws / "src" / "a.py"))) is Verdict.ALLOW
    assert verdict(p, write("../elsewhere.txt")) is Verdict.ASK
    assert verdict(p, write("/etc/passwd")) is Verdict.ASK
    (ws / "out").symlink_to(tmp_path)  # a link inside that leads out is not "inside"
    assert verdict(p, write("out/x.txt")) is Verdict.ASK
    assert verdict(p, bash("make")) is Verdict.ASK
    assert verdict(p, mcp()) is Verdict.ASK
    assert p.check(*write("src/a.py")).rule == "mode:accept-edits"


def test_auto_mode_allows_everything(ws: Path) -> None:
    p = policy(ws, "auto")
    for call in (bash("rm -rf build"), write("/etc/x"), mcp(), read("a")):
        ruling = p.check(*call)
        assert ruling.verdict is Verdict.ALLOW and ruling.rule == "mode:auto"


def test_unknown_mode_is_a_clear_error(ws: Path) -> None:
    with pytest.raises(ValueError, match="unknown permission mode 'yolo'"):
        Permissions(ws, "yolo")
    assert Permissions(ws, PermissionMode.AUTO).mode is PermissionMode.AUTO


# -- rules -------------------------------------------------------------------------


def test_deny_beats_ask_beats_allow(ws: Path) -> None:
    everything = ["bash(git push:*)"]
    p = policy(ws, "auto", allow=everything, ask=everything, deny=everything)
    ruling = p.check(*bash("git push origin main"))
    assert ruling.verdict is Verdict.DENY and ruling.rule == "deny:Bash(git push:*)"
    p = policy(ws, "auto", allow=everything, ask=everything)
    ruling = p.check(*bash("git push origin main"))
    assert ruling.verdict is Verdict.ASK and ruling.rule == "ask:Bash(git push:*)"
    p = policy(ws, "ask", allow=everything)
    ruling = p.check(*bash("git push origin main"))
    assert ruling.verdict is Verdict.ALLOW and ruling.rule == "allow:Bash(git push:*)"


def test_rules_beat_the_mode_and_mode_applies_when_none_match(ws: Path) -> None:
    p = policy(ws, "auto", deny=["write_file(secrets/**)"], ask=["bash(git push:*)"])
    assert verdict(p, write("secrets/key.pem")) is Verdict.DENY
    assert verdict(p, bash("git push")) is Verdict.ASK
    assert p.check(*write("src/a.py")).rule == "mode:auto"


def test_bash_prefix_rule_matches_whole_words(ws: Path) -> None:
    p = policy(ws, "ask", allow=["bash(git status:*)"])
    assert verdict(p, bash("git status")) is Verdict.ALLOW
    assert verdict(p, bash("git status -s")) is Verdict.ALLOW
    assert verdict(p, bash("  git status --short  ")) is Verdict.ALLOW
    assert verdict(p, bash("git statusx")) is Verdict.ASK
    assert verdict(p, bash("git")) is Verdict.ASK


def test_bash_rule_without_star_is_exact(ws: Path) -> None:
    p = policy(ws, "ask", allow=["bash(npm test)"])
    assert verdict(p, bash("npm test")) is Verdict.ALLOW
    assert verdict(p, bash("npm test --watch")) is Verdict.ASK


def test_allow_prefix_does_not_vouch_for_chained_or_substituted_commands(ws: Path) -> None:
    p = policy(ws, "ask", allow=["bash(git status:*)", "bash(git diff:*)"])
    assert verdict(p, bash("git status && git diff")) is Verdict.ALLOW
    assert p.check(*bash("git status; git diff")).rule == "allow:Bash(git status:*), Bash(git diff:*)"
    assert verdict(p, bash("git status; rm -rf /")) is Verdict.ASK
    assert verdict(p, bash("git status | sh")) is Verdict.ASK
    assert verdict(p, bash("git status $(rm -rf /)")) is Verdict.ASK
    assert verdict(p, bash("git status `rm -rf /`")) is Verdict.ASK
    assert verdict(p, bash("git status > notes.txt")) is Verdict.ASK
    assert verdict(p, bash("git status 2>&1")) is Verdict.ALLOW
    assert verdict(p, bash("git status >/dev/null")) is Verdict.ALLOW
    assert verdict(p, bash("git status 'a;b'")) is Verdict.ALLOW  # quoted: one command


def test_deny_and_ask_rules_match_any_part_of_a_chain(ws: Path) -> None:
    p = policy(ws, "auto", deny=["bash(rm:*)"], ask=["bash(git push:*)"])
    assert verdict(p, bash("ls && rm -rf build")) is Verdict.DENY
    assert verdict(p, bash("make; git push")) is Verdict.ASK
    assert verdict(p, bash("echo rm")) is Verdict.ALLOW


def test_path_globs(ws: Path) -> None:
    p = policy(ws, "ask", allow=["write_file(src/**)", "edit_file(*.md)"])
    assert verdict(p, write("src/a.py")) is Verdict.ALLOW
    assert verdict(p, write("src/deep/er/a.py")) is Verdict.ALLOW
    assert verdict(p, write(str(ws / "src" / "a.py"))) is Verdict.ALLOW
    assert verdict(p, write("srcx/a.py")) is Verdict.ASK
    assert verdict(p, write("src/../setup.py")) is Verdict.ASK
    assert verdict(p, edit("docs/guide/intro.md")) is Verdict.ALLOW  # no '/': any depth
    # as in Claude Code, a rule on one file-editing tool covers them all (Write, Edit...)
    assert verdict(p, edit("src/a.py")) is Verdict.ALLOW
    assert verdict(p, edit("docs/a.py")) is Verdict.ASK


def test_path_rules_see_through_symlinks(ws: Path) -> None:
    (ws / "secrets").mkdir()
    (ws / "src" / "keys").symlink_to(ws / "secrets")
    p = policy(ws, "ask", allow=["write_file(src/**)"], deny=["write_file(secrets/**)"])
    assert verdict(p, write("src/keys/id_rsa")) is Verdict.DENY
    p = policy(ws, "ask", allow=["write_file(src/**)"])
    assert verdict(p, write("src/keys/id_rsa")) is Verdict.ASK  # allow needs both forms


def test_absolute_path_pattern(ws: Path) -> None:
    p = policy(ws, "ask", allow=[f"write_file({ws}/src/**)"])
    assert verdict(p, write("src/a.py")) is Verdict.ALLOW
    assert verdict(p, write("a.py")) is Verdict.ASK


def test_tool_name_globs(ws: Path) -> None:
    p = policy(ws, "ask", allow=["mcp__github__*"], deny=["mcp__slack__*"])
    assert p.check(*mcp()).rule == "allow:mcp__github__*"
    assert verdict(policy(ws, "auto", deny=["mcp__*"]), mcp()) is Verdict.DENY
    assert verdict(policy(ws, "auto", deny=["*_file"]), write("a")) is Verdict.DENY
    assert verdict(policy(ws, "auto", deny=["*_file"]), bash("ls")) is Verdict.ALLOW


def test_specifier_never_matches_a_tool_without_subject(ws: Path) -> None:
    p = policy(ws, "ask", allow=["mcp__github__create_issue(anything)"])
    assert verdict(p, mcp()) is Verdict.ASK


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty permission rule"),
        ("   ", "empty permission rule"),
        ("bash(git status", "missing ')'"),
        ("bash()", "empty parentheses"),
        ("(ls)", "missing tool name"),
        ("bash)", "')' without '('"),
        ("ba sh", "may hold only"),
        ("bash(ls) extra", "missing ')'"),
    ],
)
def test_malformed_rules_are_clear_errors(text: str, problem: str) -> None:
    with pytest.raises(InvalidRule, match=re.escape(problem)):
        Rule.parse(text)


def test_rule_lists_parse_on_construction_with_clear_errors() -> None:
    rules = PermissionRules(allow=["bash(ls:*)"], deny=["write_file(.env)"])
    assert rules.allow[0] == Rule.parse("Bash(ls:*)")
    assert (rules.allow[0].text, rules.allow[0].tool) == ("Bash(ls:*)", "bash")
    with pytest.raises(InvalidRule, match="missing '\\)'"):
        PermissionRules(deny=["bash(rm"])
    with pytest.raises(InvalidRule, match="list of strings"):
        PermissionRules(allow="bash")


def test_parentheses_inside_a_specifier_are_kept() -> None:
    rule = Rule.parse("bash(echo (hi):*)")
    assert rule.tool == "bash" and rule.specifier == "echo (hi):*"


# -- session memory ----------------------------------------------------------------


def test_remember_allows_the_exact_command_for_the_session(ws: Path) -> None:
    p = policy(ws, "ask")
    p.remember(*bash("pytest -q"))
    ruling = p.check(*bash("pytest -q"))
    assert ruling.verdict is Verdict.ALLOW and ruling.rule == "session:Bash(pytest -q)"
    assert verdict(p, bash("pytest -q tests/x.py")) is Verdict.ASK
    assert verdict(p, bash("pytest -q; rm -rf /")) is Verdict.ASK
    assert verdict(policy(ws, "ask"), bash("pytest -q")) is Verdict.ASK  # session only


def test_remember_file_tools_by_path_and_other_tools_by_name(ws: Path) -> None:
    p = policy(ws, "ask")
    p.remember(*write("src/a.py"))
    assert verdict(p, write("src/a.py")) is Verdict.ALLOW
    assert verdict(p, write(str(ws / "src" / "a.py"))) is Verdict.ALLOW  # same file
    assert verdict(p, write("src/b.py")) is Verdict.ASK
    assert verdict(p, edit("src/a.py")) is Verdict.ASK  # another tool
    p.remember(*mcp())
    assert p.check(*mcp()).rule == "session:mcp__github__create_issue"
    p.remember(*mcp())
    assert len(p.session_rules) == 2


def test_remember_with_glob_characters_stays_exact(ws: Path) -> None:
    p = policy(ws, "ask")
    p.remember(*bash("touch *:*"))
    assert verdict(p, bash("touch *:*")) is Verdict.ALLOW
    assert verdict(p, bash("touch *")) is Verdict.ASK
    p.remember(*write("src/[a].py"))
    assert verdict(p, write("src/[a].py")) is Verdict.ALLOW
    assert verdict(p, write("src/a.py")) is Verdict.ASK


def test_deny_rule_still_beats_session_memory(ws: Path) -> None:
    p = policy(ws, "ask", deny=["bash(rm:*)"])
    p.remember(*bash("rm -rf build"))
    assert verdict(p, bash("rm -rf build")) is Verdict.DENY


def test_session_memory_answers_an_ask_rule_for_that_call(ws: Path) -> None:
    p = policy(ws, "auto", ask=["bash(git push:*)"])
    p.remember(*bash("git push"))
    assert verdict(p, bash("git push")) is Verdict.ALLOW
    assert verdict(p, bash("git push --force")) is Verdict.ASK


# -- print mode --------------------------------------------------------------------


def test_non_interactive_ask_mode_denies_and_says_why(ws: Path) -> None:
    p = Permissions(ws, "ask", non_interactive=True)
    ruling = p.check(*bash("make"))
    assert ruling.verdict is Verdict.DENY
    assert ruling.rule == "mode:ask"
    assert "permission mode ask denies Bash in print mode" in ruling.reason
    assert "--permission-mode" in ruling.reason
    assert verdict(p, read("a.py")) is Verdict.ALLOW


def test_non_interactive_accept_edits_allows_edits_denies_commands(ws: Path) -> None:
    p = Permissions(ws, "accept-edits", non_interactive=True)
    assert verdict(p, edit("src/a.py")) is Verdict.ALLOW
    ruling = p.check(*bash("make"))
    assert ruling.verdict is Verdict.DENY
    assert "permission mode accept-edits denies Bash in print mode" in ruling.reason


def test_non_interactive_ask_rule_denies_naming_the_rule(ws: Path) -> None:
    p = Permissions(ws, "auto", PermissionRules(ask=["bash(git push:*)"]), non_interactive=True)
    ruling = p.check(*bash("git push"))
    assert ruling.verdict is Verdict.DENY and ruling.rule == "ask:Bash(git push:*)"
    assert "no one to ask" in ruling.reason


def test_dont_ask_refuses_what_ask_would_ask_and_keeps_every_rule(ws: Path) -> None:
    rules = PermissionRules(allow=["Bash(make:*)", "Bash(rm:*)"], ask=["Bash(make deploy)"],
                            deny=["Bash(rm:*)"])
    p = Permissions(ws, "dontAsk", rules)  # interactive: still nobody is asked
    assert p.mode is PermissionMode.DONT_ASK
    assert verdict(p, read("src/a.py")) is Verdict.ALLOW  # read-only: never asked
    assert verdict(p, bash("make test")) is Verdict.ALLOW  # an allow rule
    denied = p.check(*bash("rm -rf x"))
    assert denied.verdict is Verdict.DENY and denied.reason == "denied by rule Bash(rm:*)"
    asked = p.check(*bash("make deploy"))  # an ask rule: refused, naming it
    assert asked.verdict is Verdict.DENY and asked.rule == "ask:Bash(make deploy)"
    assert "this session does not ask (permission mode dontAsk)" in asked.reason
    refused = p.check(*write("src/a.py"))
    assert refused.verdict is Verdict.DENY and refused.rule == "mode:dont-ask"
    assert refused.reason == (
        "permission mode dontAsk denies Write without asking (this session does not ask); an "
        f"allow rule such as Write(/{(ws / 'src' / 'a.py').resolve()}) would allow it")
    long = p.check(*bash("touch " + "x" * 200))  # no rule as long as the command
    assert long.reason.endswith("an allow rule for Bash would allow it")
    p.set_mode(PermissionMode.PLAN)  # plan mode rules as it always does
    planned = p.check(*write("src/a.py"))
    assert planned.verdict is Verdict.DENY and "plan mode" in planned.reason


def test_a_commands_allowed_tools_allow_in_dont_ask_mode(ws: Path) -> None:
    from agent_tui.commands.allowed import CommandPolicy, allowed_rules

    rules, _ = allowed_rules(["Bash(git status:*)"], "c.md")
    policy = CommandPolicy(Permissions(ws, "dont-ask"), rules, ws, "status")
    assert policy.check(*bash("git status")).verdict is Verdict.ALLOW
    assert policy.check(*bash("git push")).verdict is Verdict.DENY


# -- fuzzing -----------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40))
def test_fuzzed_rule_text_parses_or_raises_invalid_rule(text: str) -> None:
    try:
        rule = Rule.parse(text)
    except InvalidRule:
        return
    assert rule.tool
    assert rule.matches_tool(rule.tool) or any(c in rule.tool for c in "*?[")


_rule_texts = st.sampled_from(
    ["bash", "bash(ls:*)", "bash(:*)", "bash(git status)", "write_file(src/**)", "*_file([!a]*)",
     "edit_file(/abs/**)", "mcp__*", "write_file([)", "bash(a[b:*)", "write_file(**)",
     # Claude Code's spellings and forms
     "Bash", "Bash(*)", "Bash(git diff *)", "Bash(* --version)", "Bash(npm run test:*)",
     "Read(//etc/**)", "Read(~/.ssh/**)", "Edit(/src/**)", "Read(./.env)", "Read(.)",
     "Edit(//)", "Read(~)", "mcp__github", "mcp__github__create_issue", "Glob(src/*)"]
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    mode=st.sampled_from(list(PermissionMode)),
    allow=st.lists(_rule_texts, max_size=3),
    deny=st.lists(_rule_texts, max_size=2),
    subject=st.text(max_size=30),
    non_interactive=st.booleans(),
)
def test_fuzzed_checks_always_rule(
    ws: Path, mode, allow, deny, subject: str, non_interactive: bool
) -> None:
    p = Permissions(ws, mode, PermissionRules(allow=allow, deny=deny), non_interactive=non_interactive)
    for call in (bash(subject), write(subject), edit(subject), read(subject), mcp()):
        ruling = p.check(*call)
        assert ruling.rule
        if non_interactive:
            assert ruling.verdict is not Verdict.ASK
        p.remember(*call)
        assert p.check(*call).verdict in (Verdict.ALLOW, Verdict.DENY)


# -- Claude Code's names and forms -------------------------------------------------


@pytest.mark.parametrize("text", ["Bsah(ls)", "ReadFile", "Foo*", "read(x)", "BASH"])
def test_a_rule_naming_no_tool_is_refused_with_a_suggestion(text: str) -> None:
    with pytest.raises(InvalidRule, match="names no known tool"):
        Rule.parse(text)
    with pytest.raises(InvalidRule, match='did you mean "Bash"'):
        Rule.parse("Bsah(ls)")


def test_rule_names_map_to_tool_families() -> None:
    assert Rule.parse("Read").tools == {"read_file", "glob", "grep"}
    edits = {"write_file", "edit_file", "multi_edit", "notebook_edit"}
    for name in ("Edit", "Write", "MultiEdit", "edit_file"):
        assert Rule.parse(f"{name}(src/**)").tools == edits, name
    assert Rule.parse("Grep").tools == {"grep"}
    assert Rule.parse("LS").tools == {"glob"}  # Claude Code's older name
    bare = Rule.parse("Bash(*)")
    assert bare.specifier is None and bare.text == "Bash"


def test_mcp_server_rules(ws: Path) -> None:
    server = Rule.parse("mcp__github")
    assert server.matches_tool("mcp__github__create_issue")
    assert not server.matches_tool("mcp__githubx__create_issue")
    assert not server.matches_tool("bash")
    one = Rule.parse("mcp__github__create_issue")
    assert one.matches_tool("mcp__github__create_issue")
    assert not one.matches_tool("mcp__github__create_issue_comment")
    assert verdict(policy(ws, "auto", deny=["mcp__github"]), mcp()) is Verdict.DENY


def test_a_bash_wildcard_in_the_middle(ws: Path) -> None:
    p = policy(ws, "ask", allow=["Bash(* --version)", "Bash(git * main)"])
    for command in ("node --version", "git push origin main", "git checkout main"):
        assert verdict(p, bash(command)) is Verdict.ALLOW, command
    for command in ("node --versions", "git push origin main2", "git main"):
        assert verdict(p, bash(command)) is Verdict.ASK, command


def test_extra_blanks_do_not_slip_past_a_command_rule(ws: Path) -> None:
    p = policy(ws, "auto", deny=["Bash(git push *)", "Bash(rm -rf:*)", "Bash(shutdown now)"])
    for command in ("git   push origin", "git\tpush", "rm  -rf  /", "  shutdown   now "):
        assert verdict(p, bash(command)) is Verdict.DENY, command
    assert verdict(p, bash("git pushx")) is Verdict.ALLOW


@pytest.mark.parametrize("command", [
    "sudo rm -rf /", "FOO=1 /bin/rm -rf x", "env -i A=b nohup \\rm -rf x", "timeout 5 rm -rf x",
    "bash -c 'rm -rf x && ls'", "ls && sh -c \"cd / ; rm -rf x\"", "find . | xargs rm -rf",
])
def test_a_deny_rule_sees_through_wrappers_an_allow_rule_does_not(ws: Path, command: str) -> None:
    assert verdict(policy(ws, "auto", deny=["Bash(rm -rf:*)"]), bash(command)) is Verdict.DENY
    assert verdict(policy(ws, "auto", ask=["Bash(rm -rf *)"]), bash(command)) is Verdict.ASK
    allow = policy(ws, "ask", allow=["Bash(rm -rf:*)", "Bash(ls)", "Bash(find .)"])
    assert verdict(allow, bash(command)) is Verdict.ASK


def test_task_and_skill_rules_name_the_agent_and_the_skill(ws: Path) -> None:
    task = fake_tool("task", {"prompt": (str, ""), "subagent_type": (str | None, None)})
    skill = fake_tool("skill", {"name": (str, ...)})
    p = policy(ws, "ask", deny=["Task(deployer)", "Skill(acme:*)"], allow=["Skill(pdf)", "Agent"])
    assert p.check(task, task.parse({"subagent_type": "deployer"})).verdict is Verdict.DENY
    assert p.check(task, task.parse({"subagent_type": "reviewer"})).verdict is Verdict.ALLOW
    assert p.check(task, task.parse({})).verdict is Verdict.ALLOW  # no type: Agent allows
    assert p.check(skill, skill.parse({"name": "acme:deploy"})).verdict is Verdict.DENY
    assert p.check(skill, skill.parse({"name": "pdf"})).verdict is Verdict.ALLOW
    assert p.check(skill, skill.parse({"name": "xlsx"})).verdict is Verdict.ASK
    p.remember(skill, skill.parse({"name": "xlsx"}))
    assert p.session_rules[-1].text == "Skill(xlsx)"
    assert p.check(skill, skill.parse({"name": "xlsx"})).verdict is Verdict.ALLOW


def test_a_sub_agent_needs_no_approval_but_in_plan_mode_and_its_rules_still_bind(ws: Path) -> None:
    """Claude Code runs Task unasked (default, dontAsk, print mode); its sub-agent's calls
    are each checked. A deny or ask rule on it still speaks; plan mode keeps asking."""
    from agent_tui.tools.task import TaskTool

    task = TaskTool()
    call = task.parse({"description": "d", "prompt": "p", "subagent_type": "reviewer"})
    for mode in ("ask", "dont-ask", "accept-edits"):
        assert policy(ws, mode).check(task, call).verdict is Verdict.ALLOW
    assert Permissions(ws, "ask", non_interactive=True).check(task, call).verdict is Verdict.ALLOW
    assert policy(ws, "plan").check(task, call).verdict is Verdict.ASK
    assert policy(ws, "dont-ask", deny=["Task(reviewer)"]).check(task, call).verdict is Verdict.DENY
    assert policy(ws, "ask", ask=["Agent"]).check(task, call).verdict is Verdict.ASK
