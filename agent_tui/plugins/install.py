"""Adding marketplaces, installing, enabling and disabling plugins, written where
Claude Code writes them (``records.py``), so that either program sees the other's.

A marketplace comes from a local folder (recorded as ``{"source": "directory"}``) or a
git URL (cloned, without prompts and bounded in time, into
``~/.claude/plugins/marketplaces/NAME``). A plugin is copied from its marketplace (or
from its git source, cloned first: ``sources.py``) into
``~/.claude/plugins/cache/MARKETPLACE/PLUGIN/VERSION/``; symlinks are not copied (a
link could reach outside the plugin). Installing does not enable: enabling is a
separate yes, given after the user has seen what the plugin runs (``review.py``).
"""

from __future__ import annotations

import os
import stat
import shutil
import tempfile
from pathlib import Path
from typing import Any

from agent_tui.plugins.loaded import plugin_name
from agent_tui.plugins.manifest import Marketplace, Plugin, PluginError, read_marketplace, read_plugin
from agent_tui.plugins.records import Records
from agent_tui.plugins.sources import fetch, git, is_git_source


def is_git_url(source: str) -> bool:
    return source.startswith(("https://", "http://", "git@", "ssh://", "file://")) or source.endswith(".git")


def add_marketplace(records: Records, source: str) -> Marketplace:
    """A marketplace from a folder or a git URL, recorded; raises PluginError."""
    if is_git_url(source):
        return _add_git(records, source)
    folder = Path(source).expanduser().resolve()
    market = read_marketplace(folder)
    records.set_marketplace(market.name, {"source": "directory", "path": str(market.root)},
                            market.root)
    return market


def _add_git(records: Records, url: str) -> Marketplace:
    base = records.folder / "marketplaces"
    base.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".adding-", dir=base))
    try:
        _git_clone(url, scratch / "repo")
        market = read_marketplace(scratch / "repo")
        final = base / market.name
        if final.exists():
            shutil.rmtree(final)
        (scratch / "repo").rename(final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    records.set_marketplace(market.name, {"source": "git", "url": url}, final)
    return read_marketplace(final)


def _git_clone(url: str, into: Path) -> None:
    git(["clone", "--quiet", "--depth", "1", "--", url, str(into)], url)


def known_marketplace(records: Records, name: str) -> Marketplace:
    entry = records.marketplaces().get(name)
    if not isinstance(entry, dict) or not isinstance(entry.get("installLocation"), str):
        known = ", ".join(sorted(records.marketplaces())) or "none"
        raise PluginError(f"no marketplace named {name!r} (known: {known}); "
                          "add it with: agent-tui plugin marketplace add PATH")
    return read_marketplace(Path(entry["installLocation"]))


def remove_marketplace(records: Records, name: str) -> list[str]:
    """Forgets the marketplace and uninstalls its plugins (as Claude Code does)."""
    if name not in records.marketplaces():
        raise PluginError(f"no marketplace named {name!r}")
    gone = [pid for pid in records.installed() if pid.endswith(f"@{name}")]
    for plugin_id in gone:
        records.drop_installed(plugin_id)
    records.drop_marketplace(name)
    clone = records.folder / "marketplaces" / name
    if clone.is_dir():
        shutil.rmtree(clone, ignore_errors=True)
    return gone


def plugin_id_for(records: Records, spec: str) -> str:
    """``NAME@MARKETPLACE`` for ``spec``; a bare name must be in exactly one marketplace."""
    if "@" in spec:
        return spec
    having = [m for m in records.marketplaces()
              if known_marketplace(records, m).find(spec) is not None]
    if len(having) != 1:
        where = "no known marketplace" if not having else f"several: {', '.join(having)}"
        raise PluginError(f"plugin {spec!r} is in {where}; name it as {spec}@MARKETPLACE")
    return f"{spec}@{having[0]}"


def install(records: Records, plugin_id: str) -> tuple[Plugin, list[str]]:
    """Copies the plugin into the cache and records it (not enabled); the plugin read
    from its copy, and what was left out of the copy."""
    name, _, market_name = plugin_id.rpartition("@")
    market = known_marketplace(records, market_name)
    entry = market.find(name)
    if entry is None:
        raise PluginError(f"marketplace {market_name} has no plugin {name!r} "
                          f"(it has: {', '.join(p.name for p in market.plugins) or 'none'})")
    with tempfile.TemporaryDirectory(prefix=".fetching-", dir=_made(records.folder)) as scratch:
        if is_git_source(entry.source):  # github, url, git-subdir: cloned first
            source = fetch(entry.source, Path(scratch) / "repo")
        else:
            source = _source_folder(market, entry.source)
        found = read_plugin(source, name)  # a broken manifest stops here, nothing copied
        version = found.version or entry.version or "unknown"
        target = records.folder / "cache" / market_name / name / _safe(version)
        if target.exists():
            shutil.rmtree(target)
        skipped: list[str] = []
        shutil.copytree(source, target, symlinks=True, ignore=_no_links(skipped))
    records.set_installed(plugin_id, target, version)
    plugin = read_plugin(target, name)
    plugin.plugin_id = plugin_id
    return plugin, skipped


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _source_folder(market: Marketplace, source: Any) -> Path:
    """A plugin's folder: a path inside the marketplace (relative to its ``pluginRoot``
    when it is a bare name)."""
    if not isinstance(source, str):
        kind = source.get("source") if isinstance(source, dict) else source
        raise PluginError(f"marketplace {market.name}: plugin source {kind!r} is not supported "
                          "(a path inside the marketplace, github, url and git-subdir are)")
    bare = market.plugin_root is not None and not source.startswith(("./", "../"))
    base = market.plugin_root if bare and market.plugin_root else market.root
    path = (base / source).resolve()
    if not path.is_relative_to(market.root.resolve()):
        raise PluginError(f"marketplace {market.name}: source {source} is outside the marketplace")
    return path


def _no_links(skipped: list[str]) -> Any:
    """Links and special files (a FIFO, a socket, a device: a copy would wait on one or
    read without end) are left out and said, and a clone's ``.git`` (not the plugin's)."""
    def ignore(folder: str, names: list[str]) -> list[str]:
        out = [n for n in names if _not_copied(os.path.join(folder, n))]
        skipped.extend(os.path.join(folder, n) for n in out)
        return out + [n for n in names if n == ".git" and n not in out]
    return ignore


def _not_copied(path: str) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return True
    return stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _safe(version: str) -> str:
    """A version as one folder name: never empty, "." or ".." (a manifest writes it)."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in version)[:64]
    return safe if safe.strip(".") else "unknown"


def installed_plugin(records: Records, plugin_id: str) -> Plugin:
    path = records.install_path(plugin_id)
    if path is None:
        raise PluginError(f"plugin {plugin_id} is not installed "
                          f"(agent-tui plugin install {plugin_id})")
    plugin = read_plugin(path, plugin_name(plugin_id))
    plugin.plugin_id = plugin_id
    return plugin


def installed_id(records: Records, spec: str) -> str:
    """The installed plugin ``spec`` names (``NAME`` or ``NAME@MARKETPLACE``)."""
    if "@" in spec:
        return spec
    ids = [pid for pid in records.installed() if plugin_name(pid) == spec]
    if len(ids) != 1:
        raise PluginError(f"plugin {spec!r}: " + ("not installed" if not ids
                          else f"installed from several marketplaces: {', '.join(ids)}"))
    return ids[0]
