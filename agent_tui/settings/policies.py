"""The policies of the settings keys with a shape of their own: how a file's value
merges, what a project's file may not set, what an untrusted one is kept from.

Each is a :class:`.keys.Policy`, the row of its field in :mod:`.schema`. A policy may
look at the value: a project's ``defaultMode`` is refused only when it grants ``auto``,
its ``sandbox`` only where it would open, its ``env`` name by name
(:mod:`.project_env`). The messages are the user's: each says what was not taken and
why, and ends in "(ignored)".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_tui import containment_settings as cs
from agent_tui.permissions import InvalidRule, Rule
from agent_tui.protocol import PermissionMode
from agent_tui.settings.claude_json import ProjectApproval
from agent_tui.settings.keys import Policy
from agent_tui.settings.merged import HooksSource, Merged, Source
from agent_tui.settings.project_env import project_may_set, refused_message


def resolve_mode(word: str, *, claude_file: bool) -> tuple[PermissionMode, str | None]:
    """The mode a ``defaultMode`` word stands for, and a notice when it is not the same
    thing here. In Claude Code's own files ``auto`` is Claude Code's auto mode (each
    call checked by a classifier), which agent-tui does not have: ``ask`` is used."""
    mode = PermissionMode.parse(word)
    if claude_file and word == PermissionMode.AUTO.value:
        return PermissionMode.ASK, (
            "Claude Code's auto mode is not supported: ask is used instead (agent-tui's "
            f"auto, which allows every call, is {PermissionMode.AUTO.claude_name} there)")
    return mode, None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


# -- permissions ---------------------------------------------------------------------


def _rules(kind: str) -> Callable[[Merged, Source, list[str]], list[str]]:
    """Rules add up, from every file (a deny in any wins, by the rule precedence)."""
    def merge(into: Merged, source: Source, texts: list[str]) -> list[str]:
        mine: list[Rule] = getattr(into, kind)
        for text in texts:
            try:
                rule = Rule.parse(text, settings_root=source.settings_root)
            except InvalidRule:  # cannot happen: the file's rules were checked
                continue
            if rule not in mine:
                mine.append(rule)
        return []
    return merge


#: An untrusted project's allow rules are withheld; its ask and deny rules apply.
ALLOW = Policy(_rules("allow"), withheld=lambda rules: (
    f"permissions.allow ({_count(len(rules), 'rule')})" if rules else None))
ASK = Policy(_rules("ask"))
DENY = Policy(_rules("deny"))


def _mode(into: Merged, source: Source, word: str | None) -> list[str]:
    """The higher file's wins; a project's only when it does not grant ``auto``."""
    if word is None:
        return []
    said: list[str] = []
    mode, note = resolve_mode(word, claude_file=source.claude_file)
    if note is not None:
        said.append(f"defaultMode {word}: {note}")
    if source.project and mode is PermissionMode.AUTO:
        said.append(f"defaultMode {word} is only taken from your user settings or the command "
                    "line: a project cannot grant itself auto mode (ignored)")
    else:
        into.default_mode = mode
    return said


DEFAULT_MODE = Policy(_mode, withheld=lambda word: (
    f"permissions.defaultMode {word}" if word is not None else None))


# -- what commands run with ----------------------------------------------------------


def _env(into: Merged, source: Source, env: dict[str, str]) -> list[str]:
    """One mapping, the higher file's value wins per name; a project's file only sets
    the names that cannot change what code runs (:mod:`.project_env`)."""
    refused = [key for key in env if source.project and not project_may_set(key)]
    for key, value in env.items():
        if key not in refused:
            into.env[key] = value
            if not source.project:
                into.user_env[key] = value
    return [refused_message(refused)] if refused else []


ENV = Policy(_env, withheld=lambda env: f"env ({_count(len(env), 'variable')})" if env else None)


def _limits(into: Merged, source: Source, limits: cs.LimitsSection) -> list[str]:
    return cs.merge(into.limits, into.sandbox, limits, cs.SandboxSection(), source.project)


def _sandbox(into: Merged, source: Source, sandbox: cs.SandboxSection) -> list[str]:
    """A project's file may close the sandbox, never open it (``containment_settings``)."""
    if not source.project and sandbox.enabled is not None:
        into.user_sandbox = sandbox.enabled
    return cs.merge(into.limits, into.sandbox, cs.LimitsSection(), sandbox, source.project)


