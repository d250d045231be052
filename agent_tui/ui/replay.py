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
from typing import Any

from rich.text import Text

from agent_tui.core.history import effective_records
from agent_tui.core.records import (
    AssistantMessageRecord,
    BackgroundResultRecord,
    RewindRecord,
    SteerRecord,
    ToolResultRecord,
    TurnEndedRecord,
    UserCommandRecord,
    UserMessageRecord,
)
from agent_tui.protocol import ToolState
from agent_tui.protocol.states import TurnStatus
from agent_tui.ui.diffs import diff_for_call
from agent_tui.ui.safe_text import first_line
from agent_tui.ui.states import exit_words
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
    inputs: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}  # (turn, tool id)
    shown = 0
    last_ts = 0.0
    for record in effective_records(records):
        last_ts = max(last_ts, getattr(record, "ts", 0.0) or 0.0)
        if isinstance(record, UserMessageRecord):
            transcript.add_user(record.text, turn_id=record.turn_id,
                                images=[image.label for image in record.images])
            remember(record.text)
            shown += 1
        elif isinstance(record, SteerRecord) and record.state == "applied" and record.delivery == "injected":
            transcript.add_user(record.text, label="steer ›",
                                images=[image.label for image in record.images])
        elif isinstance(record, AssistantMessageRecord):
            for block in record.blocks:
                if block.get("type") == "thinking" and str(block.get("thinking", "")).strip():
                    transcript.append_thinking(str(block["thinking"]))
                elif block.get("type") == "text" and block.get("text", "").strip():
                    transcript.append_text(block["text"])
                elif block.get("type") == "tool_use":
                    inputs[(record.turn_id, block["id"])] = (
                        block.get("name", "?"), block.get("input") or {})
            transcript.end_text()
        elif isinstance(record, ToolResultRecord):
            name, args = inputs.get((record.turn_id, record.tool_use_id), (record.name, {}))
            detail = record.note or ""
            if not detail:
                detail = ", ".join(exit_words(record.signal, record.exit_code))
                if not detail and record.state in _ENDED_BADLY:
                    detail = record.content
            transcript.tool_state(
                record.tool_use_id, name, record.state, input_summary(name, args), detail,
                record.content, turn_id=record.turn_id,
            )
            diff = diff_for_call(name, args)
            if diff is not None:
                transcript.tool_diff(record.tool_use_id, diff)
        elif isinstance(record, TurnEndedRecord):
            transcript.end_text()
            if record.status is not TurnStatus.COMPLETED:
                transcript.add_turn_end(turn_end_line(record.status, record.detail))
        elif isinstance(record, BackgroundResultRecord):
            transcript.add_turn_end(Text(f"⚙ background job ended ({record.state}): "
                                         f"{first_line(record.description, 120)}", style="dim"))
        elif isinstance(record, UserCommandRecord):  # bash mode: a ! command, unfolded
            detail = record.ended or ", ".join(exit_words(record.signal, record.exit_code))
            transcript.tool_state(record.id, "bash", record.state, f"! {record.command}",
                                  detail, turn_id="")
            transcript.tool_output(record.id, record.output, turn_id="")
            remember(f"!{record.command}")
        elif isinstance(record, RewindRecord):
            what = {"both": "code and conversation", "conversation": "conversation",
                    "code": "code"}.get(record.restore, record.restore)
            transcript.add_turn_end(Text(f"↶ rewound ({what})", style="dim"))
    if shown:
        when = format_time(last_ts) if last_ts else "earlier"
        line = Text(f"── resumed: the conversation above is from {when}; "
                    "the model sees it as it was ──", style="dim")
        transcript.add_turn_end(line)
    return shown
