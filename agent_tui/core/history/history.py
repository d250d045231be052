"""The model view: the conversation as the API must see it, derived from the journal.

Rules (docs/journal.md, "Deriving the model view"):
- every ``tool_use`` gets exactly one ``tool_result`` in the very next user message,
  tool results first, worded from the call's real final state;
- incomplete tool calls and empty text blocks are dropped;
- the first user message after an interrupted turn carries a short note saying so;
- steering text rides in the same user message, after the tool results.

:func:`check_model_view` (``view_check.py``) validates a message list against the
API's rules; the core runs it before every request, so a violation is a bug report
with the offending index, never a request the API rejects. Each kind of record has
its one case in :func:`build_view`'s ``match``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from typing import Any, assert_never

from agent_tui.cancel import CancelReason
from agent_tui.core.journal.journal import Records
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
from agent_tui.core.history.image_budget import fit_images
from agent_tui.core.modes.plan import cut_off_wording
from agent_tui.core.modes.plan_mode import mode_note
from agent_tui.core.history.view_check import (
    SERVER_TYPES as SERVER_TYPES,
    THINKING_TYPES as THINKING_TYPES,
    ModelViewError as ModelViewError,
    check_model_view as check_model_view,
)
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.protocol.ops import ImageAttachment
from agent_tui.protocol.states import HookDecision, HookEvent, RestoreWhat, TurnStatus

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
                       intent: ToolIntentRecord | None) -> ToolResultRecord:
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


def interrupted_note(calls: list[tuple[str, ToolState]], earlier: Iterable[Any] = ()) -> str:
    note = "[The user interrupted the previous turn. Work may be half done."
    touched = [f"{name} ({state})" for name, state in calls if state is not ToolState.SUCCEEDED]
    if touched:
        note += " Tool calls that did not finish: " + ", ".join(touched) + "."
    note += cut_off_wording(earlier)  # the plan item it cut off, from the records before
    return note + " Verify the current state before redoing anything.]"


class _Builder:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.open_calls: list[tuple[str, str]] = []  # (tool_use_id, name) awaiting results
        self.results: dict[str, ToolResultRecord] = {}
        self.started: dict[str, ToolIntentRecord] = {}  # tool_use_id -> its intent
        self.pending_user: list[dict[str, Any]] = []
        self.last_turn_calls: list[tuple[str, ToolState]] = []
        self.note_due = False
        self.cut_note_due = ""  # the note owed after an answer cut off
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

    def assistant(self, record: AssistantMessageRecord, model: str | None) -> None:
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
            self.user_text(self.cut_note_due)  # the turn went on after a cut answer
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
            self.cut_note_due = CUT_NOTES[record.ended]


def _user_message(b: _Builder, record: UserMessageRecord, earlier: list[Record]) -> None:
    """A user message, after the notes it owes: a rewind of one side only, an answer
    cut off, a turn interrupted."""
    if b.code_note_due:
        b.user_text(REWIND_NOTE)
        b.code_note_due = False
    if b.cut_note_due:
        b.user_text(b.cut_note_due)
        b.cut_note_due = ""
    if b.note_due:
        b.user_text(interrupted_note(b.last_turn_calls, earlier))
        b.note_due = False
        b.last_turn_calls = []
    b.user_images(record.images)
    b.user_text(record.text)


def _rewind(b: _Builder, record: RewindRecord) -> None:
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


def effective_records(records: Iterable[Record]) -> list[Record]:
    """The records the model view is built from: a rewind of the conversation cuts
    back to just before its checkpoint's user message (the journal keeps the rest)."""
    kept: list[Record] = []
    rest: Iterable[Record] = records
    if isinstance(records, Records) and records.at is not None:  # where its rewinds are
        if not records.at["rewind"]:
            return list(records)
        first = records.at["rewind"][0]
        kept, rest = list(records[:first]), records[first:]  # nothing before a rewind is cut
    for record in rest:
        if isinstance(record, RewindRecord) and record.restore is not RestoreWhat.CODE:
            for i in range(len(kept) - 1, -1, -1):
                candidate = kept[i]
                if (
                    isinstance(candidate, UserMessageRecord)
                    and candidate.turn_id == record.checkpoint_id
                ):
                    del kept[i:]
                    break
        kept.append(record)
    return kept


