"""A plugin folder and a marketplace file, read as Claude Code defines them.

A plugin is a folder with an optional ``.claude-plugin/plugin.json`` (``name``,
``version``, ``description``, and paths that add to the default places: ``commands``,
``agents``, ``skills``, ``hooks``, ``mcpServers``; ``outputStyles``, which replaces the
default folder). Its parts, by default: ``commands/*.md``, ``agents/*.md``,
``skills/<skill>/SKILL.md``, ``hooks/hooks.json``, ``.mcp.json`` and ``output-styles/``. ``${CLAUDE_PLUGIN_ROOT}`` in its hooks and servers is the folder
(``${CLAUDE_PLUGIN_DATA}``, its data folder, goes in with its options: ``option_use.py``).

Every path a manifest names must stay inside the plugin's folder (after symlinks):
one that leaves it is a problem, and that part is not loaded; the rest are. A manifest
that does not parse makes the plugin a problem, never the end of the others.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import json
import re
from pathlib import Path
from typing import Any

from pydantic import Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.plugins.options import OptionField, read_user_config

MANIFEST = Path(".claude-plugin") / "plugin.json"
MARKETPLACE = Path(".claude-plugin") / "marketplace.json"
ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"
DATA_VAR = "${CLAUDE_PLUGIN_DATA}"
NAME_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # never "." nor ".."
MAX_JSON_BYTES = 1024 * 1024


class PluginError(ValueError):
    """A plugin or marketplace that cannot be used at all."""


class JsonPart(DeferredModel):
    """A JSON value a plugin brings (its hooks, its servers), and its file."""

    file: Path
    value: Any
    env: dict[str, str] = Field(default_factory=dict)  # a hook's: the plugin's options


class Plugin(DeferredModel):
    """One plugin folder, read: where each of its parts is."""

    name: str
    root: Path
    plugin_id: str = ""  # NAME@MARKETPLACE (where its options are kept)
    data: Path | None = None  # its ``${CLAUDE_PLUGIN_DATA}`` (``option_use.py``: made on use)
    version: str = ""
    description: str = ""
    user_config: dict[str, OptionField] = Field(default_factory=dict)  # its options
    commands: list[Path] = Field(default_factory=list)  # folders of *.md
    agents: list[Path] = Field(default_factory=list)  # folders of *.md
    skills: list[Path] = Field(default_factory=list)  # folders of <skill>/SKILL.md
    hooks: list[JsonPart] = Field(default_factory=list)  # each a ``hooks`` object
    servers: list[JsonPart] = Field(default_factory=list)  # each an ``mcpServers`` object
    output_styles: list[Path] = Field(default_factory=list)  # folders or *.md files
    problems: list[str] = Field(default_factory=list)


class MarketEntry(DeferredModel):
    name: str
    source: Any  # "./path" (inside the marketplace), or an object (git, github, url)
    description: str = ""
    version: str = ""


class Marketplace(DeferredModel):
    name: str
    root: Path
    plugin_root: Path | None = None
    plugins: list[MarketEntry] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)

    def find(self, name: str) -> MarketEntry | None:
        return next((p for p in self.plugins if p.name == name), None)


def read_json(path: Path) -> Any:
    """A JSON file; raises PluginError with the file's name."""
    try:
        if not path.is_file():  # a FIFO or a device would hang the read
            raise PluginError(f"{path}: not a regular file")
        if path.stat().st_size > MAX_JSON_BYTES:
            raise PluginError(f"{path}: larger than {MAX_JSON_BYTES // 1024} KB")
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PluginError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PluginError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise PluginError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise PluginError(f"{path}: nested too deeply") from None


def inside(root: Path, given: str, what: str) -> Path:
    """``given`` (relative to ``root``) as a path that stays in ``root``; else PluginError."""
    if not isinstance(given, str) or not given.strip():
        raise PluginError(f"{what}: expected a relative path, got {given!r}")
    path = (root / given).resolve()
    if not path.is_relative_to(root.resolve()):
        raise PluginError(f"{what}: {given} is outside the plugin's folder (not loaded)")
    return path


def with_root(value: Any, root: Path, var: str = ROOT_VAR) -> Any:
    """``value`` with ``var`` (``${CLAUDE_PLUGIN_ROOT}``) replaced by the folder ``root``
    in every string."""
    if isinstance(value, str):
        return value.replace(var, str(root))
    if isinstance(value, list):
        return [with_root(v, root, var) for v in value]
    if isinstance(value, dict):
        return {k: with_root(v, root, var) for k, v in value.items()}
    return value


def read_plugin(root: Path, name: str | None = None) -> Plugin:
    """The plugin in ``root``; raises PluginError when its manifest cannot be used."""
    root = root.resolve()
    if not root.is_dir():
        raise PluginError(f"{root}: no such folder")
    meta: dict[str, Any] = {}
    if (root / MANIFEST).is_file():
        data = read_json(root / MANIFEST)
        if not isinstance(data, dict):
            raise PluginError(f"{root / MANIFEST}: expected a JSON object")
        meta = data
    plugin_name = str(meta.get("name") or name or root.name)
    if not NAME_OK.match(plugin_name):
        raise PluginError(f"{root / MANIFEST}: name {plugin_name!r}: letters, digits, '.', '_' "
                          "and '-' only")
    try:
        options = read_user_config(meta.get("userConfig"), str(root / MANIFEST))
    except ValueError as exc:
        raise PluginError(str(exc)) from None
    plugin = Plugin(name=plugin_name, root=root, version=str(meta.get("version") or ""),
                    description=str(meta.get("description") or ""), user_config=options,
                    plugin_id=f"{plugin_name}@inline")
    for key in ("commands", "agents", "skills"):
        getattr(plugin, key).extend(_folders(plugin, key, meta.get(key)))
    plugin.hooks.extend(_json_parts(plugin, "hooks", "hooks/hooks.json", meta.get("hooks")))
    plugin.servers.extend(_json_parts(plugin, "mcpServers", ".mcp.json", meta.get("mcpServers")))
    plugin.output_styles.extend(_style_paths(plugin, meta.get("outputStyles")))
    plugin.problems.extend(_not_loaded(plugin, meta))
    return plugin


