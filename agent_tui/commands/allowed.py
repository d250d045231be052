"""A command's ``allowed-tools``: the calls it names are allowed while its turn runs.

``allowed-tools: Bash(git add:*), Bash(git status:*), Read`` is a list of Claude
Code permission rules (``protocol/tool_names.py`` gives each tool name ours). During
the command's turn, and for its ``!`` lines, a call one of them matches is allowed
where the session's mode would have asked (or, in print mode, denied because nobody
can be asked). The session's deny and ask rules, its hooks and plan mode still
decide first: a command cannot allow what a rule denies.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from agent_tui.core.calls.permission import PermissionPolicy, Ruling
from agent_tui.core.calls.tool import AnyTool
from agent_tui.permissions import InvalidRule, PermissionRules, Permissions, Rule
from agent_tui.protocol import PermissionMode, Verdict
from agent_tui.protocol.tool_names import our_name

#: Rulings of these kinds stand whatever the command allows.
_FIRM = ("deny:", "ask:", "hook", "mode:plan", "session:")


def allowed_rules(tools: list[str], where: str) -> tuple[list[Rule], list[str]]:
    """The rules, in our tool names, and the problems (a rule naming no tool, a bad one)."""
    rules, problems = [], []
    for text in tools:
        name, paren, rest = text.partition("(")
        ours = our_name(name.strip())
        if ours is None:
            problems.append(f"{where}: allowed-tools: {text!r} names no tool (ignored)")
            continue
        try:
            rule = Rule.parse(f"{ours}{paren}{rest}")
        except InvalidRule as exc:
            problems.append(f"{where}: allowed-tools: {exc} (ignored)")
            continue
        rules.append(rule.model_copy(update={"text": text.strip()}))
    return rules, problems


class CommandPolicy:
    """The session's policy, with one command's ``allowed-tools`` (a ``PermissionPolicy``)."""

    def __init__(self, base: PermissionPolicy, rules: list[Rule], workspace: Path, name: str) -> None:
        self.base = base
        self.name = name
        self.rules = rules
        self._allow = Permissions(workspace, "ask", PermissionRules(allow=rules))

    def check(self, tool: AnyTool, args: BaseModel) -> Ruling:
        ruling = self.base.check(tool, args)
        if ruling.verdict is Verdict.ALLOW or (ruling.rule or "").startswith(_FIRM):
            return ruling
        extra = self._allow.check(tool, args)
        if extra.verdict is Verdict.ALLOW and extra.rule and extra.rule.startswith("allow:"):
            rule = extra.rule[len("allow:"):]
            return Ruling(verdict=Verdict.ALLOW, rule=f"allow:{rule}",
                          reason=f"allowed by /{self.name}'s allowed-tools {rule}")
        return ruling

    def remember(self, tool: AnyTool, args: BaseModel) -> None:
        self.base.remember(tool, args)

    def allow(self, rules: list[str]) -> None:
        self.base.allow(rules)

    # The mode is the session's: a command's turn reads it (plan mode) and may change it.
    @property
    def mode(self) -> PermissionMode:
        return self.base.mode

    def set_mode(self, mode: PermissionMode) -> None:
        self.base.set_mode(mode)
