"""What a slash command is, how a line names one, and how the menu finds them.

A line is a command when it starts with ``/`` followed by a name (letters, digits,
``-``, ``_``, ``:`` and ``.``) and then a space or the end: ``/model opus`` is one,
``/etc/hosts is odd`` is not (a path, sent as a message).
"""

from __future__ import annotations

from collections.abc import Sequence
import difflib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agent_tui.commands.builtin import ArgsNeed
from agent_tui.commands.line import CommandLine, is_command_name, parse_command_line

__all__ = ["ArgsNeed", "Command", "CommandKind", "CommandLine", "Commands", "is_command_name",
           "parse_command_line"]


class CommandKind(StrEnum):
    BUILTIN = "builtin"  # run by the TUI
    CUSTOM = "custom"  # a Markdown file: a prompt sent to the model
    MCP_PROMPT = "mcp_prompt"  # an MCP server's prompt (/mcp__server__prompt): got, then sent


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    args: str = ""  # how the arguments are written, for the menu ("[focus]", "NAME")
    need: ArgsNeed = ArgsNeed.NONE
    kind: CommandKind = CommandKind.BUILTIN
    source: str = ""  # a custom command's file
    scope: str = ""  # a custom command's origin: "project", "user", "claude"; "MCP server"
    template: str = ""  # a custom command's prompt
    spec: Any = None  # a custom command's file, read (agent_tui.commands.files.CommandFile)
    also: str = ""  # another name it can be typed as ("frontend:test")

    @property
    def usage(self) -> str:
        return f"/{self.name}" + (f" {self.args}" if self.args else "")


class Commands:
    """The commands in force: the built-in ones, then custom ones whose name is free."""

    def __init__(self, builtin: list[Command], custom: Sequence[Command] = (), problems: Sequence[str] = ()) -> None:
        self._by_name: dict[str, Command] = {}
        self._aliases: dict[str, Command] = {}  # typed, never listed
        self.problems = list(problems)
        for command in builtin:
            self._by_name[command.name] = command
        for command in custom:
            if command.name in self._by_name:
                taken = self._by_name[command.name]
                where = "a built-in command" if taken.kind is CommandKind.BUILTIN else taken.source
                self.problems.append(f"{command.source}: /{command.name} is already {where} (ignored)")
                continue
            self._by_name[command.name] = command
            if command.also and command.also not in self._by_name:
                self._aliases[command.also] = command

    def all(self) -> list[Command]:
        return list(self._by_name.values())

    def get(self, name: str) -> Command | None:
        return self._by_name.get(name) or self._aliases.get(name)

    def matching(self, query: str) -> list[Command]:
        """For the menu: the command named exactly ``query`` first (so Enter on ``/commit``
        runs ``/commit``, never ``/commit-push-pr``), then names starting with it, then
        names holding it, then descriptions holding it (each in the order listed)."""
        q = query.lower()
        if not q:
            return self.all()
        exact = self.get(query)
        starts, inside, described = [], [], []
        for command in self._by_name.values():
            name = command.name.lower()
            if command is exact:
                continue
            if name.startswith(q):
                starts.append(command)
            elif q in name:
                inside.append(command)
            elif q in command.description.lower():
                described.append(command)
        return ([exact] if exact is not None else []) + starts + inside + described

    def nearest(self, name: str) -> list[str]:
        """Names close to ``name`` (a typo), the closest first."""
        names = list(self._by_name)
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        if not close:
            close = [n for n in names if n.startswith(name[:2])][:3] if len(name) >= 2 else []
        return close
