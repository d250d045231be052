"""The user's enabled plugins, as every loader sees them (commands, skills, sub-agent
types, hooks, MCP servers each ask here for their part, in one call).

A plugin's option values (``options.py``) go into its servers and hooks
(``option_use.py``). A plugin counts when the user's own Claude Code settings (``~/.claude/settings.json``)
say ``enabledPlugins: {"NAME@MARKETPLACE": true}`` and Claude Code's
``installed_plugins.json`` records where it is installed. A project's settings never
enable one (``offered.py`` says what they name). ``--plugin-dir DIR`` (the user's
command line, as Claude Code's) adds a plugin folder for this run only
(:func:`use_plugin_dirs`), as if installed and enabled. Whatever is wrong with one
plugin (a missing install, a broken manifest, a path outside its folder) is a problem
naming it, and the others still load.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agent_tui.plugins.records import RecordError, Records

if TYPE_CHECKING:  # a plugin's manifest and options are read only when one is enabled
    from agent_tui.plugins.manifest import JsonPart, Plugin


@dataclass
class EnabledPlugins:
    plugins: list[Plugin] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def folders(self, part: str) -> list[tuple[str, Path]]:
        """(plugin name, folder) of every plugin's ``commands``, ``agents`` or ``skills``."""
        return [(p.name, folder) for p in self.plugins for folder in getattr(p, part)]


def plugin_name(plugin_id: str) -> str:
    return plugin_id.rpartition("@")[0] or plugin_id


#: ``--plugin-dir`` folders of this process's run (the command line's: set once, at start).
_RUN_DIRS: list[Path] = []


def use_plugin_dirs(folders: list[Path]) -> None:
    """``--plugin-dir``: these plugin folders load for this run, beside the enabled ones."""
    _RUN_DIRS[:] = list(folders)


def enabled_plugins(claude_dir: Path | None = None) -> EnabledPlugins:
    records = Records(claude_dir)
    found = EnabledPlugins()
    for folder in _RUN_DIRS:
        from agent_tui.plugins.manifest import PluginError, read_plugin
        from agent_tui.plugins.option_use import use_options

        try:
            plugin = read_plugin(folder)
        except PluginError as exc:
            found.problems.append(f"--plugin-dir {folder}: not loaded: {exc}")
            continue
        use_options(plugin, records)
        found.plugins.append(plugin)
        found.problems.extend(plugin.problems)
    try:
        enabled = [pid for pid, on in records.enabled().items() if on]
        for plugin_id in enabled:
            _load(records, plugin_id, found)
    except RecordError as exc:
        found.problems.append(f"plugins: {exc}")
    return found


def _load(records: Records, plugin_id: str, found: EnabledPlugins) -> None:
    path = records.install_path(plugin_id)
    if path is None:
        found.problems.append(f"plugin {plugin_id} is enabled but not installed "
                              f"(agent-tui plugin install {plugin_id})")
        return
    from agent_tui.plugins.manifest import PluginError, read_plugin
    from agent_tui.plugins.option_use import use_options

    try:
        plugin = read_plugin(path, plugin_name(plugin_id))
    except PluginError as exc:
        found.problems.append(f"plugin {plugin_id} not loaded: {exc}")
        return
    plugin.plugin_id = plugin_id
    use_options(plugin, records)  # its option values, in its servers and hooks
    found.plugins.append(plugin)
    found.problems.extend(plugin.problems)


def plugin_folders(part: str, claude_dir: Path | None = None) -> list[tuple[str, Path]]:
    """(plugin name, folder) for ``commands``, ``agents`` or ``skills``; a failing
    plugin adds none (its problem is said where the session starts)."""
    return enabled_plugins(claude_dir).folders(part)


def plugin_hooks() -> list[JsonPart]:
    """Every enabled plugin's ``hooks`` objects (``${CLAUDE_PLUGIN_ROOT}`` and its
    option values put in; ``env``: its ``CLAUDE_PLUGIN_OPTION_*``)."""
    return [part for plugin in enabled_plugins().plugins for part in plugin.hooks]


def plugin_servers() -> list[JsonPart]:
    """Every enabled plugin's ``mcpServers`` objects, each server named
    ``plugin_PLUGIN_SERVER`` as Claude Code names it (its tools are
    ``mcp__plugin_PLUGIN_SERVER__TOOL``)."""
    parts = []
    for plugin in enabled_plugins().plugins:
        from agent_tui.plugins.manifest import JsonPart

        for part in plugin.servers:
            servers = part.value if isinstance(part.value, dict) else {}
            renamed = {_tool_safe(f"plugin_{plugin.name}_{name}"): raw for name, raw in servers.items()}
            parts.append(JsonPart(file=part.file, value=renamed))
    return parts


def _tool_safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)
