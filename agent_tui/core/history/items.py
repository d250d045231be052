"""The conversation as typed items, read from the journal once for every reader.

The journal keeps what happened as records of many kinds (``core/journal/records.py``);
what a reader shows is a conversation: the user's turns and steers, the model's
replies (its text, thinking and tool calls), each call's end with its final state
and result, the user's ``!`` commands, how turns ended, rewinds and compactions.
:func:`conversation` reads the records as the conversation stands (after a rewind of
the conversation, what it cut is left out) into those items, in journal order, so
that the resumed transcript (``ui/render/replay.py``), the Markdown export, ACP's
``session/load`` replay and the final answer of print mode and sub-agents interpret
each record kind in one place: :func:`_read`'s ``match``. A new record kind is one
case there; a reader changes only when it should show something new.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Any, Literal, Union, assert_never

from pydantic import BaseModel, Field

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
from agent_tui.protocol.ops import ImageAttachment
from agent_tui.protocol.states import (
    BackgroundState,
    RestoreWhat,
    SteerDelivery,
    SteerStatus,
    ToolState,
    TurnStatus,
)


class ItemKind(StrEnum):
    """What one item of the conversation is."""

    USER_TURN = "user_turn"  # the user's message that starts a turn
    STEER = "steer"  # the user's message that reached the model inside a turn
    REPLY = "reply"  # one response of the model: its text, thinking and tool calls
    TOOL_CALL = "tool_call"  # a call's end: its final state and result
    UNFINISHED_CALL = "unfinished_call"  # a call its turn ended without a result for
    USER_COMMAND = "user_command"  # bash mode: ``!cmd`` and its output
    TURN_ENDED = "turn_ended"
    BACKGROUND_RESULT = "background_result"
    REWIND = "rewind"
    COMPACTION = "compaction"


class UserTurn(BaseModel):
    kind: Literal[ItemKind.USER_TURN] = ItemKind.USER_TURN
    turn_id: str
    text: str
    images: list[ImageAttachment] = Field(default_factory=list)


class Steer(BaseModel):
    kind: Literal[ItemKind.STEER] = ItemKind.STEER
    text: str
    images: list[ImageAttachment] = Field(default_factory=list)


class Text(BaseModel):
    """A text block of a reply (blank ones are left out)."""

    part: Literal["text"] = "text"
    text: str


class Thinking(BaseModel):
    """The model's thinking, as it wrote it (blank and redacted thinking left out)."""

    part: Literal["thinking"] = "thinking"
    text: str


class ToolUse(BaseModel):
    """A call the model asked for, with its input."""

    part: Literal["tool_use"] = "tool_use"
    tool_use_id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


ReplyPart = Annotated[Union[Text, Thinking, ToolUse], Field(discriminator="part")]


class Reply(BaseModel):
    kind: Literal[ItemKind.REPLY] = ItemKind.REPLY
    turn_id: str
    parts: list[ReplyPart] = Field(default_factory=list)

    @property
    def texts(self) -> list[str]:
        return [p.text for p in self.parts if isinstance(p, Text)]


class ToolCall(BaseModel):
    """A call's end. ``name`` and ``input`` are the model's (the result's own name and
    no input when the reply that asked for it is not in the journal)."""

    kind: Literal[ItemKind.TOOL_CALL] = ItemKind.TOOL_CALL
    turn_id: str
    tool_use_id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    result: ToolResultRecord

    @property
    def state(self) -> ToolState:
        return self.result.state


class UnfinishedCall(BaseModel):
    """A call with no result when its turn ended: ``started`` says it had begun (its
    outcome is unknown), else it never ran."""

    kind: Literal[ItemKind.UNFINISHED_CALL] = ItemKind.UNFINISHED_CALL
    tool_use_id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    started: bool

    @property
    def state(self) -> ToolState:
        return ToolState.UNKNOWN if self.started else ToolState.CANCELLED_BEFORE_START


class UserCommand(BaseModel):
    kind: Literal[ItemKind.USER_COMMAND] = ItemKind.USER_COMMAND
    id: str
    command: str
    state: ToolState
    output: str = ""
    exit_code: int | None = None
    signal: str | None = None
    ended: str = ""


class TurnEnded(BaseModel):
    kind: Literal[ItemKind.TURN_ENDED] = ItemKind.TURN_ENDED
    turn_id: str
    status: TurnStatus
    detail: str = ""


class BackgroundResult(BaseModel):
    kind: Literal[ItemKind.BACKGROUND_RESULT] = ItemKind.BACKGROUND_RESULT
    job_id: str
    description: str
    state: BackgroundState
    text: str


class Rewind(BaseModel):
    kind: Literal[ItemKind.REWIND] = ItemKind.REWIND
    restore: RestoreWhat