LIMITS = Policy(_limits)
SANDBOX = Policy(_sandbox, withheld=lambda sandbox: (
    "sandbox" if sandbox != cs.SandboxSection() else None))


# -- models, prices, hooks -----------------------------------------------------------


def _prices(into: Merged, source: Source, prices: dict[str, Any]) -> list[str]:
    into.prices.update({name: price.model_dump() for name, price in prices.items()})
    return []


def _providers(into: Merged, source: Source, providers: Any) -> list[str]:
    """Entry by entry, each checked. An untrusted project's never reaches here (it could
    send the user's key to a server of its choosing); a trusted one's is taken."""
    if providers is None:
        return []
    from agent_tui.providers.config import parse_providers

    good, problems = parse_providers(providers)
    into.providers.update(good)
    return list(problems)


def _hooks(into: Merged, source: Source, hooks: Any) -> list[str]:
    """Kept as written, with where each part is, for ``hooks/`` to parse; a project's
    run only once it is trusted (the CLI decides), its guards always."""
    if hooks is not None:
        into.hooks.append(HooksSource(file=source.path, project=source.project, value=hooks,
                                      where=source.hooks_where))
    return []


PRICES = Policy(_prices)
PROVIDERS = Policy(_providers, withheld=lambda given: "providers" if given is not None else None)
HOOKS = Policy(_hooks)  # never withheld: a project's guards run, trusted or not


# -- the web tools -------------------------------------------------------------------


def _web_fetch(into: Merged, source: Source, section: Any) -> list[str]:
    if section is None:
        return []
    if source.project and section.allow_private:
        return ["webFetch.allowPrivate is only taken from your user settings: a project "
                "could point web_fetch at your local network (ignored)"]
    into.web_fetch_allow_private = section.allow_private
    return []


def _web_search(into: Merged, source: Source, section: Any) -> list[str]:
    if section is not None:
        into.web_search_enabled = section.enabled
    return []


WEB_FETCH = Policy(_web_fetch, withheld=lambda section: (
    "webFetch.allowPrivate" if section is not None and section.allow_private else None))
WEB_SEARCH = Policy(_web_search)


# -- which of the project's .mcp.json servers may start ------------------------------


def _approvals(into: Merged, source: Source, approve_all: bool | None, enabled: list[str],
               disabled: list[str]) -> list[str]:
    """A rejection from any file, an approval from the user's only (a repository
    cannot approve its own servers)."""
    said: list[str] = []
    approves = [key for key, given in (
        ("enableAllProjectMcpServers", approve_all is True),
        ("enabledMcpjsonServers", bool(enabled))) if given]
    if source.project and approves:
        verb = "are" if len(approves) > 1 else "is"
        said.append(
            f"{' and '.join(approves)} {verb} only taken from your user settings "
            "(~/.claude/settings.json, agent-tui's settings.json) or ~/.claude.json: a "
            "repository cannot approve its own MCP servers (ignored)")
        approve_all, enabled = None, []
    into.mcpjson = into.mcpjson.joined(ProjectApproval(
        all=approve_all is True, enabled=enabled, disabled=disabled))
    return said


_APPROVALS = "MCP server approvals (enableAllProjectMcpServers, enabledMcpjsonServers)"
#: The three keys share one merge (so one notice names both approvals).
APPROVE_ALL = Policy(_approvals, withheld=lambda given: _APPROVALS if given is not None else None)
APPROVE = Policy(_approvals, withheld=lambda given: _APPROVALS if given else None)
REJECT = Policy(_approvals)


# -- keys read where they are used ---------------------------------------------------


def _read_elsewhere(into: Merged, source: Source, *given: Any) -> list[str]:
    return []


#: Read from the files by the part that uses it (``plugins/``, ``hooks/status_line.py``)
#: or not at all (``$schema``): nothing to merge here.
READ_ELSEWHERE = Policy(_read_elsewhere)
STATUS_LINE = Policy(_read_elsewhere, withheld=lambda given: (
    "statusLine" if given is not None else None))