#: What a plugin may bring that agent-tui cannot use: (manifest key, default file or
#: folder, what it is, why it is not loaded). docs/claude-code.md lists the same.
UNSUPPORTED = (
    ("lspServers", ".lsp.json", "LSP servers", "agent-tui has no language-server client"),
    ("channels", None, "channels", "agent-tui takes no messages pushed by an MCP server"),
    ("monitors", "monitors/monitors.json", "monitors", "agent-tui arms no background monitors"),
    ("themes", "themes", "themes", "agent-tui's themes are its own"),
    ("workflows", "workflows", "workflows", "agent-tui has no workflows"),
    ("settings", "settings.json", "default settings", "a plugin's settings are not merged into yours"),
    ("dependencies", None, "dependencies", "the plugins it needs are not installed or enabled with it"),
)


def _not_loaded(plugin: Plugin, meta: dict[str, Any]) -> list[str]:
    """A notice for each part agent-tui cannot honour (never dropped unsaid)."""
    said = []
    for key, default, what, why in UNSUPPORTED:
        where = (f"{key} in {MANIFEST}" if meta.get(key) not in (None, [], {}) else
                 default if default and (plugin.root / default).exists() else None)
        if where:
            said.append(f"plugin {plugin.name}: its {what} ({where}) are not loaded: {why}")
    return said


def _style_paths(plugin: Plugin, given: Any) -> list[Path]:
    """``output-styles/``, or what the manifest names instead (folders or files), as
    Claude Code reads them."""
    if given is None:
        default = plugin.root / "output-styles"
        return [default] if default.is_dir() else []
    found = []
    for item in _as_list(given):
        try:
            found.append(inside(plugin.root, item, f"plugin {plugin.name}: outputStyles"))
        except PluginError as exc:
            plugin.problems.append(str(exc))
    return found


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _folders(plugin: Plugin, key: str, extra: Any) -> list[Path]:
    found = [plugin.root / key] if (plugin.root / key).is_dir() else []
    for given in _as_list(extra):
        try:
            path = inside(plugin.root, given, f"plugin {plugin.name}: {key}")
        except PluginError as exc:
            plugin.problems.append(str(exc))
            continue
        if not path.is_dir():
            plugin.problems.append(f"plugin {plugin.name}: {key}: {given} is not a folder "
                                   "(only folders are read)")
        elif path not in found:
            found.append(path)
    return found


def _json_parts(plugin: Plugin, key: str, default: str, extra: Any) -> list[JsonPart]:
    """The default file's and the manifest's (paths, or an object written inline)."""
    given: list[Any] = [default] if (plugin.root / default).is_file() else []
    given += [g for g in _as_list(extra) if g != default and g != f"./{default}"]
    parts = []
    for item in given:
        try:
            if isinstance(item, dict):
                file, data = plugin.root / MANIFEST, {key: item}
            else:
                file = inside(plugin.root, item, f"plugin {plugin.name}: {key}")
                data = read_json(file)
            parts.append(JsonPart(file=file, value=with_root(_unwrapped(data, key, file), plugin.root)))
        except PluginError as exc:
            plugin.problems.append(str(exc))
    return parts


def _unwrapped(data: Any, key: str, file: Path) -> Any:
    """``{"hooks": {...}}`` / ``{"mcpServers": {...}}``, or the bare object."""
    if not isinstance(data, dict):
        raise PluginError(f"{file}: expected a JSON object")
    return data[key] if key in data else data


def read_marketplace(root: Path) -> Marketplace:
    """The marketplace in folder ``root`` (or the file itself); raises PluginError."""
    root = root.expanduser().resolve()
    file = root if root.is_file() else root / MARKETPLACE
    if not file.is_file():
        raise PluginError(f"{root}: no marketplace here (expected {MARKETPLACE})")
    data = read_json(file)
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise PluginError(f"{file}: expected an object with a \"name\"")
    if not NAME_OK.match(data["name"]):
        raise PluginError(f"{file}: name {data['name']!r}: letters, digits, '.', '_' and '-' only")
    base = file.parent.parent if file.parent.name == ".claude-plugin" else file.parent
    market = Marketplace(name=data["name"], root=base)
    for n, entry in enumerate(_as_list(data.get("plugins"))):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            market.problems.append(f"{file}: plugins[{n}]: expected an object with a \"name\"")
            continue
        if not NAME_OK.match(entry["name"]):  # it becomes a folder's name in the cache
            market.problems.append(f"{file}: plugins[{n}]: name {entry['name']!r}: letters, "
                                   "digits, '.', '_' and '-' only (left out)")
            continue
        market.plugins.append(MarketEntry(
            name=entry["name"], source=entry.get("source"),
            description=str(entry.get("description") or ""), version=str(entry.get("version") or "")))
    meta = data.get("metadata")
    plugin_root = meta.get("pluginRoot") if isinstance(meta, dict) else None
    if isinstance(plugin_root, str):  # where a source given as a bare name is
        market.plugin_root = inside(base, plugin_root, f"{file}: metadata.pluginRoot")
    return market
