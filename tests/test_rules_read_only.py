"""What the parse is sure of, which commands only read (they run without a rule, as in
Claude Code), and which rule the approval prompt may offer for a command."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.permissions.read_only import is_read_only
from agent_tui.permissions.shell_parse import parse_command
from agent_tui.protocol import Verdict
from tests.permission_calls import bash, policy, verdict, ws  # noqa: F401

CERTAIN = [
    "git log --oneline | head -5", "npm test 2>&1 | tail -n 20", "cd src && make",
    'echo "$HOME"', "ls ${dir}", "x=1; echo $x", "[ -f x ] && ls", "case $x in a|b) ls;; esac",
    "find . -name '*.py' | xargs wc -l", "for f in *.py; do echo $f; done",
    "if git diff --quiet; then echo clean; fi", "echo $((1 + 2))", "NODE_ENV=test npm test",
    "cat <<'EOF'\nhello $x\nEOF", "ls # a comment", "make \\\n  all", "echo ${x:-default}",
]


@pytest.mark.parametrize("command", CERTAIN)
def test_everyday_commands_parse_with_certainty(command: str) -> None:
    parsed = parse_command(command)
    assert parsed.certain, parsed.doubts


READ_ONLY = ["ls", "ls -la src", "cat notes.txt", "grep -rn TODO src", "git status",
             "git log --oneline -5", "git diff HEAD~1", "find . -name '*.py'", "echo hi", "pwd",
             "head -n 5 notes.txt", "wc -l notes.txt", "git status && git diff | head",
             "ls 2>/dev/null", "sort notes.txt | uniq -c", "rg -n foo"]
NOT_READ_ONLY = ["ls > listing", "echo hi >> notes.txt", "find . -delete", "find . -exec rm {} ;",
                 "git diff --output=x", "git log --ext-diff", "git -c core.pager=x log",
                 "git push", "sort -o out notes.txt", "rg --pre ./x foo", "uniq a b",
                 "xxd -r a b", "date -s now", "touch x", "ls; touch x", "echo $(touch x)",
                 "cat x | bash", "PAGER=x git log", "bash -c ls", "hostname evil", "tree -o f",
                 "sudo ls", "ls `touch x`", "eval ls"]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands(command: str) -> None:
    assert is_read_only(parse_command(command)), command


@pytest.mark.parametrize("command", NOT_READ_ONLY)
def test_commands_that_write_or_run_are_not_read_only(command: str) -> None:
    assert not is_read_only(parse_command(command)), command


@pytest.mark.parametrize("mode", ["ask", "accept-edits", "dont-ask"])
def test_read_only_commands_run_without_a_rule_inside_the_workspace(ws: Path, mode: str) -> None:
    p = policy(ws, mode)
    ruling = p.check(*bash("git status && ls -la src | head"))
    assert ruling.verdict is Verdict.ALLOW and ruling.reason == "read-only command"
    for outside in ["cat /etc/passwd", "ls ~", "cat ../other/x", "cat $F"]:
        assert verdict(p, bash(outside)) is not Verdict.ALLOW, outside
    assert verdict(p, bash("touch x")) is not Verdict.ALLOW
    assert verdict(policy(ws, "ask", deny=["Bash(ls:*)"]), bash("ls")) is Verdict.DENY
