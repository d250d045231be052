"""Hooks in Claude Code's format: commands the user configured to run at points of
the agent's work, which can block, allow, ask, or give the model context.

The core asks through its port (``core/services/hooks_port.py``); this package implements it:

- :mod:`.events`: what each event is, one row each (its matcher, its stdin, how its
  answers act, where it fires): the parser, the runner and the answers ask it;
- :mod:`.config`: the settings files' ``hooks`` key, parsed entry by entry (a
  malformed entry is reported with file, line and column and skipped alone);
- :mod:`.matchers`: which tools (or triggers) a hook applies to;
- :mod:`.runner`: one hook command under the process runner, in its own process
  group, under the cancel scope of what it gates, killed at its timeout;
- :mod:`.answers`: what a hook's exit code and output mean, and what several decide;
- :mod:`.commands`: :class:`CommandHooks`, the port itself;
- :mod:`.reload`: the hooks read again, between turns, when their files change
  (``ConfigChange`` hooks judge each changed file first);
- :mod:`.elicitation`: the ``Elicitation`` hooks around an MCP server's question.
"""

from agent_tui.hooks.commands import CommandHooks
from agent_tui.hooks.config import HookCommand, HooksConfig, load_hooks

__all__ = ["CommandHooks", "HookCommand", "HooksConfig", "load_hooks"]
