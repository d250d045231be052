"""Property: an allowed command composed with any second command, in any way bash's
grammar allows, is never allowed unless the second command is allowed on its own."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from agent_tui.permissions.shell_parse import parse_command
from agent_tui.protocol import Verdict
from tests.permission_calls import bash, policy

ALLOWED = ["ls", "ls -la", "echo hi", "git status", "git status -s", "npm test"]
RULES = ["Bash(ls:*)", "Bash(echo:*)", "Bash(git status:*)", "Bash(npm test:*)"]

#: Every way to put a second command B beside, after, inside or around an allowed A.
COMPOSITIONS = [
    "{a}; {b}", "{a} && {b}", "{a} || {b}", "{a} | {b}", "{a} |& {b}", "{a} & {b}",
    "{a}\n{b}", "{a}\r\n{b}", "{a} #'\n{b}\n#'", "{a} # x\n{b}", "{a} $({b})", "{a} `{b}`",
    '{a} "$({b})"', "{a} <({b})", "{a} >({b})", "({b}); {a}", "{a}; ({b})", "{{ {b}; }}; {a}",
    "if {a}; then {b}; fi", "if {b}; then {a}; fi", "while {a}; do {b}; done",
    "until {a}; do {b}; done", "for x in 1; do {b}; done; {a}", "for x in $({b}); do {a}; done",
    "case x in x) {b};; esac; {a}", "case $({b}) in x) {a};; esac", "! {b}; {a}",
    "f() {{ {b}; }}; {a}", "{a}; eval '{b}'", "{a}; bash -c '{b}'", "{a} <<< \"$({b})\"",
    "{a} <<EOF\n$({b})\nEOF", "{a}; bash <<EOF\n{b}\nEOF", "x=$({b}); {a}", "{a} ${{x:-$({b})}}",
    "{b} | {a}", "{a} && ({b})", "{a} || {{ {b}; }}", "{a} \\\n; {b}", "coproc {b}; {a}",
    "{a} > >({b})", "time {b}; {a}", "[[ $({b}) ]] && {a}", "{a} $(( $({b}) ))",
]

_PROGRAMS = ["touch", "rm", "curl", "python3", "make", "npm", "git", "ls", "echo", "sh", "cat"]
_ARG_CHARS = "abcxyz-./ '\"$;&|()<>{}\\\n#`=*?~"


def second_commands() -> st.SearchStrategy[str]:
    words = st.text(alphabet=_ARG_CHARS, max_size=12)
    return st.builds(lambda p, a: f"{p} {a}".strip(), st.sampled_from(_PROGRAMS), words)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.sampled_from(ALLOWED), b=second_commands(), how=st.sampled_from(COMPOSITIONS))
@example(a="ls", b="touch PWNED", how="{a} #'\n{b}\n#'")
@example(a="git status", b="npm publish", how="{a} && {b}")
def test_a_composition_is_allowed_only_when_both_parts_are(tmp_path: Path, a: str, b: str,
                                                          how: str) -> None:
    # b must be a command of its own: `ls )` inside `"$(...)"` or `ls \` before ` | a`
    # would be another text, which the attack table covers
    assume(parse_command(b).certain and not b.endswith("\\"))
    p = policy(tmp_path, "ask", allow=RULES)
    composed = how.format(a=a, b=b)
    if p.check(*bash(composed)).verdict is Verdict.ALLOW:
        assert p.check(*bash(b)).verdict is Verdict.ALLOW, (composed, b)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(how=st.sampled_from(COMPOSITIONS), a=st.sampled_from(ALLOWED))
def test_a_denied_command_is_denied_in_every_composition(tmp_path: Path, how: str, a: str) -> None:
    p = policy(tmp_path, "auto", deny=["Bash(rm:*)"])
    composed = how.format(a=a, b="rm -rf x")
    assert p.check(*bash(composed)).verdict is Verdict.DENY, composed
