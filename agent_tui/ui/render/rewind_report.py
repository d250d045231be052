"""What a finished rewind did, in words: the divider the transcript shows after
``rewound`` (what was restored, which files, what was skipped, errors, what was not
undone, how to undo) and the one-line notice for the status line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from agent_tui.protocol.states import NoticeLevel, RestoreWhat
from agent_tui.ui.render.safe_text import clean, first_line
from agent_tui.ui.render.states import role_style

if TYPE_CHECKING:
    from agent_tui.protocol import FileChangeInfo, Rewound

WHAT_WAS_RESTORED = {
    RestoreWhat.BOTH: "code and conversation",
    RestoreWhat.CONVERSATION: "conversation only (files unchanged)",
    RestoreWhat.CODE: "code only (conversation unchanged)",
}

FILES_LISTED = 6  # files named in the divider; the rest are counted


@dataclass(frozen=True)
class RewindReport:
    title: str
    body: Text
    notice_level: NoticeLevel
    notice: str


def restores_conversation(what: RestoreWhat) -> bool:
    return what is not RestoreWhat.CODE


def restores_code(what: RestoreWhat) -> bool:
    return what is not RestoreWhat.CONVERSATION


def _paths(changes: list[FileChangeInfo]) -> str:
    named = ", ".join(clean(c.path) for c in changes[:FILES_LISTED])
    if len(changes) > FILES_LISTED:
        named += f" and {len(changes) - FILES_LISTED} more"
    return named


def rewind_report(event: Rewound, variables: dict[str, str], *, marked: bool) -> RewindReport:
    """``marked``: the transcript dimmed the messages the rewind took out."""
    conversation = restores_conversation(event.restore)
    code = restores_code(event.restore)
    muted = role_style(variables, "text-muted")
    what = WHAT_WAS_RESTORED[event.restore]
    body = Text()
    body.append("restored: ", style="bold")
    body.append(what)
    if conversation:
        body.append("\n")
        if marked:
            body.append("the dimmed messages above are no longer in the conversation", style=muted)
        else:
            body.append("later messages are no longer in the conversation", style=muted)
        if event.text:
            body.append("; the message is back in the input", style=muted)
    if code:
        body.append(f"\n{len(event.restored)} file(s) restored", style="bold")
        if event.restored:
            body.append(": " + _paths(event.restored))
    if event.skipped_conflicts:
        body.append(f"\nskipped {len(event.skipped_conflicts)} file(s) changed since the checkpoint "
                    "(kept as they are): ", style=role_style(variables, "warning", bold=True))
        body.append(", ".join(clean(c.path) for c in event.skipped_conflicts[:FILES_LISTED]))
    for error in event.errors:
        body.append("\nerror: " + first_line(error, 200), style=role_style(variables, "error"))
    for item in event.not_undoable:
        body.append("\nnot undone: " + first_line(item, 200), style=role_style(variables, "warning"))
    if event.undo_checkpoint_id:
        body.append("\nto undo this rewind: Esc Esc, then the undo point at the top", style=muted)
    label = first_line(event.text, 80)
    title = f"↶ rewound to “{label}”" if label else "↶ rewound"
    problems = len(event.skipped_conflicts) + len(event.errors)
    notice = f"rewound ({what})" + (f": {problems} file(s) not restored" if problems else "")
    level = NoticeLevel.WARNING if problems else NoticeLevel.INFO
    return RewindReport(title, body, level, notice)
