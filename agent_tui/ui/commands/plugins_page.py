"""The page ``/plugin`` shows: Claude Code's marketplaces and installed plugins (each
enabled or not, with what it brings), what a plugin that did not load has wrong, and
the commands that change them (``agent-tui plugin ...``: enabling one shows what it
will run and asks first, which a terminal prompt does better than a page)."""

from __future__ import annotations

from rich.text import Text

from agent_tui.ui.render.safe_text import clean, first_line

HOW = ("agent-tui plugin marketplace add PATH|GIT-URL, agent-tui plugin install NAME@MARKETPLACE, "
       "agent-tui plugin enable|disable NAME (new sessions use what changed)")


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
