"""The command menu's items: every command in force, filtered by what follows ``/``."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from agent_tui.ui.commands.registry import ArgsNeed, Command, CommandKind, Commands
from agent_tui.ui.input.completion import Accepted, ShowFn
from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.widgets.suggestions import Suggestion

NAME_WIDTH = 22


def command_prompt(command: Command) -> Text:
    line = Text(no_wrap=True, overflow="ellipsis")
    usage = clean(command.usage)
    line.append(f"/{clean(command.name)}", style="bold")
    line.append(usage[len(command.name) + 1 :], style="dim")
    line.append(" " * max(2, NAME_WIDTH - len(usage)))
    line.append(clean(command.description))
    if command.kind in (CommandKind.CUSTOM, CommandKind.MCP_PROMPT):
        line.append(f"  ({command.scope})", style="dim")
    return line


class CommandSource:
    title = "commands"

    def __init__(self, commands: Callable[[], Commands]) -> None:
        self._commands = commands
        self._typed = ""  # the name typed after "/", as last searched

    def search(self, query: str, show: ShowFn) -> None:
        self._typed = query
        found = self._commands().matching(query)
        items = [Suggestion(c.name, command_prompt(c), c) for c in found]
        show(items, f"no command matches /{clean(query)}", query=query)

    def accept(self, item: Suggestion, *, enter: bool) -> Accepted:
        command: Command = item.data
        found = self._commands().get(self._typed)
        typed = found is not None and found.name == command.name
        if enter and typed and command.kind is CommandKind.CUSTOM:
            # A complete command line runs as typed, as in Claude Code (its arguments,
            # if any, are empty); the name typed may be a short one (``/test``).
            return Accepted(f"/{self._typed}", submit=True)
        if enter and command.need is not ArgsNeed.REQUIRED:
            return Accepted(f"/{command.name}", submit=True)
        return Accepted(f"/{command.name} ")

    def cancel(self) -> None:
        pass
