"""The model view: the conversation as the API must see it, derived from the journal.

Rules (docs/journal.md, "Deriving the model view"):
- every ``tool_use`` gets exactly one ``tool_result`` in the very next user message,
  tool results first, worded from the call's real final state;
- incomplete tool calls and empty text blocks are dropped;
- the first user message after an interrupted turn carries a short note saying so;
- steering text rides in the same user message, after the tool results.

:func:`check_model_view` (``view_check.py``) validates a message list against the
API's rules; the core runs it before every request, so a violation is a bug report
with the offending index, never a request the API rejects. The records are read
once into conversation items (``items.py``, as every reader reads them); each kind
of item has its one case in :func:`build_view`'s ``match``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, assert_never

from agent_tui.cancel import CancelReason
from agent_tui.core.history.items import (
    BackgroundResult,
    CallStarted,
    Compaction,
    HookContext,
    MemoryNote,
    ModeChanged,
    Reply,
    Rewind,
    Steer,
    ToolCall,
    TurnEnded,
    UnfinishedCall,
    UserCommand,
    UserTurn,
    read_items,
)
from agent_tui.core.history.scope import (
    effective_records as effective_records,
    model_records as model_records,
)
from agent_tui.core.journal.records import Record, ToolResultRecord
from agent_tui.core.history.image_budget import fit_images
from agent_tui.core.modes.plan import Plan, plan_cut_off_wording
from agent_tui.core.modes.plan_mode import mode_note
from agent_tui.core.history.view_check import (
    SERVER_TYPES as SERVER_TYPES,
    THINKING_TYPES as THINKING_TYPES,
    ModelViewError as ModelViewError,
    check_model_view as check_model_view,
)
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.protocol.ops import ImageAttachment
from agent_tui.protocol.states import RestoreWhat, TurnStatus

Message = dict[str, Any]
LOST_NOTE = "[A part of this conversation could not be read back from the journal.]"


def result_wording(record: ToolResultRecord) -> tuple[str, bool]:
    """What the model is told about a finished call, and whether it is an error."""
    state = record.state
    if state is ToolState.SUCCEEDED:
        return record.content, record.is_error
    if state is ToolState.FAILED:
        return record.content, True
    if state is ToolState.DENIED:
        if record.denied_by == "hook":
            return f"Blocked by a PreToolUse hook; it was not run. The hook says: {record.note}", True
        if record.denied_by == "policy":
            text = "Denied by the permission settings; it was not run."
            if record.note:
                text += f" ({record.note})"
            return text, True
        text = "The user denied this tool call; it was not run."
        if record.note:
            text += f"\nThe user's note: {record.note}"
        return text, True
    if state is ToolState.CANCELLED_BEFORE_START:
        if record.ended_by in (CancelReason.STREAM_FAILED, CancelReason.TURN_FAILED):
            why = f" ({record.content})" if record.content else ""
            return f"Not run: the turn ended before this tool call could start{why}.", True
        if record.ended_by is CancelReason.BUDGET:
            why = f" ({record.content})" if record.content else ""
            return f"Not run: the spending cap ended the turn before this tool call started{why}.", True
        return "Not run: the user interrupted the turn before this tool call started.", True
    if state is ToolState.CANCELLED_WHILE_RUNNING:
        ended = _how_it_ended(record)
        who = _STOPPED_BY.get(record.ended_by or "", "Interrupted by the user")
        if record.side_effects is SideEffects.NONE:  # read-only, or it never got going
            text = f"{who} after it started{' (' + ended + ')' if ended else ''}; it changed nothing."
            return text + (f"\n{record.content}" if record.content else ""), True
        text = (
            f"{who} after it started; it may have partly run"
            f"{' (' + ended + ')' if ended else ''}. Verify its effects before redoing it."
        )
        if record.content:
            text += f"\nOutput so far:\n{record.content}"
        return text, True
    if state is ToolState.UNKNOWN:
        text = "Result unknown: the outcome of this call could not be confirmed"
        if record.content:
            text += f" ({record.content.rstrip('.')})"
        if record.side_effects is SideEffects.NONE:
            return text + ". It changed nothing (read-only): call it again if the result is needed.", True
        return text + ". Verify before retrying.", True
    raise ValueError(f"not a final tool state: {state}")


# Who stopped a call that had started (ToolResultRecord.ended_by, a CancelReason).
_STOPPED_BY: dict[str, str] = {CancelReason.TIMEOUT: "Timed out", CancelReason.SHUTDOWN: "Stopped at shutdown",
                               CancelReason.BUDGET: "Stopped by the spending cap"}


def _how_it_ended(record: ToolResultRecord) -> str:
    facts = []
    if record.signal:
        facts.append(f"ended by {record.signal}")
    if record.exit_code is not None:
        facts.append(f"exit code {record.exit_code}")
    if record.residue:
        facts.append(f"{len(record.residue)} process(es) could not be ended")
    return ", ".join(facts)


def _unfinished_result(tool_use_id: str, name: str,
                       intent: CallStarted | None) -> ToolResultRecord:
    """The result of a call the journal shows no final record for (``intent``: its
    intent, when it started). A call that started may have changed something unless
    its intent says it could not."""
    if intent is not None:
        return ToolResultRecord(
            turn_id="",
            tool_use_id=tool_use_id,
            name=name,
            state=ToolState.UNKNOWN,
            content="it started but no result was recorded (the agent stopped while it "
            f"ran); operation id {intent.operation_id}",
            is_error=True,
            side_effects=SideEffects.NONE if intent.read_only else SideEffects.UNVERIFIED,
        )
    return ToolResultRecord(
        turn_id="",
        tool_use_id=tool_use_id,
        name=name,
        state=ToolState.CANCELLED_BEFORE_START,
        content="",
        is_error=True,
    )


def interrupted_note(calls: list[tuple[str, ToolState]], plan: Plan | None = None) -> str:
    note = "[The user interrupted the previous turn. Work may be half done."
    touched = [f"{name} ({state})" for name, state in calls if state is not ToolState.SUCCEEDED]
    if touched:
        note += " Tool calls that did not finish: " + ", ".join(touched) + "."
    note += plan_cut_off_wording(plan)  # the plan item it cut off (the plan before the message)
    return note + " Verify the current state before redoing anything.]"


class _Builder:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.open_calls: list[tuple[str, str]] = []  # (tool_use_id, name) awaiting results
        self.results: dict[str, ToolResultRecord] = {}
        self.started: dict[str, CallStarted] = {}  # tool_use_id -> its start
        self.pending_user: list[dict[str, Any]] = []
        self.last_turn_calls: list[tuple[str, ToolState]] = []
        self.note_due = False
        self.cut_note_due = ""  # why an answer was cut off, when a note is owed
        self.code_note_due = False  # the note owed after a rewind of one side only
        self.paused = False  # the newest assistant message is a paused turn's
        self.stripped_thinking = False  # another model's thinking was left out
        self.stripped_in_last = False  # ... from the newest assistant message

    def user_text(self, text: str) -> None:
        if text.strip():
            self.pending_user.append({"type": "text", "text": text})

    def user_images(self, images: list[ImageAttachment]) -> None:
        self.pending_user.extend(image.block() for image in images)  # before their text

    def flush_user(self) -> None:
        blocks: list[dict[str, Any]] = []
        for tool_use_id, name in self.open_calls:
            record = self.results.get(tool_use_id) or _unfinished_result(
                tool_use_id, name, self.started.get(tool_use_id)
            )
            text, is_error = result_wording(record)
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": text or "(no output)",
            }
            if record.blocks:  # images the tool returned, after its text
                block["content"] = [{"type": "text", "text": block["content"]}, *record.blocks]
            if is_error:
                block["is_error"] = True
            blocks.append(block)
        self.open_calls.clear()
        blocks.extend(self.pending_user)
        self.pending_user = []
        if not blocks:
            return
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": blocks})

    def assistant(self, record: Reply, model: str | None) -> None:
        foreign = model is not None and record.model is not None and record.model != model
        blocks = [dict(b) for b in record.blocks if _keep_block(b, foreign)]
        while blocks and blocks[-1]["type"] in THINKING_TYPES:
            # A reply cut after its thinking, before what it thought about: the API
            # refuses an assistant message that ends with thinking (journal only).
            blocks.pop()
        if foreign and any(b.get("type") in THINKING_TYPES for b in record.blocks):
            self.stripped_thinking = True
            self.stripped_in_last = True
        else:
            self.stripped_in_last = False
        if not blocks:
            return
        if self.cut_note_due and self.messages and self.messages[-1]["role"] == "assistant":
            self.user_text(GO_ON_NOTES[self.cut_note_due])  # the turn went on after a cut
            self.cut_note_due = ""
        self.flush_user()
        if self.messages and self.messages[-1]["role"] == "assistant" and self.paused:
            # A paused turn (pause_turn) goes on in the same assistant message.
            self.messages[-1]["content"].extend(blocks)
        else:
            if not self.messages or self.messages[-1]["role"] == "assistant":
                # Only when a journal line was lost (set aside at load): say so, rather
                # than drop this reply (and the results of its calls) or break alternation.
                self.messages.append({"role": "user", "content": [{"type": "text",
                                                                   "text": LOST_NOTE}]})
            self.messages.append({"role": "assistant", "content": blocks})
        self.open_calls = [(b["id"], b["name"]) for b in blocks if b["type"] == "tool_use"]
        self.paused = record.ended == "pause_turn"
        if record.ended in CUT_NOTES and not self.open_calls:
            self.cut_note_due = record.ended


def _user_message(b: _Builder, record: UserTurn) -> None:
    """A user message, after the notes it owes: a rewind of one side only, an answer
    cut off, a turn interrupted."""
    if b.code_note_due:
        b.user_text(REWIND_NOTE)
        b.code_note_due = False
    if b.cut_note_due:
        b.user_text(CUT_NOTES[b.cut_note_due])
        b.cut_note_due = ""
    if b.note_due:
        b.user_text(interrupted_note(b.last_turn_calls, record.plan_before))
        b.note_due = False
        b.last_turn_calls = []
    b.user_images(record.images)
    b.user_text(record.text)


def _rewind(b: _Builder, record: Rewind) -> None:
    # Code and conversation rewound together agree with each other; either alone
    # leaves files the conversation does not describe.
    b.code_note_due = (
        record.restore is RestoreWhat.CONVERSATION
        or (record.restore is RestoreWhat.CODE and bool(record.restored))
        or bool(record.skipped_conflicts)
    )


def _keep_block(block: dict[str, Any], foreign: bool) -> bool:
    kind = block.get("type")
    if kind == "text":
        return bool(block.get("text", "").strip())
    if kind in THINKING_TYPES:
        # Sent back verbatim, signature included; another model's signatures are
        # rejected by the API, so its thinking stays in the journal only.
        return not foreign
    return kind == "tool_use" or kind in SERVER_TYPES


SUMMARY_HEADER = (
    "[The conversation before this point was compacted to save context. Summary of it:]"
)
CUT_NOTES = {
    "max_tokens": (
        "[Your previous answer was cut off at the output limit (max_tokens). Continue "
        "from where it stopped if it is still needed.]"
    ),
    "model_context_window_exceeded": (
        "[Your previous answer was cut off: the context window was full. The conversation "
        "has been compacted; continue from where you stopped.]"
    ),
}
#: What the model is told when the turn itself goes on after a cut (for max_tokens,
#: Claude Code's words).
GO_ON_NOTES = {**CUT_NOTES, "max_tokens": (
    "[Output token limit hit (max_tokens). Resume directly, with no apology and no recap "
    "of what you were doing. Pick up mid-thought if that is where the cut happened. Break "
    "the remaining work into smaller pieces.]")}


REWIND_NOTE = (
    "[The user rewound to an earlier point; the workspace files may differ from what "
    "this conversation shows. Read them again before editing.]"
)


class View:
    """A model view and what was left out of it to keep it valid."""

    def __init__(self, messages: list[Message], stripped_thinking: bool, stripped_in_last: bool,
                 images_left_out: list[str] | None = None):
        self.messages = messages
        self.stripped_thinking = stripped_thinking
        # The newest assistant message lost another model's thinking: with thinking
        # on, the API wants a tool loop's assistant message to start with it.
        self.stripped_in_last = stripped_in_last
        # Images one request cannot hold, oldest first (``core/history/image_budget.py``): why
        self.images_left_out = images_left_out or []


def model_view(records: Iterable[Record], model: str | None = None) -> list[Message]:
    """Derive the API's message list from journal records."""
    return build_view(records, model).messages


