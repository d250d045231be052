"""A resumed session's conversation, shown again in the transcript.

``--continue`` / ``--resume`` open a saved journal; the transcript then shows what the
conversation holds, as the model sees it (after a rewind of the conversation, what it
cut is not shown): the user's messages and steers, the model's text, each tool call
with the state it ended in, and how a turn ended when it did not complete. A divider
says where the resumed session picks up. Nothing here reaches the model or the
journal: it only reads the conversation's items (``core/history/items.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, assert_never

from rich.text import Text

from agent_tui.core.history.items import (
    BackgroundResult,
    CallStarted,
    Compaction,
    HookContext,
    MemoryNote,
    ModeChanged,
    Item,
    Reply,
    Rewind,
    Steer,
    Text as ReplyText,
    Thinking,
    ToolCall,
    ToolUse,
    TurnEnded,
    UnfinishedCall,
    UserCommand,
    UserTurn,
    conversation,
)
from agent_tui.protocol import ToolState
from agent_tui.protocol.states import TurnStatus
from agent_tui.protocol.tool_names import shell_tool
from agent_tui.ui.render.diffs import diff_for_call
from agent_tui.ui.render.safe_text import first_line
from agent_tui.ui.render.states import exit_words
from agent_tui.ui.widgets.transcript import Transcript

# Calls whose line says how they ended (as it did while the session ran).
_ENDED_BADLY = (ToolState.CANCELLED_WHILE_RUNNING, ToolState.FAILED, ToolState.UNKNOWN)

# Input fields that say what a call does, most telling first.
_SUMMARY_FIELDS = ("command", "path", "file_path", "pattern", "description", "url", "prompt")


def input_summary(name: str, args: dict[str, Any]) -> str:
    """A one-line summary of a call from its input (the tool itself is not at hand)."""
    if isinstance(args.get("command"), str):
        return "$ " + first_line(args["command"], 200)
    for field in _SUMMARY_FIELDS[1:]:
        value = args.get(field)
        if isinstance(value, str) and value.strip():
            return first_line(value, 200)
    return ""


def show_past(
    transcript: Transcript,
    records: Iterable[Any],
    turn_end_line: Callable[[str, str], Text],
    format_time: Callable[[float], str],
    remember: Callable[[str], None] = lambda text: None,
) -> int:
    """Put the conversation ``records`` hold into ``transcript`` (and each user
    message into ``remember``: the input's history); how many user messages it
    showed (0: nothing was shown, not even the divider)."""
    replay = _Replay(transcript, remember, turn_end_line)
    past = conversation(records)
    for item in past.items:
        replay.show(item)
    last_ts = past.last_ts
    shown = replay.shown
    if shown:
        when = format_time(last_ts) if last_ts else "earlier"
        line = Text(f"── resumed: the conversation above is from {when}; "
                    "the model sees it as it was ──", style="dim")
        transcript.add_turn_end(line)
    return shown


class _Replay:
    """One case per kind of item: what the transcript showed when it happened."""

    def __init__(self, transcript: Transcript, remember: Callable[[str], None],
                 turn_end_line: Callable[[str, str], Text]) -> None:
        self.transcript = transcript
        self.remember = remember
        self.turn_end_line = turn_end_line
        self.shown = 0  # user messages shown

    def show(self, item: Item) -> None:
        match item:
            case UserTurn():
                self.transcript.add_user(item.text, turn_id=item.turn_id,
                                         images=[image.label for image in item.images])
                self.remember(item.text)
                self.shown += 1
            case Steer():
                self.transcript.add_user(item.text, label="steer ›",
                                         images=[image.label for image in item.images])
            case Reply():
                self._reply(item)
            case ToolCall():
                self._tool_call(item)
            case TurnEnded():
                self.transcript.end_text()
                if item.status is not TurnStatus.COMPLETED:
                    self.transcript.add_turn_end(self.turn_end_line(item.status, item.detail))
            case BackgroundResult():
                self.transcript.add_turn_end(Text(
                    f"⚙ background job ended ({item.state}): "
                    f"{first_line(item.description, 120)}", style="dim"))
            case UserCommand():
                self._user_command(item)
            case Rewind():
                what = {"both": "code and conversation", "conversation": "conversation",
                        "code": "code"}.get(item.restore, item.restore)
                self.transcript.add_turn_end(Text(f"↶ rewound ({what})", style="dim"))
            case (UnfinishedCall() | Compaction() | CallStarted() | ModeChanged() | MemoryNote()
                  | HookContext()):
                pass  # nothing the transcript showed of its own
            case _:
                assert_never(item)

    def _reply(self, item: Reply) -> None:
        for part in item.parts:
            match part:
                case Thinking():
                    self.transcript.append_thinking(part.text)
                case ReplyText():
                    self.transcript.append_text(part.text)
                case ToolUse():
                    pass  # shown when it ends
                case _:
                    assert_never(part)
        self.transcript.end_text()

    def _tool_call(self, item: ToolCall) -> None:
        record = item.result
        detail = record.note or ""
        if not detail:
            detail = ", ".join(exit_words(record.signal, record.exit_code))
            if not detail and record.state in _ENDED_BADLY:
                detail = record.content
        self.transcript.tool_state(
            item.tool_use_id, item.name, record.state, input_summary(item.name, item.input),
            detail, record.content, turn_id=item.turn_id,
        )
        diff = diff_for_call(item.name, item.input)
        if diff is not None:
            self.transcript.tool_diff(item.tool_use_id, diff)

    def _user_command(self, item: UserCommand) -> None:  # bash mode: unfolded
        detail = item.ended or ", ".join(exit_words(item.signal, item.exit_code))
        self.transcript.tool_state(item.id, shell_tool(), item.state, f"! {item.command}",
                                   detail, turn_id="")
        self.transcript.tool_output(item.id, item.output, turn_id="")
        self.remember(f"!{item.command}")
