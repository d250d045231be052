"""What a plugin will run, said before it is enabled: its hooks' commands, its MCP
servers' commands (or addresses) and its commands' ``!`` lines (inline ``!`cmd` `` and
```` ```! ```` blocks). Everything else it brings (prompts, sub-agent types, skills) is
text the model reads, listed by name. What will be refused when the plugin loads or the
command runs (a ``!`` line that names a sensitive option, a hook that names an option
the plugin does not have) is shown as refused; a hook that names an option says it
reads it from its environment."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent_tui.plugins.manifest import Plugin
from agent_tui.plugins.options import PLACEHOLDER
from agent_tui.plugins.shell_vars import placeholder_keys

_INLINE = re.compile(r"!`([^`]+)`")
_BLOCK = re.compile(r"^```!\s*\n(.*?)^```", re.DOTALL | re.MULTILINE)
MAX_FILES = 200


def review(plugin: Plugin) -> list[str]:
    """Lines for a person to read before saying yes."""
    lines = [f"plugin {plugin.name} {plugin.version}".rstrip() + f" ({plugin.root})"]
    if plugin.description:
        lines.append(f"  {plugin.description}")
    runs = [*_hooks(plugin), *_servers(plugin), *_shell_lines(plugin)]
    lines.append("It will run:" if runs else "It runs no command of its own.")
    lines.extend(f"  {line}" for line in runs)
    for part in ("commands", "agents", "skills"):
        names = _names(plugin, part)
        if names:
            lines.append(f"{part}: {', '.join(names)}")
    if plugin.user_config:
        lines.append("It asks for options: " + ", ".join(
            f"{key}{' (sensitive)' if field.sensitive else ''}"
            for key, field in plugin.user_config.items()))
    lines.extend(f"problem: {p}" for p in plugin.problems)
    return lines


def _hooks(plugin: Plugin) -> list[str]:
    found = []
    for part in plugin.hooks:
        events = part.value if isinstance(part.value, dict) else {}
        for event, groups in events.items():
            for group in groups if isinstance(groups, list) else []:
                matcher = group.get("matcher", "") if isinstance(group, dict) else ""
                for hook in _list(group.get("hooks") if isinstance(group, dict) else None):
                    if isinstance(hook, dict) and "command" in hook:
                        where = f" [{matcher}]" if matcher else ""
                        found.append(f"hook {event}{where}: {hook['command']}{_hook_options(plugin, hook)}")
    return found


def _servers(plugin: Plugin) -> list[str]:
    found = []
    for part in plugin.servers:
        for name, raw in (part.value.items() if isinstance(part.value, dict) else []):
            if not isinstance(raw, dict):
                continue
            if "url" in raw and "command" not in raw:
                found.append(f"MCP server {name}: connects to {raw['url']}")
            else:
                words = [str(raw.get("command", "")), *map(str, _list(raw.get("args")))]
                found.append(f"MCP server {name}: {' '.join(words)}")
    return found


def _shell_lines(plugin: Plugin) -> list[str]:
    found = []
    for folder in plugin.commands:
        for path in sorted(folder.rglob("*.md"))[:MAX_FILES]:
            text = _text(path)
            name = ":".join(path.relative_to(folder).with_suffix("").parts)
            lines = [m[1] for m in _INLINE.finditer(text)] + [m[1].strip() for m in _BLOCK.finditer(text)]
            found += [f"/{plugin.name}:{name} runs: {line}{_line_refused(plugin, line)}" for line in lines]
    return found


def _hook_options(plugin: Plugin, hook: dict[str, Any]) -> str:
    """How a command hook gets the options it names (``option_use.py``): through its
    environment, never its text; an option the plugin does not declare, never."""
    keys = placeholder_keys(str(hook["command"])) if hook.get("type", "command") == "command" else []
    if not keys:
        return ""
    unknown = [k for k in keys if k not in plugin.user_config]
    if unknown:
        return f"  [refused, never run: {unknown[0]} is not one of the plugin's options]"
    named = ", ".join(f"{k}{' (sensitive)' if plugin.user_config[k].sensitive else ''}" for k in keys)
    return (f"  [option {named}: read from $CLAUDE_PLUGIN_OPTION_<KEY> in its environment, never "
            "written into the command; it does not run while one is unset]")


def _line_refused(plugin: Plugin, line: str) -> str:
    """What ``command_options.py`` will say of a ``!`` line naming a sensitive option."""
    named = [m[1] for m in PLACEHOLDER.finditer(line)
             if (f := plugin.user_config.get(m[1])) is not None and f.sensitive]
    return f"  [refused, never run: names the sensitive option {named[0]}]" if named else ""


def _names(plugin: Plugin, part: str) -> list[str]:
    names: list[str] = []
    for folder in getattr(plugin, part):
        pattern = "*/SKILL.md" if part == "skills" else "*.md"
        for path in sorted(folder.glob(pattern))[:MAX_FILES]:
            stem = path.parent.name if part == "skills" else path.stem
            names.append(f"{'/' if part == 'commands' else ''}{plugin.name}:{stem}")
    return names


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:256 * 1024]
    except OSError:
        return ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
