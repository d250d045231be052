"""What a project's settings suggest: ``enabledPlugins`` and ``extraKnownMarketplaces``
in ``.claude/settings.json`` (or the other project files) are offered in a notice,
never added, installed or enabled: a cloned repository must not choose the code that
runs on the user's machine. The user's own settings are the only ones that enable."""

from __future__ import annotations

from pathlib import Path

from agent_tui.paths import project_settings_files
from agent_tui.plugins.records import RecordError, Records, read_object


def offered(workspace: Path, records: Records | None = None) -> list[str]:
    """One line per plugin or marketplace a project file names that the user has not
    enabled or added."""
    records = records or Records()
    try:
        enabled = {pid for pid, on in records.enabled().items() if on}
        known = set(records.marketplaces())
    except RecordError:
        enabled, known = set(), set()
    lines = []
    for path in project_settings_files(workspace):
        data = _read(path)
        plugins = data.get("enabledPlugins")
        for plugin_id, on in (plugins.items() if isinstance(plugins, dict) else []):
            if on is True and plugin_id not in enabled:
                lines.append(f"{path} suggests the plugin {plugin_id}: not enabled (to use it: "
                             f"agent-tui plugin install {plugin_id})")
        markets = data.get("extraKnownMarketplaces")
        for name, entry in (markets.items() if isinstance(markets, dict) else []):
            if name not in known:
                lines.append(f"{path} suggests the marketplace {name} "
                             f"({_where(entry)}): not added (agent-tui plugin marketplace add ...)")
    return lines


def _where(entry: object) -> str:
    source = entry.get("source") if isinstance(entry, dict) else None
    if isinstance(source, dict):
        return str(source.get("url") or source.get("repo") or source.get("path") or source)
    return str(source)


def _read(path: Path) -> dict[str, object]:
    try:
        return read_object(path)
    except RecordError:
        return {}  # the settings loader says what is wrong with it
