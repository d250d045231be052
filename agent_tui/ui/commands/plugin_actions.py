"""``/plugin`` in the TUI: Claude Code's marketplaces and plugins listed, added,
installed, enabled and disabled, with the code ``agent-tui plugin ...`` uses.

That code is ``plugins/install.py``, ``plugins/records.py`` and ``plugins/review.py``::

    /plugin                                  the page: marketplaces, plugins, what did not load
    /plugin marketplace add PATH|GIT-URL     (a clone runs off the screen's thread)
    /plugin marketplace list                 each marketplace, where from, and its plugins
    /plugin marketplace remove NAME
    /plugin install NAME[@MARKETPLACE]       installed, then offered to enable
    /plugin enable NAME[@MARKETPLACE]        what it will run shown first; y enables
    /plugin disable NAME[@MARKETPLACE]
    /plugin config NAME                      its options as a form

Enabling asks first, always: the review (``ui/screens/plugin_review.py``) lists the
plugin's hooks, MCP servers and commands' ``!`` lines, and only ``y`` enables it; a
plugin with options then opens its form. A no records the plugin as disabled, as the
command line does. New sessions use what changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from rich.console import RenderableType
from rich.text import Text

from agent_tui.ui.render.safe_text import clean, first_line

if TYPE_CHECKING:
    from agent_tui.plugins import Plugin
    from agent_tui.plugins.records import Records
    from agent_tui.ui.commands.preferences import PreferencesHost

USAGE = ("/plugin [marketplace add PATH|GIT-URL | marketplace list | marketplace remove NAME | "
         "install NAME[@MARKETPLACE] | enable NAME | disable NAME | config NAME]")
T = TypeVar("T")
_working: set[asyncio.Task[None]] = set()  # slow work under way (held: a task is weakly kept)


class PluginHost(Protocol):
    @property
    def preferences(self) -> PreferencesHost: ...
    def notice(self, level: str, text: str) -> None: ...
    def show_page(self, title: str, body: RenderableType) -> None: ...


def plugin_command(host: PluginHost, args: str) -> None:
    """``/plugin ARGS``: what it asks, done; a mistake said on the status line."""
    from agent_tui.plugins import PluginError
    from agent_tui.plugins.records import RecordError, Records
    from agent_tui.ui.commands.plugins_page import plugins_report

    records = Records()
    try:
        match args.split():
            case [] | ["list"]:
                host.show_page("plugins", plugins_report())
            case ["config", spec]:
                host.preferences.open_plugin_options(spec)
            case ["marketplace" | "market", "add", source]:
                _market_add(host, records, source)
            case ["marketplace" | "market", "list"]:
                host.show_page("marketplaces", marketplaces_page(records))
            case ["marketplace" | "market", "remove" | "rm", name]:
                _market_remove(host, records, name)
            case ["install" | "i", spec]:
                _install(host, records, spec)
            case ["enable", spec]:
                _enable(host, records, spec)
            case ["disable", spec]:
                _disable(host, records, spec)
            case _:
                host.notice("warning", f"usage: {USAGE}")
    except (PluginError, RecordError, OSError) as exc:
        host.notice("warning", first_line(str(exc), 300))


def _off_thread(host: PluginHost, work: Callable[[], T], done: Callable[[T], None]) -> None:
    """``work`` in a thread (a git clone may take a while); ``done`` with its result on
    the screen's loop, or what went wrong said."""
    from agent_tui.plugins import PluginError
    from agent_tui.plugins.records import RecordError

    async def run() -> None:
        try:
            result = await asyncio.to_thread(work)
        except (PluginError, RecordError, OSError) as exc:
            host.notice("warning", first_line(str(exc), 300))
            return
        done(result)

    task = asyncio.get_running_loop().create_task(run())
    _working.add(task)
    task.add_done_callback(_working.discard)


