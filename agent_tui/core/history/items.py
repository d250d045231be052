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

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made, and a -p turn makes these classes whether it uses them or not.
from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Any, Literal, Union, assert_never

from pydantic import Field

from agent_tui.core.history.scope import effective_records
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
from agent_tui.core.modes.plan import Plan, PlanTracker
from agent_tui.protocol.model_base import DeferredModel
from agent_tui.protocol.ops import ImageAttachment
from agent_tui.protocol.states import (
    BackgroundState,
    HookDecision,
    HookEvent,
    PermissionMode,
    RestoreWhat,
    SteerDelivery,
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
    CALL_STARTED = "call_started"  # a call began to run (its intent is recorded)
    MODE_CHANGED = "mode_changed"  # the permission mode changed: the model is told
    MEMORY_NOTE = "memory_note"  # a subfolder's memory file joined the conversation
    HOOK_CONTEXT = "hook_context"  # what a hook adds for the model to read


class UserTurn(DeferredModel):
    kind: Literal[ItemKind.USER_TURN] = ItemKind.USER_TURN
    turn_id: str
    text: str
    images: list[ImageAttachment] = Field(default_factory=list)
    blocked: bool = False  # a UserPromptSubmit hook blocked it: the model never sees it
    plan_before: Plan | None = None  # the model's plan in force when it was sent


class Steer(DeferredModel):
    kind: Literal[ItemKind.STEER] = ItemKind.STEER
    text: str
    images: list[ImageAttachment] = Field(default_factory=list)


class Text(DeferredModel):
    """A text block of a reply (blank ones are left out)."""

    part: Literal["text"] = "text"
    text: str


class Thinking(DeferredModel):
    """The model's thinking, as it wrote it (blank and redacted thinking left out)."""

    part: Literal["thinking"] = "thinking"
    text: str


class ToolUse(DeferredModel):
    """A call the model asked for, with its input."""

    part: Literal["tool_use"] = "tool_use"
    tool_use_id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


ReplyPart = Annotated[Union[Text, Thinking, ToolUse], Field(discriminator="part")]


def _tool_use(block: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """A ``tool_use`` block's id, name and input."""
    return str(block.get("id")), str(block.get("name", "?")), block.get("input") or {}


class Reply(DeferredModel):
    """One response of the model (its record: the model view sends its blocks back as
    the API gave them, signatures and server tool blocks included)."""

    kind: Literal[ItemKind.REPLY] = ItemKind.REPLY
    turn_id: str
    source: AssistantMessageRecord

    @property
    def parts(self) -> list[ReplyPart]:
        """Its text, thinking and tool calls in order (blank text and thinking, and
        redacted thinking, left out)."""
        parts: list[ReplyPart] = []
        for block in self.source.blocks:
            kind = block.get("type")
            if kind == "thinking" and str(block.get("thinking", "")).strip():
                parts.append(Thinking(text=str(block["thinking"])))
            elif kind == "text" and str(block.get("text", "")).strip():
                parts.append(Text(text=str(block["text"])))
            elif kind == "tool_use":
                tool_use_id, name, tool_input = _tool_use(block)
                parts.append(ToolUse(tool_use_id=tool_use_id, name=name, input=tool_input))
        return parts

    @property
    def texts(self) -> list[str]:
        return [p.text for p in self.parts if isinstance(p, Text)]

    @property
    def blocks(self) -> list[dict[str, Any]]:
        return self.source.blocks

    @property
    def ended(self) -> str:
        """Why the stream stopped (the stop reason, ``cancelled``, ``error``)."""
        return self.source.ended

    @property
    def model(self) -> str | None:
        """Which model wrote it (its thinking signatures are that model's)."""
        return self.source.model


class ToolCall(DeferredModel):
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


class CallStarted(DeferredModel):
    """A call is about to run; ``read_only``: its tool said it could change nothing."""

    kind: Literal[ItemKind.CALL_STARTED] = ItemKind.CALL_STARTED
    tool_use_id: str
    name: str
    operation_id: str
    read_only: bool = False


class UnfinishedCall(DeferredModel):
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


class UserCommand(DeferredModel):
    kind: Literal[ItemKind.USER_COMMAND] = ItemKind.USER_COMMAND
    id: str
    command: str
    state: ToolState
    output: str = ""
    exit_code: int | None = None
    signal: str | None = None
    ended: str = ""
    model_texts: list[str] = Field(default_factory=list)  # what the model is told of it


class TurnEnded(DeferredModel):
    kind: Literal[ItemKind.TURN_ENDED] = ItemKind.TURN_ENDED
    turn_id: str
    status: TurnStatus
    detail: str = ""


class BackgroundResult(DeferredModel):
    kind: Literal[ItemKind.BACKGROUND_RESULT] = ItemKind.BACKGROUND_RESULT
    job_id: str
    description: str
    state: BackgroundState
    text: str


class Rewind(DeferredModel):
    kind: Literal[ItemKind.REWIND] = ItemKind.REWIND
    restore: RestoreWhat
    restored: list[str] = Field(default_factory=list)  # files put back
    skipped_conflicts: list[str] = Field(default_factory=list)


class Compaction(DeferredModel):
    """The model view's conversation before this point is a summary from here on."""

    kind: Literal[ItemKind.COMPACTION] = ItemKind.COMPACTION
    summary: str


class ModeChanged(DeferredModel):
    kind: Literal[ItemKind.MODE_CHANGED] = ItemKind.MODE_CHANGED
    mode: PermissionMode
    previous: PermissionMode


class MemoryNote(DeferredModel):
    kind: Literal[ItemKind.MEMORY_NOTE] = ItemKind.MEMORY_NOTE
    path: str
    text: str


class HookContext(DeferredModel):
    kind: Literal[ItemKind.HOOK_CONTEXT] = ItemKind.HOOK_CONTEXT
    text: str


Item = Annotated[
    Union[UserTurn, Steer, Reply, CallStarted, ToolCall, UnfinishedCall, UserCommand,
          TurnEnded, BackgroundResult, Rewind, Compaction, ModeChanged, MemoryNote,
          HookContext],
    Field(discriminator="kind"),
]


class Conversation(DeferredModel):
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
        self.turns: dict[str, list[UserTurn]] = {}  # turn id -> its user messages
        self.blocked: set[str] = set()  # turns a UserPromptSubmit hook blocked
        self.plan = PlanTracker()  # fed the records that can change the plan
        self.workspace = ""

    def user_turn(self, record: UserMessageRecord) -> None:
        item = UserTurn(turn_id=record.turn_id, text=record.text, images=record.images,
                        blocked=record.turn_id in self.blocked, plan_before=self.plan.plan)
        self.turns.setdefault(record.turn_id, []).append(item)
        self.items.append(item)

    def hook(self, record: HookRecord) -> None:
        if (record.event is HookEvent.USER_PROMPT_SUBMIT and record.decision is HookDecision.BLOCK
                and record.turn_id is not None):
            self.blocked.add(record.turn_id)  # its prompt, before or after this record
            for item in self.turns.get(record.turn_id, []):
                item.blocked = True
        if record.context:
            self.items.append(HookContext(text=record.context))

    def reply(self, record: AssistantMessageRecord) -> Reply:
        for block in record.blocks:
            if block.get("type") == "tool_use":
                tool_use_id, name, tool_input = _tool_use(block)
                self.inputs[(record.turn_id, tool_use_id)] = (name, tool_input)
                self.open[tool_use_id] = (name, tool_input)
        return Reply(turn_id=record.turn_id, source=record)

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
            r.user_turn(record)
        case SteerRecord():
            if record.delivery is SteerDelivery.INJECTED:  # it rode in a turn (applied)
                r.items.append(Steer(text=record.text, images=record.images))
        case AssistantMessageRecord():
            r.items.append(r.reply(record))
        case ToolIntentRecord():
            r.started.add(record.tool_use_id)
            r.plan.feed(record)
            r.items.append(CallStarted(tool_use_id=record.tool_use_id, name=record.name,
                                       operation_id=record.operation_id,
                                       read_only=record.read_only))
        case ToolResultRecord():
            r.items.append(r.tool_call(record))
            r.plan.feed(record)
        case TurnEndedRecord():
            r.turn_ended(record)
            r.plan.feed(record)
        case UserCommandRecord():
            r.items.append(UserCommand(id=record.id, command=record.command, state=record.state,
                                       output=record.output, exit_code=record.exit_code,
                                       signal=record.signal, ended=record.ended,
                                       model_texts=record.model_texts()))
        case BackgroundResultRecord():
            r.items.append(BackgroundResult(job_id=record.job_id, description=record.description,
                                            state=record.state, text=record.text))
        case RewindRecord():
            r.items.append(Rewind(restore=record.restore, restored=record.restored,
                                  skipped_conflicts=record.skipped_conflicts))
        case CompactionRecord():
            r.items.append(Compaction(summary=record.summary))
        case PermissionModeRecord():
            r.items.append(ModeChanged(mode=record.mode, previous=record.previous))
        case MemoryNoteRecord():
            r.items.append(MemoryNote(path=record.path, text=record.text))
        case HookRecord():
            r.hook(record)
        case SessionStarted():
            r.workspace = r.workspace or record.workspace
        case (AgentProcessRecord() | SessionForkedRecord()
              | ModelRequestRecord() | RetryRecord() | ToolStateRecord() | PermissionRecord()
              | CheckpointRecord() | NoticeRecord() | UsageRecord() | ModelChangeRecord()
              | ConversationClearedRecord() | SessionNamedRecord()):
            pass  # not part of the conversation
        case _:
            assert_never(record)


def read_items(records: Iterable[Record]) -> Conversation:
    """The items of ``records``, taken as they are (:func:`conversation` for the
    conversation as it stands; the model view gives its own, ``scope.model_records``)."""
    r = _Reader()
    last_ts = 0.0
    for record in records:
        if record.ts > last_ts:
            last_ts = record.ts
        _read(r, record)
    # Built from typed records: validating each item again would only cost time
    # (the model view reads them before every request).
    return Conversation.model_construct(items=r.items, workspace=r.workspace, last_ts=last_ts)


def conversation(records: Iterable[Record]) -> Conversation:
    """The conversation ``records`` hold, as it stands (a rewound part left out)."""
    return read_items(effective_records(records))
