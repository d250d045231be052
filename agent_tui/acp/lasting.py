"""A permission request over ACP, and its answer: the options offered, and the
``Decide`` op an option becomes. "Always" writes the same lasting rule the TUI's
"Yes, and don't ask again" does (``settings/local_rules.py``: the program and its
subcommand, a domain, an MCP tool's name) to the project's
``.claude/settings.local.json``, and the rule applies at once; a call that can be
offered no such rule is allowed for this session only, as the option's name says."""

from __future__ import annotations

from pathlib import Path

from acp.schema import PermissionOption

from agent_tui.protocol import Decide, Decision, Notice, NoticeLevel, PermissionRequested
from agent_tui.settings.local_rules import lasting_rules, save_allow_rules, shown

# Option ids are ours; the kinds are ACP's.
DECISIONS = {
    "allow_once": Decision.ALLOW_ONCE,
    "allow_always": Decision.ALLOW_SESSION,
    "reject_once": Decision.DENY,
}


def _rules(event: PermissionRequested) -> list[str]:
    return lasting_rules(event.name, event.input,
                         asked_by_rule=(event.rule or "").startswith("ask:"))


def options(event: PermissionRequested) -> list[PermissionOption]:
    rules = _rules(event)
    always = (f"Always allow {', '.join(shown(r) for r in rules)}" if rules
              else "Allow for this session")
    return [
        PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
        PermissionOption(option_id="allow_always", name=always, kind="allow_always"),
        PermissionOption(option_id="reject_once", name="Deny", kind="reject_once"),
    ]


def answer(event: PermissionRequested, option_id: str, workspace: Path) -> tuple[Decide, Notice | None]:
    """The op for the option chosen, and a notice to tell, if any."""
    decision = DECISIONS.get(option_id)
    if decision is None:
        note = f"unknown option {option_id!r}"
        return Decide(tool_use_id=event.tool_use_id, decision=Decision.DENY, note=note), None
    rules = _rules(event) if decision is Decision.ALLOW_SESSION else []
    decide = Decide(tool_use_id=event.tool_use_id, decision=decision, rules=rules)
    if not rules:
        return decide, None
    saved = save_allow_rules(workspace, rules)
    level = NoticeLevel.INFO if saved.ok else NoticeLevel.WARNING
    return decide, Notice(level=level, text=saved.notice())
