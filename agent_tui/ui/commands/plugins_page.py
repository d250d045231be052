"""The page ``/plugin`` shows: Claude Code's marketplaces and installed plugins (each
enabled or not, with what it brings), what a plugin that did not load has wrong, and
the commands that change them (``/plugin install|enable|disable ...``,
``ui/commands/plugin_actions.py``; ``agent-tui plugin ...`` on the command line).

``/plugin config NAME`` is a plugin's options as a form (:func:`option_form`): each
field with its title and description, a sensitive one typed unechoed and never shown
(left empty, the value kept stays); the values are checked against the plugin's
``userConfig`` and kept where ``plugins/options.py`` keeps them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from agent_tui.ui.render.safe_text import clean, first_line

if TYPE_CHECKING:
    from agent_tui.mcp_catalog.elicitation import Elicitation
    from agent_tui.plugins.options import Schema

HOW = ("/plugin marketplace add PATH|GIT-URL, /plugin marketplace list, /plugin install NAME@MARKETPLACE, "
       "/plugin enable|disable NAME (new sessions use what changed), /plugin config NAME: its options; "
       "the same as agent-tui plugin ... on the command line")


def plugins_report() -> Text:
    from agent_tui.plugins import enabled_plugins
    from agent_tui.plugins.records import RecordError, Records

    records = Records()
    out = Text()
    try:
        markets, installed, enabled = records.marketplaces(), records.installed(), records.enabled()
    except RecordError as exc:
        out.append(f"{clean(str(exc))}\n")
        return out
    out.append("marketplaces\n", style="bold")
    for name in sorted(markets) or ["(none)"]:
        out.append(f"  {clean(name)}\n")
    out.append("\nplugins\n", style="bold")
    found = enabled_plugins()
    loaded = {p.name: p for p in found.plugins}
    for plugin_id in sorted(installed):
        out.append(f"  {clean(plugin_id)}", style="bold")
        out.append("  enabled\n" if enabled.get(plugin_id) else "  disabled\n", style="dim")
        plugin = loaded.get(plugin_id.rpartition("@")[0])
        if plugin is not None and plugin.description:
            out.append(f"    {first_line(plugin.description, 200)}\n")
    if not installed:
        out.append("  (none installed)\n")
    if found.problems:
        out.append("\nnotes\n", style="bold")
        for problem in found.problems:
            out.append(f"  {first_line(problem, 300)}\n")
    out.append(f"\n{HOW}\n", style="dim")
    return out


def option_form(spec: str) -> tuple[str, Schema, Elicitation]:
    """The installed plugin ``spec``'s id, options and form; ValueError says why not."""
    from agent_tui.mcp_catalog.elicitation import Elicitation, ElicitMode, FieldKind, FormField
    from agent_tui.plugins.install import installed_id, installed_plugin
    from agent_tui.plugins.options import OptionType, stored_values
    from agent_tui.plugins.records import RecordError, Records

    records = Records()
    try:
        plugin_id = installed_id(records, spec)
        schema = installed_plugin(records, plugin_id).user_config
        values = stored_values(plugin_id, schema, records)
    except RecordError as exc:
        raise ValueError(str(exc)) from None
    if not schema:
        raise ValueError(f"{plugin_id} has no options")
    fields = []
    for key, option in schema.items():
        kept = option.sensitive and key in values
        kind = {OptionType.BOOLEAN: FieldKind.BOOLEAN, OptionType.NUMBER: FieldKind.NUMBER}.get(
            option.type, FieldKind.CHOICE if option.options else FieldKind.STRING)
        value = values.get(key)
        fields.append(FormField(
            name=key, kind=kind, title=option.title, required=option.required and not kept,
            description=option.description + (" (set: leave empty to keep it)" if kept else "")
            + (" (comma-separated)" if option.multiple else ""),
            default=None if option.sensitive else (", ".join(value) if isinstance(value, list) else value),
            choices=list(option.options or []), minimum=option.min, maximum=option.max,
            secret=option.sensitive))
    message = f"{plugin_id}'s options (kept in your settings; a sensitive one apart, 0600)"
    return plugin_id, schema, Elicitation(server=plugin_id, mode=ElicitMode.FORM,
                                          message=message, fields=fields)


def save_form(plugin_id: str, schema: Schema, content: dict[str, Any]) -> tuple[str, str]:
    """Keeps what the form gave; (level, what to say)."""
    from agent_tui.plugins.options import as_text, parse_value, save_values
    from agent_tui.plugins.records import RecordError

    given = {}
    try:
        for key, value in content.items():
            if key in schema and value not in (None, ""):
                given[key] = parse_value(schema[key], value if isinstance(value, str) else as_text(value))
        save_values(plugin_id, schema, given)
    except (ValueError, RecordError, OSError) as exc:
        return "warning", f"{plugin_id}: options not saved: {exc}"
    return "info", f"{plugin_id}: options saved (new sessions use them)"
