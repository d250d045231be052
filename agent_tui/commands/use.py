"""Using a custom command from a command line: the one way every front end does it.

``/name args`` is looked up (a name that is no custom command is the caller's to
say: the TUI has built-in commands, print mode has none), prepared
(``prepare.py``), and handed to the session: a command with ``!`` lines, its own
``allowed-tools`` or ``model`` as a run of its own (``Session.run_command``), any
other as the prompt it stands for, sent the way the caller's op says (a message, a
follow-up, send-now). A command is a run of its own too when ``UserPromptExpansion``
hooks are configured: the session runs them on its prompt. Either way the command line
itself never reaches the model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_tui.commands.files import CommandFile, load_commands
from agent_tui.commands.line import CommandLine
from agent_tui.commands.prepare import prepare


def use_command(session: Any, command: CommandFile, args: str,
                send: Callable[[str], None], tell: Callable[[str], None]) -> None:
    """Prepare ``command`` with ``args`` and hand it to ``session``; ``send`` sends a
    plain prompt, ``tell`` says a problem (a warning)."""
    run, said = prepare(command, args, workspace=Path(session.workspace),
                        policy=getattr(session, "policy", None), tools=getattr(session, "tools", None))
    for text in said:
        tell(text)
    hooked = getattr(session, "hooked", None)
    if run.own_turn or (hooked is not None and hooked("UserPromptExpansion")):
        session.run_command(run)  # the session runs the UserPromptExpansion hooks
    else:
        send(run.compose([]))


def use_line(session: Any, line: CommandLine, send: Callable[[str], None],
             tell: Callable[[str], None]) -> bool:
    """``line`` as a custom command of ``session``'s workspace; False when it names none."""
    command = load_commands(Path(session.workspace)).find(line.name)
    if command is None:
        return False
    use_command(session, command, line.args, send, tell)
    return True


def custom_names(workspace: Path) -> list[str]:
    return [c.name for c in load_commands(workspace).commands]