def model_records(records: Iterable[Record]) -> list[Record]:
    """The records the model view is built from: the effective records after the
    last ``/clear``, with the newest compaction's summary standing for what came
    before the part it kept."""
    at = records.at if isinstance(records, Records) else None  # the journal's positions
    kept = effective_records(records)
    if at is not None and not at["rewind"]:
        # Nothing was cut: the journal's positions hold in ``kept``.
        cleared = at["conversation_cleared"][-1] if at["conversation_cleared"] else -1
        compactions = [i for i in at["compaction"][-1:] if i > cleared]
        found = kept[compactions[0]] if compactions else None
        compaction = found if isinstance(found, CompactionRecord) else None
        kept = kept[cleared + 1 :]
    else:
        for i in range(len(kept) - 1, -1, -1):
            if isinstance(kept[i], ConversationClearedRecord):
                kept = kept[i + 1 :]
                break
        compaction = next(
            (r for r in reversed(kept) if isinstance(r, CompactionRecord)), None
        )
    if compaction is None:
        return kept
    # The records are in journal order (seq ascending): the kept part is found by
    # bisection, and only the records after the last user message before it are
    # looked at, so that a request late in a long session costs what an early one does.
    cut = bisect_left(kept, compaction.kept_from_seq, key=lambda r: r.seq)
    after = [r for r in kept[cut:] if r is not compaction]
    # What the kept part's first user message must still be told: how the turn
    # before it ended (the interrupted note needs its results and its end).
    last_user = next(
        (i for i in range(cut - 1, -1, -1) if isinstance(kept[i], UserMessageRecord)), -1
    )
    carried = [
        r for r in kept[last_user + 1 : cut] if isinstance(r, (ToolResultRecord, TurnEndedRecord))
    ]
    return [compaction, *carried, *after]


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
    kept = model_records(records)
    blocked = {  # prompts a UserPromptSubmit hook blocked never reach the model
        r.turn_id for r in kept if isinstance(r, HookRecord)
        and r.event is HookEvent.USER_PROMPT_SUBMIT and r.decision is HookDecision.BLOCK
    }
    for i, record in enumerate(kept):
        match record:
            case UserMessageRecord():
                if record.turn_id not in blocked:
                    _user_message(b, record, kept[:i])
            case RewindRecord():
                _rewind(b, record)
            case CompactionRecord():
                b.user_text(f"{SUMMARY_HEADER}\n{record.summary}")
            case AssistantMessageRecord():
                b.assistant(record, model)
            case PermissionModeRecord():
                b.user_text(mode_note(record.mode, record.previous))
            case MemoryNoteRecord():
                b.user_text(f"[Instructions from {record.path}, which applies to work in its "
                            f"folder:]\n{record.text}")
            case UserCommandRecord():  # bash mode: before the next message
                for text in record.model_texts():
                    b.user_text(text)
            case ToolIntentRecord():
                b.started[record.tool_use_id] = record
            case ToolResultRecord():
                b.results[record.tool_use_id] = record
                b.last_turn_calls.append((record.name, record.state))
            case BackgroundResultRecord():
                b.user_text(f"[Background task {record.job_id} ({record.description}) "
                            f"{record.state}:\n{record.text}]")
            case SteerRecord():
                if record.delivery == "injected":
                    b.user_images(record.images)
                    b.user_text(record.text)
            case HookRecord():
                if record.context:
                    b.user_text(record.context)
            case TurnEndedRecord():
                b.note_due = record.status is TurnStatus.CANCELLED
                if not b.note_due:
                    b.last_turn_calls = []
            case (SessionStarted() | AgentProcessRecord() | SessionForkedRecord()
                  | ModelRequestRecord() | RetryRecord() | ToolStateRecord() | PermissionRecord()
                  | CheckpointRecord() | NoticeRecord() | UsageRecord() | ModelChangeRecord()
                  | ConversationClearedRecord() | SessionNamedRecord()):
                pass  # never part of what the model sees
            case _:
                assert_never(record)
    if b.cut_note_due and b.messages and b.messages[-1]["role"] == "assistant":
        b.user_text(b.cut_note_due)  # the turn goes on after the cut: say so first
    b.flush_user()
    left_out = fit_images(b.messages)  # the oldest images a request cannot hold
    return View(b.messages, b.stripped_thinking, b.stripped_in_last, left_out)
