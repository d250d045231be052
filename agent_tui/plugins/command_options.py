"""A plugin command's ``${user_config.KEY}`` and its folders, put in as
Claude Code puts them in a plugin's command, and stricter where a shell is concerned.

In the text the model reads: a plain value's text, the plugin's folders
(``${CLAUDE_PLUGIN_ROOT}``, ``${CLAUDE_PLUGIN_DATA}``); a sensitive
value never (a note stands in its place); a key with no value stays as written (all
as in Claude Code). A value put in there is never read again for ``!`` lines: the
lines are found before any value goes in, so a value cannot start a command.

In a ``!`` line's shell text no value is ever written (Claude Code writes the plain
ones there, where the shell would parse a quote or a ``$(...)`` in them): the
placeholder becomes a reference to ``$CLAUDE_PLUGIN_OPTION_KEY`` (``shell_vars.py``,
inside single quotes too) and the value rides in the line's environment, so the shell
expands it as a variable and never parses it;
the folders are expanded the same way. A sensitive option, or one with
no value, in a ``!`` line refuses the command (nothing runs, nothing is sent):
Claude Code hands a sensitive value to no command's line either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent_tui.plugins.loaded import enabled_plugins
from agent_tui.plugins.option_use import folder_env, how_to_set, text_values
from agent_tui.plugins.options import PLACEHOLDER, as_text, option_var, stored_values
from agent_tui.plugins.shell_vars import as_variables, placeholder_keys


@dataclass(frozen=True)
class ShellLine:
    command: str  # the line, with variables where the values were named
    env: dict[str, str] = field(default_factory=dict)
    refused: str = ""  # why it may not run


@dataclass(frozen=True)
class CommandOptions:
    """One plugin's values, as its commands use them."""

    plugin_id: str
    text: dict[str, str]  # KEY -> what it becomes in the model's text
    plain: dict[str, str]  # KEY -> CLAUDE_PLUGIN_OPTION_KEY's value (set, not sensitive)
    sensitive: frozenset[str]

    # CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA (none when the plugin is not loaded)
    folders: dict[str, str] = field(default_factory=dict)

    def in_text(self, text: str) -> str:
        if "${" not in text:
            return text
        for name, folder in self.folders.items():
            text = text.replace("${" + name + "}", folder)
        return PLACEHOLDER.sub(lambda m: self.text.get(m[1], m[0]), text)

    def in_shell(self, command: str) -> ShellLine:
        env = {name: folder for name, folder in self.folders.items() if "${" + name + "}" in command}
        for key in placeholder_keys(command):
            if key in self.sensitive:
                return ShellLine(command, refused=(
                    f"the sensitive option {key} of plugin {self.plugin_id} never goes into "
                    "a command's shell line"))
            if key not in self.plain:
                return ShellLine(command, refused=(
                    f"plugin {self.plugin_id}'s option {key} has no value "
                    f"({how_to_set(self.plugin_id)})"))
            env[option_var(key)] = self.plain[key]
        return ShellLine(as_variables(command), env)


def command_options(plugin_name: str, claude_dir: Path | None = None) -> CommandOptions:
    """The enabled plugin ``plugin_name``'s (none at all when it no longer loads: then
    a ``!`` line that names an option is refused)."""
    plugin = next((p for p in enabled_plugins(claude_dir).plugins if p.name == plugin_name), None)
    if plugin is None:
        return CommandOptions(plugin_name, {}, {}, frozenset())
    values = stored_values(plugin.plugin_id, plugin.user_config) if plugin.user_config else {}
    sensitive = frozenset(k for k, f in plugin.user_config.items() if f.sensitive)
    plain = {k: as_text(v) for k, v in values.items() if k not in sensitive and v not in (None, "", [])}
    return CommandOptions(plugin_id=plugin.plugin_id, text=text_values(plugin),
                          plain=plain, sensitive=sensitive, folders=folder_env(plugin))
