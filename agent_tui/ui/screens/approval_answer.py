"""What the app does with a permission answer beyond the ``Decide`` op the prompt sent:
a lasting rule is saved to the project's ``.claude/settings.local.json`` (the core
applies it already, so a file that cannot take it costs only the later sessions), and
"allow all edits" switches the session to accept-edits. Either way a notice says what
became of it. "No" without a note stops the turn, as in Claude Code: the model waits for
the user to say what to do instead (with a note, the model reads it and goes on). A yes
with a note sends the note as a steer: the model reads it after the call's result."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent_tui.protocol import Decide, Op, PermissionMode, SetPermissionMode, UserMessage
from agent_tui.settings.local_rules import save_allow_rules
from agent_tui.ui.screens.approval_choices import Act, Choice


def answered(choice: Choice | None, decided: Decide | None, workspace: Path,
             submit: Callable[[Op], None], tell: Callable[[str, str], None]) -> None:
    """Act on ``choice`` (sent as ``decided``); ``tell(level, text)`` says what became of it."""
    if choice is None or decided is None:
        return
    note = decided.note
    if choice.act is Act.DENY:
        if decided.stop:  # the core stops the turn once the call is denied
            tell("info", "denied, and the turn stopped: say what the model should do instead")
        return
    if note:  # a yes with a note: a steer, read after the call's result
        submit(UserMessage(text=note))
    if choice.act is Act.ACCEPT_EDITS:
        submit(SetPermissionMode(mode=PermissionMode.ACCEPT_EDITS))
        tell("info", "accept-edits: file edits are allowed for the rest of the session "
             "(shift+tab changes the mode)")
    elif choice.act is Act.ALLOW_RULES:
        saved = save_allow_rules(workspace, choice.rules)
        tell("info" if saved.ok else "warning", saved.notice())
