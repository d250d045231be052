"""What a project's settings file may not do until the folder is trusted.

Untrusted, a project's file only takes away: its deny and ask rules apply, its hooks
run, and everything that would grant is withheld here, each part named once in one
notice per file (:func:`untrusted_message`).
"""

from __future__ import annotations

from typing import Any

from agent_tui import containment_settings as cs
from agent_tui.settings.keys import withhold_keys
from agent_tui.settings.schema import SettingsFile


def withhold(data: SettingsFile) -> tuple[SettingsFile, list[str]]:
    """``data`` without what grants, and the names of what was there (in file order)."""
    perms = data.permissions
    found: list[str] = []
    perm_update: dict[str, Any] = {}
    update: dict[str, Any] = {}
    if perms.allow:
        found.append(f"permissions.allow ({_count(len(perms.allow), 'rule')})")
        perm_update["allow"] = []
    if perms.default_mode is not None:
        found.append(f"permissions.defaultMode {perms.default_mode}")
        perm_update["default_mode"] = None
    perm_keys, named = withhold_keys(perms, "permissions.")  # additionalDirectories
    found += named
    perm_update |= perm_keys
    if data.env:
        found.append(f"env ({_count(len(data.env), 'variable')})")
        update["env"] = {}
    if data.sandbox != cs.SandboxSection():
        found.append("sandbox")
        update["sandbox"] = cs.SandboxSection()
    if data.providers is not None:  # it could send your key to a server of its choosing
        found.append("providers")
        update["providers"] = None
    keys, named = withhold_keys(data)  # the plain keys that grant (apiKeyHelper)
    found += named
    update |= keys
    if data.enable_all_project_mcp_servers is not None or data.enabled_mcpjson_servers:
        found.append("MCP server approvals (enableAllProjectMcpServers, enabledMcpjsonServers)")
        update |= {"enable_all_project_mcp_servers": None, "enabled_mcpjson_servers": []}
    if getattr(data, "status_line", None) is not None:  # where the status line is known
        found.append("statusLine")
        update["status_line"] = None
    if data.web_fetch is not None and data.web_fetch.allow_private:
        found.append("webFetch.allowPrivate")
        update["web_fetch"] = None
    if perm_update:
        update["permissions"] = perms.model_copy(update=perm_update)
    copy = data.model_copy(update=update)
    copy._hooks_where = data._hooks_where  # the hooks stay: guards always run
    return copy, found


def untrusted_message(withheld: list[str]) -> str:
    return (f"this folder is not trusted, so its {', '.join(withheld)} "
            f"{'is' if len(withheld) == 1 else 'are'} ignored; its deny and ask rules "
            "apply and its hooks run. Trust it in agent-tui's trust dialog or with --trust "
            "(or accept Claude Code's trust dialog for it)")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
