"""A plugin's option values put where Claude Code puts them: ``${user_config.KEY}`` in
its MCP servers' configurations and in its hooks, and ``CLAUDE_PLUGIN_OPTION_<KEY>``
in its hooks' environment; with them its folders, as Claude Code gives them:
``CLAUDE_PLUGIN_ROOT`` and ``CLAUDE_PLUGIN_DATA`` (``~/.claude/plugins/data/ID``, made
when first used) in its hooks' and stdio servers' environment, ``${CLAUDE_PLUGIN_DATA}``
in their configurations and its skills' texts.

Never into the text of a hook's shell command (Claude Code 2.1.x writes the value, a
sensitive one too, into the command's text, where the shell parses it: a quote in it,
and it runs): there the placeholder becomes a reference to
``$CLAUDE_PLUGIN_OPTION_<KEY>`` (``shell_vars.py``), which the hook's environment
holds, so the value is expanded and never parsed. A prompt hook's text goes to a
model, and a hook's status message is shown: a sensitive value is never put there. A
server or hook that names an option with no value is not loaded (its problem names
the option and says how to set it); the rest of the plugin is.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent_tui.plugins.manifest import DATA_VAR, JsonPart, Plugin, with_root
from agent_tui.plugins.options import (
    PLACEHOLDER,
    Value,
    as_text,
    option_env,
    option_var,
    stored_values,
    unset,
)
from agent_tui.plugins.shell_vars import as_variables, placeholder_keys
from agent_tui.plugins.claude_secrets import claude_secrets
from agent_tui.plugins.records import RecordError, Records


_NAMED = re.compile(r"\$\{([^}\s]+)\}")


def how_to_set(plugin_id: str) -> str:
    return f"set them with /plugin config {plugin_id} in the TUI or: agent-tui plugin config {plugin_id}"


class OptionMissing(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class OptionClash(Exception):
    """Two option keys that name one variable (``a_b`` and ``A_B``)."""


def substitute(value: Any, values: dict[str, Value], hidden: frozenset[str] = frozenset()) -> Any:
    """``value`` with ``${user_config.KEY}`` replaced in every string; a key without a
    value raises OptionMissing; a ``hidden`` (sensitive) key becomes a note."""
    if isinstance(value, str):
        def one(match: re.Match[str]) -> str:
            key = match[1]
            if key in hidden:
                return f"[sensitive option '{key}' not available here]"
            if values.get(key) in (None, ""):
                raise OptionMissing(key)
            return as_text(values[key])
        return PLACEHOLDER.sub(one, value)
    if isinstance(value, list):
        return [substitute(v, values, hidden) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, values, hidden) for k, v in value.items()}
    return value


def text_values(plugin: Plugin) -> dict[str, str]:
    """What ``${user_config.KEY}`` becomes in a text the model reads (a skill, a
    sub-agent type's prompt), as in Claude Code: a plain value's text; a sensitive one
    never (a note says so); a key with no value is not here (left as written)."""
    if not plugin.user_config:
        return {}
    values = stored_values(plugin.plugin_id, plugin.user_config, None)
    hidden = {k: f"[sensitive option '{k}' not available here]"
              for k, f in plugin.user_config.items() if f.sensitive}
    return {**{k: as_text(v) for k, v in values.items() if v not in (None, "")}, **hidden}


def skill_values(plugin: Plugin) -> dict[str, str]:
    """What ``${NAME}`` becomes in the plugin's skills' texts, as in Claude Code:
    ``CLAUDE_PLUGIN_ROOT``, the plugin's folder; ``CLAUDE_PLUGIN_DATA``, its data
    folder; ``user_config.KEY``, :func:`text_values`."""
    return {**folder_env(plugin),
            **{f"user_config.{k}": v for k, v in text_values(plugin).items()}}


def data_folder(plugin: Plugin) -> Path | None:
    """The plugin's ``${CLAUDE_PLUGIN_DATA}``, made (0700) when first asked for, where
    Claude Code keeps it (``~/.claude/plugins/data/NAME-MARKETPLACE``); None when it
    cannot be made."""
    if plugin.data is None:
        return None
    try:
        plugin.data.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    return plugin.data


def folder_env(plugin: Plugin) -> dict[str, str]:
    """``CLAUDE_PLUGIN_ROOT`` and ``CLAUDE_PLUGIN_DATA``, as Claude Code gives them to
    a plugin's hooks and stdio servers."""
    data = data_folder(plugin)
    return {"CLAUDE_PLUGIN_ROOT": str(plugin.root), **({"CLAUDE_PLUGIN_DATA": str(data)} if data else {})}


def in_text(plugin: Plugin, text: str, workspace: Path) -> str:
    """A sub-agent type's prompt ``text`` with :func:`skill_values` and
    ``${CLAUDE_PROJECT_DIR}`` put in (as Claude Code puts them), in one pass."""
    if "${" not in text:
        return text
    found = {**skill_values(plugin), "CLAUDE_PROJECT_DIR": str(workspace)}
    return _NAMED.sub(lambda m: found.get(m[1], m[0]), text)


def use_options(plugin: Plugin, records: Records | None = None) -> None:
    """Puts the plugin's option values in its servers and hooks (in place); what cannot
    be used becomes a problem of the plugin."""
    values = stored_values(plugin.plugin_id, plugin.user_config, records) if plugin.user_config else {}
    missing = unset(plugin.user_config, values)
    if missing:
        plugin.problems.append(f"plugin {plugin.plugin_id}: options not set: {', '.join(missing)} "
                               f"({how_to_set(plugin.plugin_id)}){_unread(plugin, missing, records)}")
    hidden = frozenset(k for k, f in plugin.user_config.items() if f.sensitive)
    plugin.data = (records or Records()).folder / "data" / re.sub(r"[^A-Za-z0-9_-]", "-", plugin.plugin_id)
    folders = folder_env(plugin) if plugin.servers or plugin.hooks else {}
    env = {**folders, **option_env(values)}
    plugin.servers = [JsonPart(file=part.file, value=_servers(plugin, _with_data(part, folders), values))
                      for part in plugin.servers]
    plugin.hooks = [JsonPart(file=part.file, env=env,
                             value=_hooks(plugin, _with_data(part, folders), values, hidden))
                    for part in plugin.hooks]


def _with_data(part: JsonPart, folders: dict[str, str]) -> JsonPart:
    """``part`` with ``${CLAUDE_PLUGIN_DATA}`` put in (a folder of the plugin's name:
    letters, digits, ``-`` and ``_`` only)."""
    data = folders.get("CLAUDE_PLUGIN_DATA")
    return part.model_copy(update={"value": with_root(part.value, Path(data), DATA_VAR)}) if data else part


def _unread(plugin: Plugin, missing: list[str], records: Records | None) -> str:
    """Why Claude Code's sensitive values were not read, when one is missing."""
    if not any(plugin.user_config[k].sensitive for k in missing):
        return ""
    try:
        claude_secrets((records or Records()).claude_dir, plugin.plugin_id)
    except RecordError as exc:
        return f"; Claude Code's stored values: {exc}"
    return ""


def _not_set(plugin: Plugin, what: str, key: str) -> str:
    if key not in plugin.user_config:
        return (f"plugin {plugin.plugin_id}: {what} names ${{user_config.{key}}}, which is not "
                "one of its options (its userConfig; not loaded)")
    return (f"plugin {plugin.plugin_id}: {what} names ${{user_config.{key}}}, which has no value "
            f"(not loaded; {how_to_set(plugin.plugin_id)})")


def _servers(plugin: Plugin, part: JsonPart, values: dict[str, Value]) -> Any:
    if not isinstance(part.value, dict):
        return part.value
    kept = {}
    for name, server in part.value.items():
        if isinstance(server, dict) and "command" in server and isinstance(server.get("env", {}), dict):
            # a stdio server gets the plugin's folders, as in Claude Code (its own env wins)
            server = {**server, "env": {**folder_env(plugin), **server.get("env", {})}}
        try:
            kept[name] = substitute(server, values)
        except OptionMissing as missing:
            plugin.problems.append(_not_set(plugin, f"MCP server {name}", missing.key))
    return kept


def _hooks(plugin: Plugin, part: JsonPart, values: dict[str, Value], hidden: frozenset[str]) -> Any:
    if not isinstance(part.value, dict):
        return part.value
    events: dict[str, Any] = {}
    for event, groups in part.value.items():
        if not isinstance(groups, list):
            events[event] = groups  # the hooks' own reader says what is wrong
            continue
        events[event] = [_group(plugin, event, g, values, hidden) for g in groups]
    return events


def _group(plugin: Plugin, event: str, group: Any, values: dict[str, Value],
           hidden: frozenset[str]) -> Any:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return group
    kept = []
    for hook in group["hooks"]:
        if not isinstance(hook, dict):
            kept.append(hook)
            continue
        kind = hook.get("type", "command")
        command = hook.get("command")
        try:
            if kind == "command" and isinstance(command, str):
                hook = {**hook, "command": _shell_command(plugin, command, values)}
            # a secret goes into a header or a tool's input; never into a prompt or a
            # command hook's other fields (a status message is shown)
            kept.append(substitute(hook, values, frozenset() if kind in ("http", "mcp_tool") else hidden))
        except OptionMissing as missing:
            plugin.problems.append(_not_set(plugin, f"a {event} hook", missing.key))
        except OptionClash as clash:
            plugin.problems.append(f"plugin {plugin.plugin_id}: a {event} hook: {clash} (not loaded)")
    return {**group, "hooks": kept}


def _shell_command(plugin: Plugin, command: str, values: dict[str, Value]) -> str:
    """A command hook's text with each ``${user_config.KEY}`` a reference to its
    ``CLAUDE_PLUGIN_OPTION_KEY`` (set in the hook's environment: ``use_options``), a
    sensitive one too; a key with no value raises OptionMissing."""
    for key in placeholder_keys(command):
        if values.get(key) in (None, "", []):
            raise OptionMissing(key)
        same = [k for k in plugin.user_config if k != key and option_var(k) == option_var(key)]
        if same:
            raise OptionClash(f"options {key} and {same[0]} are both {option_var(key)}")
    return as_variables(command)
