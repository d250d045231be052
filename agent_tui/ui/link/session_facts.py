"""What a running session holds that no Event carries: the permission rules in force
(and where each came from), read through the Session's public attributes
(``policy``, ``workspace``) and the settings files. (Its MCP servers are
``ui/input/mcp_offers.py``'s.)

Where a rule came from is found by reading the settings files again (the merged
settings keep no origin per rule): the first file that lists it, user before project.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_tui.frontmatter import shown_path
from agent_tui.permissions import Permissions, Rule
from agent_tui.permissions.rules import InvalidRule
from agent_tui.settings import read_settings_file, settings_paths
from agent_tui.settings.schema import resolve_mode

LISTS = ("deny", "ask", "allow")  # in the order they are applied (after deny: session rules)


@dataclass(frozen=True)
class RuleFact:
    kind: str  # deny | ask | allow | session
    rule: str
    source: str  # a settings file, "this session", or "command line"


@dataclass(frozen=True)
class PermissionFacts:
    mode: str
    mode_source: str
    rules: list[RuleFact]
    note: str = ""  # when the policy is not the settings' (a test's, an embedding's)


def _file_rules(workspace: Path, user_dir: Path | None) -> tuple[dict[tuple[str, str], str], str | None, str]:
    """(kind, rule text) -> the file that lists it first; the defaultMode and its file."""
    origin: dict[tuple[str, str], str] = {}
    mode: str | None = None
    mode_file = ""
    for path in settings_paths(workspace, user_dir=user_dir):
        data, _problems = read_settings_file(path)
        if data is None:
            continue
        perms = data.permissions
        shown = shown_path(path, workspace, None)  # .claude/settings.json, ~/.claude/...
        for kind in LISTS:
            for text in getattr(perms, kind):
                try:
                    origin.setdefault((kind, Rule.parse(text).text), shown)
                except InvalidRule:
                    continue
        if perms.default_mode is not None:
            claude_file = path.parent.name == ".claude" or path == settings_paths(workspace)[0]
            mode = resolve_mode(perms.default_mode, claude_file=claude_file)[0].value
            mode_file = shown
    return origin, mode, mode_file


def permission_facts(policy: Any, workspace: Path, user_dir: Path | None = None) -> PermissionFacts:
    if not isinstance(policy, Permissions):
        return PermissionFacts("", "", [], note=f"this session's policy is {type(policy).__name__}: it has no rules to list")
    origin, file_mode, mode_file = _file_rules(workspace, user_dir)
    rules: list[RuleFact] = []
    for kind in LISTS:
        for rule in getattr(policy.rules, kind):
            rules.append(RuleFact(kind, rule.text, origin.get((kind, rule.text), "command line")))
    for rule in policy.session_rules:
        rules.append(RuleFact("session", rule.text, "this session (allowed at a prompt)"))
    mode = policy.mode.value
    if file_mode == mode:
        mode_source = mode_file
    elif file_mode is None and mode == "ask":
        mode_source = "the default"
    else:
        mode_source = "the command line"
    return PermissionFacts(mode, mode_source, rules)
