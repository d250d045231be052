"""Who may run what: permission modes, rules and the policy that applies them.

A layer above the core (it implements ``core.permission.PermissionPolicy`` for the
core's ``Tool`` interface) and below the tools, the settings and the front ends, which
may all ask it. Its rooms: ``rules`` (the rule grammar), ``shell_parse`` (reading a
command line with bash's grammar into ``shell_model``'s simple commands),
``command_judge`` (rules on parsed commands), ``command_guard`` (file rules on
commands, doubts, read-only commands), ``globs`` (path patterns), ``policy`` (the
mode, the rules and the session's memory, deciding each call).
"""

from agent_tui.permissions.policy import (
    Permissions,
    SubjectKind,
)
from agent_tui.permissions.rules import InvalidRule, PermissionRules, Rule
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # bash's grammar is read when a command is first judged, not at import
    from agent_tui.permissions.read_only import is_read_only
    from agent_tui.permissions.shell_model import ParsedCommand, SimpleCommand
    from agent_tui.permissions.shell_parse import parse_command

#: The names of the command line's modules, imported on first read.
_LAZY = {"is_read_only": "read_only", "ParsedCommand": "shell_model", "SimpleCommand": "shell_model",
         "parse_command": "shell_parse"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "InvalidRule",
    "ParsedCommand",
    "PermissionRules",
    "Permissions",
    "Rule",
    "SimpleCommand",
    "SubjectKind",
    "is_read_only",
    "parse_command",
]