class Compaction(BaseModel):
    """The model view's conversation before this point is a summary from here on."""

    kind: Literal[ItemKind.COMPACTION] = ItemKind.COMPACTION
    summary: str


Item = Annotated[
    Union[UserTurn, Steer, Reply, ToolCall, UnfinishedCall, UserCommand, TurnEnded,
          BackgroundResult, Rewind, Compaction],
    Field(discriminator="kind"),
]


class Conversation(BaseModel):
    """The items of a journal, and what a reader says about the whole."""

    items: list[Item] = Field(default_factory=list)
    workspace: str = ""  # the session's, from its first record
    last_ts: float = 0.0  # when the newest record of the conversation was written


class _Reader:
    def __init__(self) -> None:
        self.items: list[Item] = []
        self.inputs: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}  # (turn, id)
        self.open: dict[str, tuple[str, dict[str, Any]]] = {}  # calls awaiting a result
        self.started: set[str] = set()  # calls whose intent is recorded

    def reply(self, record: AssistantMessageRecord) -> Reply:
        parts: list[Text | Thinking | ToolUse] = []
        for block in record.blocks:
            kind = block.get("type")
            if kind == "thinking" and str(block.get("thinking", "")).strip():
                parts.append(Thinking(text=str(block["thinking"])))
            elif kind == "text" and str(block.get("text", "")).strip():
                parts.append(Text(text=str(block["text"])))
            elif kind == "tool_use":
                name, tool_input = str(block.get("name", "?")), block.get("input") or {}
                use = ToolUse(tool_use_id=str(block.get("id")), name=name, input=tool_input)
                parts.append(use)
                self.inputs[(record.turn_id, use.tool_use_id)] = (name, tool_input)
                self.open[use.tool_use_id] = (name, tool_input)
        return Reply(turn_id=record.turn_id, parts=parts)

    def tool_call(self, record: ToolResultRecord) -> ToolCall:
        self.open.pop(record.tool_use_id, None)
        name, tool_input = self.inputs.get((record.turn_id, record.tool_use_id), (record.name, {}))
        return ToolCall(turn_id=record.turn_id, tool_use_id=record.tool_use_id, name=name,
                        input=tool_input, result=record)

    def turn_ended(self, record: TurnEndedRecord) -> None:
        for tool_use_id, (name, tool_input) in self.open.items():
            self.items.append(UnfinishedCall(tool_use_id=tool_use_id, name=name, input=tool_input,
                                             started=tool_use_id in self.started))
        self.open.clear()
        self.items.append(TurnEnded(turn_id=record.turn_id, status=record.status,
                                    detail=record.detail))


def _read(r: _Reader, record: Record) -> None:
    """One case per kind of record: the item it is, if any."""
    match record:
        case UserMessageRecord():
            r.items.append(UserTurn(turn_id=record.turn_id, text=record.text, images=record.images))
        case SteerRecord():
            if record.state is SteerStatus.APPLIED and record.delivery is SteerDelivery.INJECTED:
                r.items.append(Steer(text=record.text, images=record.images))
        case AssistantMessageRecord():
            r.items.append(r.reply(record))
        case ToolIntentRecord():
            r.started.add(record.tool_use_id)
        case ToolResultRecord():
            r.items.append(r.tool_call(record))
        case TurnEndedRecord():
            r.turn_ended(record)
        case UserCommandRecord():
            r.items.append(UserCommand(id=record.id, command=record.command, state=record.state,
                                       output=record.output, exit_code=record.exit_code,
                                       signal=record.signal, ended=record.ended))
        case BackgroundResultRecord():
            r.items.append(BackgroundResult(job_id=record.job_id, description=record.description,
                                            state=record.state, text=record.text))
        case RewindRecord():
            r.items.append(Rewind(restore=record.restore))
        case CompactionRecord():
            r.items.append(Compaction(summary=record.summary))
        case (SessionStarted() | AgentProcessRecord() | SessionForkedRecord()
              | ModelRequestRecord() | RetryRecord() | ToolStateRecord() | PermissionRecord()
              | CheckpointRecord() | HookRecord() | NoticeRecord() | UsageRecord()
              | MemoryNoteRecord() | ModelChangeRecord() | PermissionModeRecord()
              | ConversationClearedRecord() | SessionNamedRecord()):
            pass  # not part of the conversation a reader shows
        case _:
            assert_never(record)


def conversation(records: Iterable[Record]) -> Conversation:
    """The conversation ``records`` hold, as it stands (a rewound part left out)."""
    r = _Reader()
    workspace, last_ts = "", 0.0
    for record in effective_records(records):
        if isinstance(record, SessionStarted) and not workspace:
            workspace = record.workspace
        last_ts = max(last_ts, record.ts or 0.0)
        _read(r, record)
    return Conversation(items=r.items, workspace=workspace, last_ts=last_ts)
