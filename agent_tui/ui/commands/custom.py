"""Custom commands in the TUI's menu: the files ``agent_tui/commands/`` reads, as menu
items.

Where they are, how each is named (``frontend/test.md`` is ``/frontend:test``, ``/test`` too where
unambiguous, shown with ``(project:frontend)``) and what its front matter says is ``agent_tui.commands.files``'s;
running one is ``agent_tui.commands.use``'s (print mode does the same). Here each
becomes a :class:`~agent_tui.ui.commands.registry.Command` of kind ``custom``, shown
with its scope.
"""

from __future__ import annotations

from pathlib import Path

from agent_tui.commands.expand import expand as expand_file
from agent_tui.commands.files import CommandFile, load_commands
from agent_tui.frontmatter import split_front_matter
from agent_tui.ui.commands.registry import ArgsNeed, Command, CommandKind

__all__ = ["as_command", "expand", "load_custom", "split_front_matter"]


def as_command(spec: CommandFile) -> Command:
    uses = spec.takes_arguments
    return Command(
        name=spec.name, description=spec.description,
        args=spec.argument_hint or ("ARGS" if uses else ""),
        need=ArgsNeed.REQUIRED if uses else ArgsNeed.OPTIONAL, kind=CommandKind.CUSTOM,
        source=spec.source, scope=spec.scope, template=spec.body, spec=spec,
        also=spec.short,
    )


def load_custom(workspace: Path, user_dir: Path | None = None, claude_dir: Path | None = None,
                taken: frozenset[str] = frozenset()) -> tuple[list[Command], list[str]]:
    """Every custom command, and what was wrong with the files."""
    loaded = load_commands(workspace, user_dir, claude_dir, taken=taken)
    return [as_command(c) for c in loaded.commands], loaded.problems


def expand(command: Command, args: str) -> str:
    """The prompt ``command`` stands for, with ``args`` in it (``!`` lines left out)."""
    assert command.spec is not None
    return expand_file(command.spec, args).compose([])
