"""The numbered answers a permission prompt offers, per kind of call, as Claude Code
words them: ``1. Yes``, ``2. Yes, and don't ask again for: npm test *``, ``3. No``.

The second answer depends on the call: a lasting allow rule where one can be offered
(``settings/local_rules.lasting_rules``: a command's program and subcommand, a fetch's
domain, an MCP tool's name), accept-edits for the rest of the session for a file edit,
"for this session" (this exact call's shape) otherwise. A plan's answers are worded for
it. Each answer keeps its old letter (y, a, n) too."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePath

from agent_tui.protocol import Decide, PermissionRequested
from agent_tui.protocol import Decision
from agent_tui.protocol.tool_names import FileAccess, RuleSubject, facts, facts_of
from agent_tui.settings.local_rules import lasting_rules, shown
from agent_tui.ui.render.diffs import FileDiff
from agent_tui.ui.render.safe_text import clean


def leaves_plan(name: str) -> bool:
    """Whether a call of ``name`` presents a plan: approving it leaves plan mode."""
    return facts_of(name).leaves_plan


class Act(StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_RULES = "allow_rules"  # and save the rules to .claude/settings.local.json
    ALLOW_SESSION = "allow_session"
    ACCEPT_EDITS = "accept_edits"  # allow, and switch the session to accept-edits
    DENY = "deny"


@dataclass(frozen=True)
class Choice:
    label: str
    act: Act
    letter: str  # the old key: y, a, n
    rules: tuple[str, ...] = ()

    def decide(self, tool_use_id: str, note: str = "") -> Decide:
        decision = {Act.DENY: Decision.DENY, Act.ALLOW_SESSION: Decision.ALLOW_SESSION,
                    Act.ALLOW_RULES: Decision.ALLOW_SESSION}.get(self.act, Decision.ALLOW_ONCE)
        return Decide(tool_use_id=tool_use_id, decision=decision, note=note, rules=list(self.rules))


def _second(request: PermissionRequested) -> Choice:
    given = facts(request.name)
    if given is not None and given.file_access is FileAccess.EDITS:
        return Choice("Yes, allow all edits during this session (shift+tab)", Act.ACCEPT_EDITS, "a")
    asked_by_rule = (request.rule or "").startswith("ask:")
    rules = lasting_rules(request.name, request.input, asked_by_rule=asked_by_rule)
    if not rules:
        return Choice("Yes, for this session (this exact call)", Act.ALLOW_SESSION, "a")
    what = ", ".join(clean(shown(rule)) for rule in rules)
    subject = given.rule_subject if given is not None else RuleSubject.NONE
    if subject is RuleSubject.DOMAIN:
        label = f"Yes, and don't ask again for {what}"
    elif subject is RuleSubject.COMMAND:
        label = f"Yes, and don't ask again for: {what}"
    else:
        label = f"Yes, and don't ask again for {what}"
    return Choice(label, Act.ALLOW_RULES, "a", tuple(rules))


def choices_for(request: PermissionRequested) -> list[Choice]:
    if leaves_plan(request.name):
        return [Choice("Yes, and manually approve edits", Act.ALLOW_ONCE, "y"),
                Choice("Yes, and auto-accept edits", Act.ALLOW_SESSION, "a"),
                Choice("No, keep planning", Act.DENY, "n")]
    return [Choice("Yes", Act.ALLOW_ONCE, "y"), _second(request),
            Choice("No, and tell the model what to do differently (esc)", Act.DENY, "n")]


def question(request: PermissionRequested, diff: FileDiff | None) -> str:
    """The question above the answers, as Claude Code asks it for the kind of call."""
    if leaves_plan(request.name):
        return "Would you like to proceed? Plan mode ends and the changes begin."
    given = facts(request.name)
    if diff is not None:
        name = clean(PurePath(diff.path).name)
        return f"Do you want to create {name}?" if diff.new_file else f"Do you want to make this edit to {name}?"
    if given is not None and given.rule_subject is RuleSubject.DOMAIN:
        return "Do you want to allow the model to fetch this content?"
    return "Do you want to proceed?"


def why(request: PermissionRequested) -> str:
    """Why it asks, in words: the rule or the mode that did."""
    rule = request.rule or ""
    kind, _, what = rule.partition(":")
    reason = clean(request.reason)
    if kind == "ask":
        return f"the rule {clean(what)} asks"
    if kind == "mode":
        return f"{reason} (permission mode {clean(what)})" if reason else f"permission mode {clean(what)}"
    return reason
