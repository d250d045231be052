"""Where Claude Code records plugins, read and written in its own shapes, so that a
user's existing setup works unchanged (observed with Claude Code 2.1.197):

- ``~/.claude/plugins/known_marketplaces.json``: ``{NAME: {"source": {"source":
  "directory", "path": ...}, "installLocation": ..., "lastUpdated": ...}}``;
- ``~/.claude/plugins/installed_plugins.json``: ``{"version": 2, "plugins":
  {"PLUGIN@MARKETPLACE": [{"scope": "user", "installPath": ..., "version": ...,
  "installedAt": ..., "lastUpdated": ...}]}}``;
- ``~/.claude/plugins/cache/MARKETPLACE/PLUGIN/VERSION/``: the installed copy;
- ``~/.claude/settings.json``: ``enabledPlugins`` (``{"PLUGIN@MARKETPLACE": true}``)
  and ``extraKnownMarketplaces`` (the marketplaces added, by name).

A file that does not parse is never written over: :class:`RecordError` says which.
``$CLAUDE_CONFIG_DIR`` moves the folder, as it does for Claude Code.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from agent_tui.atomic import write_atomic
from agent_tui.paths import claude_config_dir

MARKETPLACES = "known_marketplaces.json"
INSTALLED = "installed_plugins.json"
SETTINGS = "settings.json"
MAX_BYTES = 1024 * 1024


class RecordError(Exception):
    """A record file that cannot be read as the JSON object it must be."""


def plugins_dir(claude_dir: Path | None = None) -> Path:
    return (claude_dir or claude_config_dir()) / "plugins"


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def read_object(path: Path) -> dict[str, Any]:
    """A JSON object file; absent is empty; anything else is a RecordError. Only a
    regular file of at most MAX_BYTES is read (a FIFO planted in a workspace must not
    hang the start)."""
    try:
        if not path.exists():
            return {}
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            raise RecordError(f"{path}: not a regular file of at most {MAX_BYTES // 1024} KB")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: cannot read: {exc}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"{path}: not valid JSON ({exc}); left as it is") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: expected a JSON object; left as it is")
    return data


def write_object(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path.parent, path.name, (json.dumps(data, indent=2) + "\n").encode())


class Records:
    """Claude Code's plugin records under one ``~/.claude`` folder."""

    def __init__(self, claude_dir: Path | None = None) -> None:
        self.claude_dir = claude_dir or claude_config_dir()
        self.folder = plugins_dir(self.claude_dir)
        self.settings_path = self.claude_dir / SETTINGS

    # -- reading ---------------------------------------------------------------------

    def marketplaces(self) -> dict[str, Any]:
        return read_object(self.folder / MARKETPLACES)

    def installed(self) -> dict[str, list[dict[str, Any]]]:
        plugins = read_object(self.folder / INSTALLED).get("plugins")
        if not isinstance(plugins, dict):
            return {}
        return {str(k): [e for e in v if isinstance(e, dict)]
                for k, v in plugins.items() if isinstance(v, list)}

    def install_path(self, plugin_id: str) -> Path | None:
        for entry in self.installed().get(plugin_id, []):
            if entry.get("scope", "user") == "user" and isinstance(entry.get("installPath"), str):
                return Path(entry["installPath"])
        return None

    def settings(self) -> dict[str, Any]:
        return read_object(self.settings_path)

    def enabled(self) -> dict[str, bool]:
        """``enabledPlugins`` of the user's Claude Code settings."""
        value = self.settings().get("enabledPlugins")
        if not isinstance(value, dict):
            return {}
        return {str(k): v is True for k, v in value.items()}

    # -- writing (each reads the file again just before: another process may write it) --

    def set_marketplace(self, name: str, source: dict[str, Any], location: Path) -> None:
        data = self.marketplaces()
        data[name] = {"source": source, "installLocation": str(location), "lastUpdated": now()}
        write_object(self.folder / MARKETPLACES, data)
        self._settings_key("extraKnownMarketplaces", name, {"source": source})

    def drop_marketplace(self, name: str) -> None:
        data = self.marketplaces()
        data.pop(name, None)
        write_object(self.folder / MARKETPLACES, data)
        self._settings_key("extraKnownMarketplaces", name, None)

    def set_installed(self, plugin_id: str, path: Path, version: str) -> None:
        data = read_object(self.folder / INSTALLED)
        plugins = data.get("plugins") if isinstance(data.get("plugins"), dict) else {}
        assert isinstance(plugins, dict)
        stamp = now()
        kept = [e for e in plugins.get(plugin_id, []) if isinstance(e, dict)
                and e.get("scope", "user") != "user"]
        plugins[plugin_id] = [{"scope": "user", "installPath": str(path), "version": version,
                               "installedAt": stamp, "lastUpdated": stamp}, *kept]
        write_object(self.folder / INSTALLED, {**data, "version": data.get("version", 2),
                                               "plugins": plugins})

    def drop_installed(self, plugin_id: str) -> None:
        data = read_object(self.folder / INSTALLED)
        plugins = data.get("plugins")
        if isinstance(plugins, dict) and plugin_id in plugins:
            del plugins[plugin_id]
            write_object(self.folder / INSTALLED, data)
        self._settings_key("enabledPlugins", plugin_id, None)

    def set_enabled(self, plugin_id: str, on: bool) -> None:
        self._settings_key("enabledPlugins", plugin_id, on)

    def write_settings(self, data: dict[str, Any]) -> None:
        write_object(self.settings_path, data)

    def _settings_key(self, key: str, name: str, value: Any) -> None:
        data = self.settings()
        table = data.get(key)
        if not isinstance(table, dict):
            table = {}
        if value is None:
            table.pop(name, None)
        else:
            table[name] = value
        data[key] = table
        write_object(self.settings_path, data)
