"""Claude Code's plugins: marketplaces, installed plugins and what an enabled one brings.

``records.py`` reads and writes Claude Code's own files under ``~/.claude/plugins/``
and ``~/.claude/settings.json``; ``manifest.py`` reads a plugin folder and a
marketplace file; ``loaded.py`` gives every loader the enabled plugins' parts;
``output_styles.py`` reads their output styles; ``review.py`` says what a plugin will
run; ``install.py`` adds marketplaces and installs, enables and disables plugins; ``offered.py`` names what a project's settings
suggest (never installed or enabled unasked). ``options.py`` keeps a plugin's option
values (``claude_secrets.py`` reads the sensitive ones Claude Code kept);
``option_use.py`` puts them in its servers and hooks, ``command_options.py`` in its
commands.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from agent_tui.plugins.loaded import (
    EnabledPlugins,
    enabled_plugins,
    plugin_folders,
    plugin_hooks,
    plugin_servers,
    use_plugin_dirs,
)

if TYPE_CHECKING:
    from agent_tui.plugins.manifest import JsonPart, Plugin, PluginError


def __getattr__(name: str) -> Any:
    """The manifest's names, imported at their first use: a run with no plugin never
    reads a manifest (its models are pydantic's)."""
    if name in ("JsonPart", "Plugin", "PluginError"):
        return getattr(import_module("agent_tui.plugins.manifest"), name)
    raise AttributeError(f"module 'agent_tui.plugins' has no attribute {name!r}")


__all__ = ["EnabledPlugins", "JsonPart", "Plugin", "PluginError", "enabled_plugins",
           "plugin_folders", "plugin_hooks", "plugin_servers", "use_plugin_dirs"]