def build_view(records: Iterable[Record], model: str | None = None) -> View:
    """The model view for ``model``: thinking written by another model is left out."""
    b = _Builder()
    for item in read_items(model_records(records)).items:
        match item:
            case UserTurn():
                if not item.blocked:  # a prompt a hook blocked never reaches the model
                    _user_message(b, item)
            case Rewind():
                _rewind(b, item)
            case Compaction():
                b.user_text(f"{SUMMARY_HEADER}\n{item.summary}")
            case Reply():
                b.assistant(item, model)
            case ModeChanged():
                b.user_text(mode_note(item.mode, item.previous))
            case MemoryNote():
                b.user_text(f"[Instructions from {item.path}, which applies to work in its "
                            f"folder:]\n{item.text}")
            case UserCommand():  # bash mode: before the next message
                for text in item.model_texts:
                    b.user_text(text)
            case CallStarted():
                b.started[item.tool_use_id] = item
            case ToolCall():
                b.results[item.tool_use_id] = item.result
                b.last_turn_calls.append((item.result.name, item.result.state))
            case BackgroundResult():
                b.user_text(f"[Background task {item.job_id} ({item.description}) "
                            f"{item.state}:\n{item.text}]")
            case Steer():
                b.user_images(item.images)
                b.user_text(item.text)
            case HookContext():
                b.user_text(item.text)
            case TurnEnded():
                b.note_due = item.status is TurnStatus.CANCELLED
                if not b.note_due:
                    b.last_turn_calls = []
            case UnfinishedCall():
                pass  # its result is written where its reply's results are due
            case _:
                assert_never(item)
    if b.cut_note_due and b.messages and b.messages[-1]["role"] == "assistant":
        b.user_text(GO_ON_NOTES[b.cut_note_due])  # the turn goes on after the cut: say so
    b.flush_user()
    left_out = fit_images(b.messages)  # the oldest images a request cannot hold
    return View(b.messages, b.stripped_thinking, b.stripped_in_last, left_out)