def _market_add(host: PluginHost, records: Records, source: str) -> None:
    from agent_tui.plugins.install import add_marketplace

    def added(market: Any) -> None:
        names = ", ".join(p.name for p in market.plugins) or "none"
        problems = "; ".join(market.problems)
        host.notice("warning" if problems else "info",
                    f"added marketplace {clean(market.name)}; its plugins: {clean(names)}"
                    + (f" ({first_line(problems, 200)})" if problems else ""))

    host.notice("info", f"adding marketplace {clean(source)} ...")
    _off_thread(host, lambda: add_marketplace(records, source), added)


def _market_remove(host: PluginHost, records: Records, name: str) -> None:
    from agent_tui.plugins.install import remove_marketplace

    gone = remove_marketplace(records, name)
    host.notice("info", f"removed marketplace {clean(name)}"
                + (f"; uninstalled {clean(', '.join(gone))}" if gone else ""))


def _install(host: PluginHost, records: Records, spec: str) -> None:
    from agent_tui.plugins.install import install, plugin_id_for

    plugin_id = plugin_id_for(records, spec)

    def installed(done: tuple[Plugin, list[str]]) -> None:
        plugin, skipped = done
        if skipped:
            host.notice("warning", f"installed {clean(plugin_id)}; not copied (links or special "
                                   f"files): {first_line(', '.join(skipped), 200)}")
        _offer(host, records, plugin_id, plugin)

    host.notice("info", f"installing {clean(plugin_id)} ...")
    _off_thread(host, lambda: install(records, plugin_id), installed)


def _enable(host: PluginHost, records: Records, spec: str) -> None:
    from agent_tui.plugins.install import installed_id, installed_plugin

    plugin_id = installed_id(records, spec)
    _offer(host, records, plugin_id, installed_plugin(records, plugin_id))


def _offer(host: PluginHost, records: Records, plugin_id: str, plugin: Plugin) -> None:
    """What the plugin will run, then a yes to enable it (then its options, if any)."""
    from agent_tui.plugins.review import review

    def answered(yes: bool | None) -> None:
        if not yes:
            if not records.enabled().get(plugin_id):  # recorded as Claude Code's disabled
                records.set_enabled(plugin_id, False)
            host.notice("info", f"{clean(plugin_id)} not enabled; later: /plugin enable {clean(plugin_id)}")
            return
        records.set_enabled(plugin_id, True)
        host.notice("info", f"enabled {clean(plugin_id)}: new sessions use it")
        if plugin.user_config:
            host.preferences.open_plugin_options(plugin_id)

    host.preferences.open_plugin_review(plugin_id, review(plugin), answered)


def _disable(host: PluginHost, records: Records, spec: str) -> None:
    from agent_tui.plugins.install import installed_id

    plugin_id = installed_id(records, spec)
    records.set_enabled(plugin_id, False)
    host.notice("info", f"disabled {clean(plugin_id)}: new sessions go without it")


def marketplaces_page(records: Records) -> Text:
    """Each marketplace, where it comes from, and its plugins (installed or not)."""
    from agent_tui.plugins import PluginError
    from agent_tui.plugins.install import known_marketplace
    from agent_tui.ui.screens.plugin_review import home_short

    installed, enabled = records.installed(), records.enabled()
    out = Text()
    markets = records.marketplaces()
    if not markets:
        out.append("no marketplaces: /plugin marketplace add PATH|GIT-URL\n")
    for name, entry in sorted(markets.items()):
        source = entry.get("source", {}) if isinstance(entry, dict) else {}
        where = (source.get("path") or source.get("url") or source.get("repo")) if isinstance(source, dict) else None
        out.append(f"{clean(name)}", style="bold")
        out.append(f"  {clean(home_short(str(where or '?')))}\n", style="dim")
        try:
            market = known_marketplace(records, name)
        except PluginError as exc:
            out.append(f"  {first_line(str(exc), 300)}\n")
            continue
        for plugin in market.plugins:
            plugin_id = f"{plugin.name}@{name}"
            state = ("enabled" if enabled.get(plugin_id) else "installed") if plugin_id in installed \
                else "not installed"
            out.append(f"  {clean(plugin.name)}", style="bold")
            out.append(f"  {state}", style="dim")
            out.append(f"  {first_line(plugin.description, 120)}\n" if plugin.description else "\n")
    out.append(f"\n{USAGE}\n", style="dim")
    return out
