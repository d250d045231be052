"""``agent-tui plugin ...``: Claude Code's plugins on the command line.

    agent-tui plugin marketplace add PATH|GIT-URL
    agent-tui plugin marketplace list
    agent-tui plugin marketplace remove NAME
    agent-tui plugin install NAME[@MARKETPLACE] [--yes]
    agent-tui plugin enable NAME[@MARKETPLACE] [--yes]
    agent-tui plugin disable NAME[@MARKETPLACE]
    agent-tui plugin list
    agent-tui plugin config NAME[@MARKETPLACE] [KEY=VALUE ...]

Before a plugin is enabled (``install`` enables too), what it will run is printed
and a yes is needed: ``--yes``, or ``y`` typed at a terminal. Without it, nothing is
enabled. The records are Claude Code's own (``plugins/records.py``).

A plugin with options (its manifest's ``userConfig``) asks for them once enabled, one
field at a time at a terminal (a sensitive one unechoed); without a terminal it says
how to set them: ``config`` with ``KEY=VALUE`` (``KEY=-`` reads the value from stdin,
so a secret stays out of the shell's history), and alone it lists them (a sensitive
value never shown).
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable

from agent_tui.plugins import Plugin, PluginError
from agent_tui.plugins.records import RecordError, Records

USAGE = ("usage: agent-tui plugin marketplace add|list|remove ... | "
         "install|enable NAME[@MARKETPLACE] [--yes] | disable NAME[@MARKETPLACE] | list | "
         "config NAME[@MARKETPLACE] [KEY=VALUE ...]")


def plugin_main(argv: list[str], *, ask: Callable[[str], bool] | None = None) -> int:
    args = [a for a in argv if a not in ("--yes", "-y")]
    yes = len(args) != len(argv)
    records = Records()
    try:
        match args:
            case ["marketplace", "add", source]:
                return _market_add(records, source)
            case ["marketplace", "list"]:
                return _market_list(records)
            case ["marketplace", "remove" | "rm", name]:
                return _market_remove(records, name)
            case ["install" | "i", spec]:
                return _install(records, spec, yes, ask or _ask)
            case ["enable", spec]:
                return _enable(records, spec, yes, ask or _ask)
            case ["disable", spec]:
                return _disable(records, spec)
            case ["list"]:
                return _list(records)
            case ["config", spec, *pairs]:
                return _config(records, spec, pairs)
            case _:
                print(USAGE, file=sys.stderr)
                return 1
    except (PluginError, RecordError) as exc:
        print(f"agent-tui: {exc}", file=sys.stderr)
        return 1


def _market_add(records: Records, source: str) -> int:
    from agent_tui.plugins.install import add_marketplace

    market = add_marketplace(records, source)
    for problem in market.problems:
        print(f"agent-tui: {problem}", file=sys.stderr)
    names = ", ".join(p.name for p in market.plugins) or "none"
    print(f"Added marketplace {market.name} ({market.root}); its plugins: {names}")
    return 0


def _market_list(records: Records) -> int:
    markets = records.marketplaces()
    if not markets:
        print("no marketplaces")
    for name, entry in sorted(markets.items()):
        source = entry.get("source", {}) if isinstance(entry, dict) else {}
        where = source.get("path") or source.get("url") or source.get("repo") if isinstance(source, dict) else None
        print(f"{name}  {where or '?'}")
    return 0


def _market_remove(records: Records, name: str) -> int:
    from agent_tui.plugins.install import remove_marketplace

    gone = remove_marketplace(records, name)
    print(f"Removed marketplace {name}" + (f"; uninstalled {', '.join(gone)}" if gone else ""))
    return 0


def _install(records: Records, spec: str, yes: bool, ask: Callable[[str], bool]) -> int:
    from agent_tui.plugins.install import install, plugin_id_for

    plugin_id = plugin_id_for(records, spec)
    plugin, skipped = install(records, plugin_id)
    print(f"Installed {plugin_id} in {plugin.root}")
    for path in skipped:
        print(f"agent-tui: {path}: a symlink or special file, not copied", file=sys.stderr)
    return _confirm_enable(records, plugin_id, plugin, yes, ask)


def _enable(records: Records, spec: str, yes: bool, ask: Callable[[str], bool]) -> int:
    from agent_tui.plugins.install import installed_id, installed_plugin

    plugin_id = installed_id(records, spec)
    return _confirm_enable(records, plugin_id, installed_plugin(records, plugin_id), yes, ask)


def _confirm_enable(records: Records, plugin_id: str, plugin: Plugin, yes: bool,
                    ask: Callable[[str], bool]) -> int:
    from agent_tui.plugins.review import review

    print("\n".join(review(plugin)))
    if not (yes or ask(f"Enable {plugin_id}? [y/N] ")):
        if not records.enabled().get(plugin_id):  # recorded as Claude Code's disabled
            records.set_enabled(plugin_id, False)
        print(f"Not enabled. To enable it later: agent-tui plugin enable {plugin_id}")
        return 1
    records.set_enabled(plugin_id, True)
    print(f"Enabled {plugin_id}: new sessions use it.")
    if plugin.user_config:
        _ask_options(records, plugin_id, plugin)
    return 0


def _ask_options(records: Records, plugin_id: str, plugin: Plugin) -> None:
    """Each option asked at a terminal (Enter keeps what it has); else how to set them."""
    from agent_tui.plugins.option_use import how_to_set
    from agent_tui.plugins.options import parse_value, save_values, shown, stored_values, unset

    values = stored_values(plugin_id, plugin.user_config, records)
    if not sys.stdin.isatty():
        missing = unset(plugin.user_config, values)
        if missing:
            print(f"{plugin_id} needs options: {', '.join(missing)} ({how_to_set(plugin_id)} "
                  "KEY=VALUE)")
        return
    print(f"{plugin_id} options (Enter keeps the value shown):")
    given = {}
    for key, field in plugin.user_config.items():
        print(f"  {field.title}: {field.description}")
        while True:
            prompt = f"  {key} [{shown(field, values.get(key))}]: "
            try:
                text = getpass.getpass(prompt) if field.sensitive else input(prompt)
            except EOFError:
                return
            if not text.strip():
                break
            try:
                given[key] = parse_value(field, text)
                break
            except ValueError as exc:
                print(f"  {exc}")
    save_values(plugin_id, plugin.user_config, given, records)
    missing = unset(plugin.user_config, {**values, **given})
    if missing:
        print(f"Still not set: {', '.join(missing)} ({how_to_set(plugin_id)} KEY=VALUE)")


def _config(records: Records, spec: str, pairs: list[str]) -> int:
    from agent_tui.plugins.install import installed_id, installed_plugin
    from agent_tui.plugins.options import parse_value, save_values, shown, stored_values

    plugin_id = installed_id(records, spec)
    schema = installed_plugin(records, plugin_id).user_config
    if not schema:
        print(f"{plugin_id} has no options")
        return 0 if not pairs else 1
    given = {}
    for pair in pairs:
        key, eq, text = pair.partition("=")
        if not eq or key not in schema:
            print(f"agent-tui: {pair.split('=')[0]!r}: {plugin_id}'s options are "
                  f"{', '.join(schema)} (give KEY=VALUE)", file=sys.stderr)
            return 1
        if text == "-":
            text = sys.stdin.readline().rstrip("\n")
        try:
            given[key] = parse_value(schema[key], text)
        except ValueError as exc:
            print(f"agent-tui: {key}: {exc}", file=sys.stderr)
            return 1
    save_values(plugin_id, schema, given, records)
    values = stored_values(plugin_id, schema, records)
    for key, field in schema.items():
        need = " (required)" if field.required else ""
        print(f"{key}{need}  {shown(field, values.get(key))}  {field.title}")
    return 0


def _disable(records: Records, spec: str) -> int:
    from agent_tui.plugins.install import installed_id

    plugin_id = installed_id(records, spec)
    records.set_enabled(plugin_id, False)
    print(f"Disabled {plugin_id}")
    return 0


def _list(records: Records) -> int:
    installed = records.installed()
    enabled = records.enabled()
    if not installed:
        print("no plugins installed")
    for plugin_id, entries in sorted(installed.items()):
        version = next((str(e.get("version", "")) for e in entries), "")
        state = "enabled" if enabled.get(plugin_id) else "disabled"
        print(f"{plugin_id}  {version}  {state}")
    return 0


def _ask(question: str) -> bool:
    """A yes typed at a terminal; without one (a pipe, a script) the answer is no."""
    if not sys.stdin.isatty():
        print("(no terminal to ask: give --yes to enable)", file=sys.stderr)
        return False
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False
