"""Slash commands over ACP: the list an editor offers, and what ``/name args`` does.

After ``session/new`` and ``session/load`` the agent sends an
``available_commands_update`` (once the response is out) listing the built-in
commands below and the custom commands of the session's workspace (the folders of
``commands/files.py``: ``.agent-tui/commands/``, ``.claude/commands/``, the user's),
each with its description and its ``argument-hint`` as the input hint. The built-in
ones, and their words, are those of the one table (``commands/builtin.py``) that need no
screen.

A prompt whose text is a command line (``commands/line.py``) runs the command, and
its ``session/prompt`` is answered when what it started is over:

- a **custom command** runs as in print mode (``commands/use.py``): its ``!`` lines
  first under the permission rules and its ``allowed-tools``, ``@file`` mentions,
  ``$ARGUMENTS`` / ``$1``..``$9``, its ``model``; its turn is answered as any prompt's.
  A refused or interrupted ``!`` line is told as agent text and ends the prompt
  (``end_turn``; ``cancelled`` after ``session/cancel``); nothing reaches the model.
- a **built-in** one is an op, and what the core answers is told as agent text:
  ``/compact [focus]`` (``Compact``: the tokens before and after), ``/clear``
  (``ClearConversation``), ``/context`` (``ShowContext``: what fills the window) and
  ``/model [name]`` (no name: the current model and those offered; a name: the
  switch, as ``session/set_config_option``, told by a ``config_option_update`` too).
  The TUI's other commands (``/resume``, ``/rewind``, ``/export``...) need its screens
  and are not listed.
- an **unknown** name is answered with agent text naming the commands there are,
  ``stopReason`` ``end_turn``; nothing is sent to the model.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any, assert_never

from acp import RequestError
from acp.helpers import update_available_commands
from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate
from acp.schema import UnstructuredCommandInput

from agent_tui.acp.models import ModelChoice
from agent_tui.commands.builtin import ACP_BUILTINS
from agent_tui.commands.files import CommandFile, LoadedCommands, load_commands
from agent_tui.commands.use import use_command
from agent_tui.protocol import (
    ClearConversation,
    Compact,
    Compaction,
    CompactionState,
    ContextReport,
    ConversationCleared,
    NoticeLevel,
    ShowContext,
    UserMessage,
)

Say = Callable[[NoticeLevel, str], None]


class Builtin(StrEnum):
    COMPACT = "compact"
    CLEAR = "clear"
    CONTEXT = "context"
    MODEL = "model"


BUILTIN_NAMES = frozenset(b.value for b in Builtin)
if BUILTIN_NAMES != {b.name for b in ACP_BUILTINS}:  # the table says which run here
    raise RuntimeError(f"ACP's built-in commands differ from the table's: {sorted(BUILTIN_NAMES)}")


def builtin(name: str) -> Builtin | None:
    try:
        return Builtin(name)
    except ValueError:
        return None


def custom_commands(workspace: Path) -> LoadedCommands:
    """The workspace's custom commands, named as the TUI names them (a subfolder's
    command never takes a built-in's name)."""
    return load_commands(workspace, taken=BUILTIN_NAMES)


def _entry(name: str, description: str, hint: str) -> AvailableCommand:
    given = AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None
    return AvailableCommand(name=name, description=description, input=given)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _custom_entry(command: CommandFile) -> AvailableCommand:
    hint = command.argument_hint or ("arguments" if command.takes_arguments else "")
    return _entry(command.name, f"{command.description} ({command.scope})", hint)


def available(workspace: Path) -> list[AvailableCommand]:
    """Built-in commands first, then the custom ones (a custom file named like a
    built-in is not offered: the built-in runs)."""
    listed = [_entry(b.name, _sentence(b.description), b.hint) for b in ACP_BUILTINS]
    listed += [_custom_entry(c) for c in custom_commands(workspace).commands
               if c.name not in BUILTIN_NAMES]
    return listed


def commands_update(workspace: Path, extra: list[AvailableCommand] | None = None) -> AvailableCommandsUpdate:
    """The list, with ``extra`` commands (the MCP servers' prompts) last."""
    return update_available_commands(available(workspace) + (extra or []))


def unknown_text(name: str, workspace: Path) -> str:
    names = ", ".join(f"/{c.name}" for c in available(workspace))
    return (f"> agent-tui: unknown command /{name}: nothing was sent to the model. "
            f"Commands here: {names}\n")


def event_text(event: Compaction | ConversationCleared | ContextReport) -> str:
    """What a built-in command's answer says, as agent text ("" for none)."""
    match event:
        case Compaction():
            match event.state:
                case CompactionState.STARTED:
                    return ""
                case CompactionState.COMPLETED:
                    return (f"Compacted the conversation: {event.tokens_before:,} → "
                            f"{event.tokens_after:,} tokens.\n")
                case CompactionState.CANCELLED:
                    return "Compaction cancelled: the conversation is unchanged.\n"
                case CompactionState.FAILED:
                    return f"Compaction failed: {event.detail or 'see the agent log'}.\n"
                case _:
                    assert_never(event.state)
        case ConversationCleared():
            return "Started a new conversation.\n"
        case ContextReport():
            used = f"{event.used:,} tokens" + (f" of {event.window:,}" if event.window else "")
            how = "as the last request used" if event.measured else "estimated"
            lines = [f"Context of {event.model}: {used} ({how})", ""]
            lines += [f"- {item.label}: {item.tokens:,}" for item in event.items]
            lines += [f"- {note}" for note in event.notes]
            return "\n".join(lines) + "\n"
        case _:
            assert_never(event)


def models_text(current: str, listed: list[tuple[str, str]]) -> str:
    lines = [f"Model: {current}"]
    others = [f"- {i}" + (f" ({n})" if n and n != i else "") for i, n in listed if i != current]
    if others:
        lines += ["", "Also offered (/model ID switches):", *others]
    return "\n".join(lines) + "\n"


async def start_command(session: Any, models: ModelChoice, name: str, args: str,
                        say: Say) -> None:
    """Start ``/name args`` in ``session`` (a core ``Session``); what it says right
    away goes to ``say`` (info: the command's answer, warning: a problem)."""
    match builtin(name):
        case Builtin.COMPACT:
            session.submit(Compact(instructions=args))
        case Builtin.CLEAR:
            session.submit(ClearConversation())
        case Builtin.CONTEXT:
            session.submit(ShowContext())
        case Builtin.MODEL:
            await _model(models, args, say)
        case None:
            found = custom_commands(Path(session.workspace)).find(name)
            if found is None:
                say(NoticeLevel.INFO, unknown_text(name, Path(session.workspace)))
                return
            use_command(session, found, args, lambda text: session.submit(UserMessage(text=text)),
                        lambda text: say(NoticeLevel.WARNING, text))
        case other:
            assert_never(other)


async def _model(models: ModelChoice, args: str, say: Say) -> None:
    if args:
        try:
            await models.choose(args.split()[0])
        except RequestError as exc:
            detail = exc.data.get("details") if isinstance(exc.data, dict) else None
            say(NoticeLevel.INFO, f"> agent-tui: the model is unchanged: {detail or exc}\n")
            return
    else:
        await models.options()
    say(NoticeLevel.INFO, models_text(models.current, models.listed))
