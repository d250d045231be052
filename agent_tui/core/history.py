"""The model view: the conversation as the API must see it, derived from the journal.

Rules (docs/journal.md, "Deriving the model view"):
- every ``tool_use`` gets exactly one ``tool_result`` in the very next user message,
  tool results first, worded from the call's real final state;
- incomplete tool calls and empty text blocks are dropped;
- the first user message after an interrupted turn carries a short note saying so;
- steering text rides in the same user message, after the tool results.

:func:`check_model_view` validates a message list against the API's rules; the
core runs it before every request, so a violation is a bug report with the
offending index, never a request the API rejects.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from typing import Any

from agent_tui.cancel import CancelReason
from agent_tui.core.records import (
    AssistantMessageRecord,
    BackgroundResultRecord,
    CompactionRecord,
    ConversationClearedRecord,
    HookRecord,
    MemoryNoteRecord,
    PermissionModeRecord,
    RewindRecord,
    SteerRecord,
    ToolIntentRecord,
    ToolResultRecord,
    TurnEndedRecord,
    UserCommandRecord,
    UserMessageRecord,
)
from agent_tui.core.image_budget import fit_images
from agent_tui.core.plan import cut_off_wording
from agent_tui.core.plan_mode import mode_note
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
_STOPPED_BY = {CancelReason.TIMEOUT: "Timed out", CancelReason.SHUTDOWN: "Stopped at shutdown"}


def _how_it_ended(record: ToolResultRecord) -> str:
    facts = []
    if record.signal:
        facts.append(f"ended by {record.signal}")
    if record.exit_code is not None:
        facts.append(f"exit code {record.exit_code}")
    if record.residue:
        facts.append(f"{len(record.residue)} process(es) could not be ended")
    return ", ".join(facts)


def _unfinished_result(tool_use_id: str, name: str, operation_id: str | None) -> ToolResultRecord:
    """The result of a call the journal shows no final record for (``operation_id``:
    its intent's, when it started)."""
    if operation_id is not None:
        return ToolResultRecord(
            turn_id="",
            tool_use_id=tool_use_id,
            name=name,
            state=ToolState.UNKNOWN,
            content="it started but no result was recorded (the agent stopped while it "
            f"ran); operation id {operation_id}",
            is_error=True,
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
        self.started: dict[str, str] = {}  # tool_use_id -> operation id of its intent
        self.pending_user: list[dict[str, Any]] = []
        self.last_turn_calls: list[tuple[str, ToolState]] = []
        self.note_due = False
        self.cut_note_due = ""  # the note owed after an answer cut off
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


THINKING_TYPES = ("thinking", "redacted_thinking")
# Server tools' blocks: run by the API, sent back verbatim (a paused turn needs them).
SERVER_TYPES = ("server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
                "code_execution_tool_result", "bash_code_execution_tool_result",
                "text_editor_code_execution_tool_result", "tool_search_tool_result")


def _keep_block(block: dict[str, Any], foreign: bool) -> bool:
    kind = block.get("type")
    if kind == "text":
        return bool(block.get("text", "").strip())
    if kind in THINKING_TYPES:
        # Sent back verbatim, signature included; another model's signatures are
        # rejected by the API, so its thinking stays in the journal only.
        return not foreign
    return kind == "tool_use" or kind in SERVER_TYPES


def effective_records(records: Iterable[Any]) -> list[Any]:
    """The records the model view is built from: a rewind of the conversation cuts
    back to just before its checkpoint's user message (the journal keeps the rest)."""
    at = getattr(records, "at", None)  # the journal's copy says where its rewinds are
    if at is not None:
        if not at["rewind"]:
            return list(records)
        first = at["rewind"][0]
        kept: list[Any] = list(records[:first])  # nothing before a rewind is cut
        rest: Iterable[Any] = records[first:]
    else:
        kept, rest = [], records
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


def model_records(records: Iterable[Any]) -> list[Any]:
    """The records the model view is built from: the effective records after the
    last ``/clear``, with the newest compaction's summary standing for what came
    before the part it kept."""
    at = getattr(records, "at", None)
    kept = effective_records(records)
    if at is not None and not at["rewind"]:
        # Nothing was cut: the journal's positions hold in ``kept``.
        cleared = at["conversation_cleared"][-1] if at["conversation_cleared"] else -1
        compactions = [i for i in at["compaction"][-1:] if i > cleared]
        compaction = kept[compactions[0]] if compactions else None
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
        # Images one request cannot hold, oldest first (``core/image_budget.py``): why
        self.images_left_out = images_left_out or []


def model_view(records: Iterable[Any], model: str | None = None) -> list[Message]:
    """Derive the API's message list from journal records."""
    return build_view(records, model).messages


def build_view(records: Iterable[Any], model: str | None = None) -> View:
    """The model view for ``model``: thinking written by another model is left out."""
    b = _Builder()
    code_note_due = False
    kept = model_records(records)
    blocked = {  # prompts a UserPromptSubmit hook blocked never reach the model
        r.turn_id for r in kept if isinstance(r, HookRecord)
        and r.event is HookEvent.USER_PROMPT_SUBMIT and r.decision is HookDecision.BLOCK
    }
    for i, record in enumerate(kept):
        if isinstance(record, UserMessageRecord) and record.turn_id in blocked:
            continue
        if isinstance(record, RewindRecord):
            # Code and conversation rewound together agree with each other; either
            # alone leaves files the conversation does not describe.
            code_note_due = (
                record.restore is RestoreWhat.CONVERSATION
                or (record.restore is RestoreWhat.CODE and bool(record.restored))
                or bool(record.skipped_conflicts)
            )
            continue
        if isinstance(record, UserMessageRecord) and code_note_due:
            b.user_text(REWIND_NOTE)
            code_note_due = False
        if isinstance(record, CompactionRecord):
            b.user_text(f"{SUMMARY_HEADER}\n{record.summary}")
            continue
        if isinstance(record, UserMessageRecord) and b.cut_note_due:
            b.user_text(b.cut_note_due)
            b.cut_note_due = ""
        if isinstance(record, UserMessageRecord):
            if b.note_due:
                b.user_text(interrupted_note(b.last_turn_calls, kept[:i]))
                b.note_due = False
                b.last_turn_calls = []
            b.user_images(record.images)
            b.user_text(record.text)
        elif isinstance(record, AssistantMessageRecord):
            b.assistant(record, model)
        elif isinstance(record, PermissionModeRecord):
            b.user_text(mode_note(record.mode, record.previous))
        elif isinstance(record, MemoryNoteRecord):
            b.user_text(f"[Instructions from {record.path}, which applies to work in its folder:]"
                        f"\n{record.text}")
        elif isinstance(record, UserCommandRecord):  # bash mode: before the next message
            for text in record.model_texts():
                b.user_text(text)
        elif isinstance(record, ToolIntentRecord):
            b.started[record.tool_use_id] = record.operation_id
        elif isinstance(record, ToolResultRecord):
            b.results[record.tool_use_id] = record
            b.last_turn_calls.append((record.name, record.state))
        elif isinstance(record, BackgroundResultRecord):
            b.user_text(
                f"[Background task {record.job_id} ({record.description}) {record.state}:\n"
                f"{record.text}]"
            )
        elif isinstance(record, SteerRecord) and record.delivery == "injected":
            b.user_images(record.images)
            b.user_text(record.text)
        elif isinstance(record, HookRecord) and record.context:
            b.user_text(record.context)
        elif isinstance(record, TurnEndedRecord):
            b.note_due = record.status is TurnStatus.CANCELLED
            if not b.note_due:
                b.last_turn_calls = []
    if b.cut_note_due and b.messages and b.messages[-1]["role"] == "assistant":
        b.user_text(b.cut_note_due)  # the turn goes on after the cut: say so first
    b.flush_user()
    left_out = fit_images(b.messages)  # the oldest images a request cannot hold
    return View(b.messages, b.stripped_thinking, b.stripped_in_last, left_out)


class ModelViewError(AssertionError):
    """The model view breaks an API rule: a bug in the core, never sent."""


def check_model_view(messages: list[Message]) -> None:
    """Raise :class:`ModelViewError` naming the offending message index."""
    if not messages:
        raise ModelViewError("messages: at least one message is required")
    if messages[0]["role"] != "user":
        raise ModelViewError("messages.0: the first message must use the user role")
    seen_ids: set[str] = set()
    for i, msg in enumerate(messages):
        role, content = msg.get("role"), msg.get("content")
        if role not in ("user", "assistant"):
            raise ModelViewError(f"messages.{i}: unknown role {role!r}")
        if i and messages[i - 1]["role"] == role:
            raise ModelViewError(f"messages.{i}: roles must alternate")
        if not isinstance(content, list) or not content:
            raise ModelViewError(f"messages.{i}: content must be a non-empty list")
        expected: list[str] = []
        if i and messages[i - 1]["role"] == "assistant":
            expected = [b["id"] for b in messages[i - 1]["content"] if b["type"] == "tool_use"]
        got: list[str] = []
        text_seen = False
        for j, block in enumerate(content):
            kind = block.get("type")
            if kind == "text":
                if not block.get("text", "").strip():
                    raise ModelViewError(f"messages.{i}.content.{j}: empty text block")
                text_seen = True
            elif kind == "tool_use":
                if role != "assistant":
                    raise ModelViewError(f"messages.{i}.content.{j}: tool_use in a user message")
                if block["id"] in seen_ids:
                    raise ModelViewError(f"messages.{i}.content.{j}: duplicate tool_use id")
                if not isinstance(block.get("input"), dict):
                    raise ModelViewError(f"messages.{i}.content.{j}: input must be an object")
                seen_ids.add(block["id"])
            elif kind in THINKING_TYPES:
                if role != "assistant":
                    raise ModelViewError(f"messages.{i}.content.{j}: {kind} in a user message")
                if kind == "thinking" and not block.get("signature"):
                    raise ModelViewError(f"messages.{i}.content.{j}: thinking without a signature")
            elif kind in SERVER_TYPES:
                if role != "assistant":
                    raise ModelViewError(f"messages.{i}.content.{j}: {kind} in a user message")
            elif kind == "image":
                if role != "user":
                    raise ModelViewError(f"messages.{i}.content.{j}: image from assistant")
            elif kind == "tool_result":
                if role != "user":
                    raise ModelViewError(f"messages.{i}.content.{j}: tool_result from assistant")
                if text_seen:
                    raise ModelViewError(f"messages.{i}.content.{j}: tool_result after text")
                got.append(block["tool_use_id"])
            else:
                raise ModelViewError(f"messages.{i}.content.{j}: unknown block type {kind!r}")
        if role == "user" and got != expected:
            missing = [x for x in expected if x not in got]
            extra = [x for x in got if x not in expected]
            raise ModelViewError(
                f"messages.{i}: tool results do not match the previous tool_use blocks "
                f"(missing {missing}, unexpected {extra}, order {got})"
            )
    last = messages[-1]
    if last["role"] == "assistant" and any(b["type"] == "tool_use" for b in last["content"]):
        raise ModelViewError(f"messages.{len(messages) - 1}: tool_use without a tool_result")
