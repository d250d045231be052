"""A resumed session's conversation, shown again in the transcript.

``--continue`` / ``--resume`` open a saved journal; the transcript then shows what the
conversation holds, as the model sees it (after a rewind of the conversation, what it
cut is not shown): the user's messages and steers, the model's text, each tool call
with the state it ended in, and how a turn ended when it did not complete. A divider
says where the resumed session picks up. Nothing here reaches the model or the
journal: it only reads the records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, assert_never

from rich.text import Text

from agent_tui.core.history.history import effective_records
from agent_tui.core.journal.records import (
    AgentProcessRecord,
    AssistantMessageRecord,
    BackgroundResultRecord,
    CheckpointRecord,
    CompactionRecord,
    ConversationClearedRecord,
    HookRecord,
    MemoryNoteRecord,
    ModelChangeRecord,
    ModelRequestRecord,
    NoticeRecord,
    PermissionModeRecord,
    PermissionRecord,
    Record,
    RetryRecord,
    RewindRecord,
    SessionForkedRecord,
    SessionNamedRecord,
    SessionStarted,
    SteerRecord,
    ToolIntentRecord,
    ToolResultRecord,
    ToolStateRecord,
    TurnEndedRecord,
    UsageRecord,
    UserCommandRecord,
    UserMessageRecord,
)
from agent_tui.protocol import ToolState
from agent_tui.protocol.states import TurnStatus
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
    last_ts = 0.0
    for record in effective_records(records):
        last_ts = max(last_ts, record.ts or 0.0)
        replay.show(record)
    shown = replay.shown
    if shown:
        when = format_time(last_ts) if last_ts else "earlier"
        line = Text(f"── resumed: the conversation above is from {when}; "
                    "the model sees it as it was ──", style="dim")
        transcript.add_turn_end(line)
    return shown


class _Replay:
    """One case per kind of record: what the transcript showed when it happened."""

    def __init__(self, transcript: Transcript, remember: Callable[[str], None],
                 turn_end_line: Callable[[str, str], Text]) -> None:
        self.transcript = transcript
        self.remember = remember
        self.turn_end_line = turn_end_line
        self.inputs: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}  # (turn, tool id)
        self.shown = 0  # user messages shown

    def show(self, record: Record) -> None:
        match record:
            case UserMessageRecord():
                self._user_message(record)
            case SteerRecord():
                if record.state == "applied" and record.delivery == "injected":
                    self.transcript.add_user(record.text, label="steer ›",
                                             images=[image.label for image in record.images])
            case AssistantMessageRecord():
                self._assistant(record)
            case ToolResultRecord():
                self._tool_result(record)
            case TurnEndedRecord():
                self._turn_ended(record)
            case BackgroundResultRecord():
                self.transcript.add_turn_end(Text(
                    f"⚙ background job ended ({record.state}): "
                    f"{first_line(record.description, 120)}", style="dim"))
            case UserCommandRecord():
                self._user_command(record)
            case RewindRecord():
                what = {"both": "code and conversation", "conversation": "conversation",
                        "code": "code"}.get(record.restore, record.restore)
                self.transcript.add_turn_end(Text(f"↶ rewound ({what})", style="dim"))
            case (SessionStarted() | AgentProcessRecord() | SessionForkedRecord()
                  | ModelRequestRecord() | RetryRecord() | ToolIntentRecord() | ToolStateRecord()
                  | PermissionRecord() | CheckpointRecord() | HookRecord() | NoticeRecord()
                  | UsageRecord() | CompactionRecord() | MemoryNoteRecord() | ModelChangeRecord()
                  | PermissionModeRecord() | ConversationClearedRecord() | SessionNamedRecord()):
                pass  # nothing the transcript showed of its own
            case _:
                assert_never(record)

    def _user_message(self, record: UserMessageRecord) -> None:
        self.transcript.add_user(record.text, turn_id=record.turn_id,
                                 images=[image.label for image in record.images])
        self.remember(record.text)
        self.shown += 1

    def _assistant(self, record: AssistantMessageRecord) -> None:
        for block in record.blocks:
            if block.get("type") == "thinking" and str(block.get("thinking", "")).strip():
                self.transcript.append_thinking(str(block["thinking"]))
            elif block.get("type") == "text" and block.get("text", "").strip():
                self.transcript.append_text(block["text"])
            elif block.get("type") == "tool_use":
                self.inputs[(record.turn_id, block["id"])] = (
                    block.get("name", "?"), block.get("input") or {})
        self.transcript.end_text()

    def _tool_result(self, record: ToolResultRecord) -> None:
        name, args = self.inputs.get((record.turn_id, record.tool_use_id), (record.name, {}))
        detail = record.note or ""
        if not detail:
            detail = ", ".join(exit_words(record.signal, record.exit_code))
            if not detail and record.state in _ENDED_BADLY:
                detail = record.content
        self.transcript.tool_state(
            record.tool_use_id, name, record.state, input_summary(name, args), detail,
            record.content, turn_id=record.turn_id,
        )
        diff = diff_for_call(name, args)
        if diff is not None:
            self.transcript.tool_diff(record.tool_use_id, diff)

    def _turn_ended(self, record: TurnEndedRecord) -> None:
        self.transcript.end_text()
        if record.status is not TurnStatus.COMPLETED:
            self.transcript.add_turn_end(self.turn_end_line(record.status, record.detail))

    def _user_command(self, record: UserCommandRecord) -> None:  # bash mode: unfolded
        detail = record.ended or ", ".join(exit_words(record.signal, record.exit_code))
        self.transcript.tool_state(record.id, "bash", record.state, f"! {record.command}",
                                   detail, turn_id="")
        self.transcript.tool_output(record.id, record.output, turn_id="")
        self.remember(f"!{record.command}")
