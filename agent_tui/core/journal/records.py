"""The journal's records: one pydantic model per kind of thing that happened.

Each record is stamped with the schema version, a monotonic sequence number and a
timestamp (the journal sets both when it appends). ``Record`` is the union of every
kind, told apart by its ``kind`` field; ``RECORD_ADAPTER`` reads one back. The states
they keep are the enums of :mod:`agent_tui.protocol.states`, whose values old journals
already hold.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made, and a -p turn makes these classes whether it uses them or not.
from enum import StrEnum
from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Field, TypeAdapter

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.protocol.ops import ImageAttachment
from agent_tui.protocol.states import (
    PermissionMode,
    BackgroundState,
    CompactionTrigger,
    Decision,
    HookDecision,
    HookEnding,
    HookEvent,
    NoticeLevel,
    RequestPurpose,
    RestoreWhat,
    SideEffects,
    SteerDelivery,
    SteerKind,
    SteerStatus,
    ToolState,
    TurnStatus,
    Verdict,
)

SCHEMA_VERSION = 1


class _Record(DeferredModel):
    v: int = SCHEMA_VERSION
    seq: int = 0
    ts: float = 0.0


class SessionStarted(_Record):
    kind: Literal["session_started"] = "session_started"
    session_id: str
    workspace: str
    provider: str
    model: str


class AgentProcessRecord(_Record):
    """An agent process opened this session; ``owner`` tags the processes it starts,
    so a resumed session can find what a crashed one left running."""

    kind: Literal["agent_process"] = "agent_process"
    owner: str
    pid: int
    workspace: str = ""  # again here: the session is found even if its first line is lost


class ForkReason(StrEnum):
    """Why a session began as a copy of another."""

    OPEN_ELSEWHERE = "open_elsewhere"  # resumed while another agent process had it open
    ASKED = "asked"  # --fork-session


class SessionForkedRecord(_Record):
    """The records before this one are a copy of session ``source``'s journal, up to
    its record ``source_seq``; from here on this session goes its own way."""

    kind: Literal["session_forked"] = "session_forked"
    source: str
    source_seq: int
    reason: ForkReason
    holder_pid: int | None = None  # the process that had the source open


class UserMessageRecord(_Record):
    kind: Literal["user_message"] = "user_message"
    turn_id: str
    text: str
    # Sent with the text, bytes and all: a resumed session sends the same images.
    images: list[ImageAttachment] = Field(default_factory=list)


class ModelRequestRecord(_Record):
    """A request is about to be sent: which attempt, how long the model view is."""

    kind: Literal["model_request"] = "model_request"
    turn_id: str
    attempt: int
    messages: int
    model: str


class RetryRecord(_Record):
    kind: Literal["retry"] = "retry"
    turn_id: str
    attempt: int
    delay: float
    reason: str


class AssistantMessageRecord(_Record):
    """What the model said in one response: complete blocks only.

    ``ended`` says why the stream stopped (the model's stop reason, or
    ``cancelled`` / ``error``); ``incomplete_tool_uses`` lists calls whose
    arguments never finished arriving (never run, never shown to the model).
    """

    kind: Literal["assistant_message"] = "assistant_message"
    turn_id: str
    blocks: list[dict[str, Any]]
    ended: str
    incomplete_tool_uses: list[dict[str, Any]] = Field(default_factory=list)
    # Thinking cut off before its signature arrived: kept here, never sent back.
    incomplete_thinking: list[dict[str, Any]] = Field(default_factory=list)
    model: str | None = None  # which model wrote it (its thinking signatures are that model's)


class UsageRecord(_Record):
    """One model request's usage, exactly as the API reported it (an interrupted
    request: what ``message_start`` said and the output so far)."""

    kind: Literal["usage"] = "usage"
    turn_id: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    web_search_requests: int = 0  # usage.server_tool_use: searches, billed per use
    interrupted: bool = False
    purpose: RequestPurpose = RequestPurpose.TURN
    cost_usd: float | None = None
    estimated: bool = False  # input_tokens is an estimate: cut before the server said


class CompactionRecord(_Record):
    """The conversation before ``kept_from_seq`` is replaced, in the model view, by
    ``summary``; the records themselves stay in the journal."""

    kind: Literal["compaction"] = "compaction"
    compaction_id: str
    summary: str
    kept_from_seq: int  # the first record kept verbatim
    replaced_through_seq: int  # the last record the summary stands for
    tokens_before: int = 0
    tokens_after: int = 0
    trigger: CompactionTrigger = CompactionTrigger.AUTO
    focus: str = ""


class MemoryNoteRecord(_Record):
    """A subfolder's own memory file joined the conversation (as a note)."""

    kind: Literal["memory_note"] = "memory_note"
    path: str
    text: str


class PermissionModeRecord(_Record):
    """From here on calls are decided by this permission mode (the model is told)."""

    kind: Literal["permission_mode"] = "permission_mode"
    mode: PermissionMode
    previous: PermissionMode


class ModelChangeRecord(_Record):
    """From here on requests use this model and thinking setting."""

    kind: Literal["model_change"] = "model_change"
    model: str
    thinking: str = ""


class UserCommandRecord(_Record):
    """Bash mode: a command the user ran (``!cmd``) and how it ended. The model is told
    with the next user message, in Claude Code's shape (``model_texts``)."""

    kind: Literal["user_command"] = "user_command"
    id: str
    command: str
    state: ToolState
    output: str = ""  # stdout and stderr merged, as the bash tool gives them
    exit_code: int | None = None
    signal: str | None = None
    ended: str = ""  # how it ended when not by itself with exit code 0 ("" then)

    def model_texts(self) -> list[str]:
        """``<bash-input>``, then ``<bash-stdout>`` and ``<bash-stderr>`` (this one says
        how it ended, when not with exit code 0: the output is merged in stdout)."""
        return [f"<bash-input>{self.command}</bash-input>",
                f"<bash-stdout>{self.output}</bash-stdout><bash-stderr>{self.ended}</bash-stderr>"]


class SessionNamedRecord(_Record):
    """``/rename``: the session's name from here on (the last one counts)."""

    kind: Literal["session_named"] = "session_named"
    name: str


class ConversationClearedRecord(_Record):
    """``/clear``: the model view starts afresh here; what came before stays here."""

    kind: Literal["conversation_cleared"] = "conversation_cleared"


class ToolIntentRecord(_Record):
    kind: Literal["tool_intent"] = "tool_intent"
    turn_id: str
    tool_use_id: str
    name: str
    input: dict[str, Any]
    operation_id: str
    # The call could change nothing (its tool said so of these arguments). An intent
    # without it (older journals) is taken as one that may have changed something.
    read_only: bool = False


class ToolStateRecord(_Record):
    kind: Literal["tool_state"] = "tool_state"
    turn_id: str
    tool_use_id: str
    state: ToolState


class ToolResultRecord(_Record):
    """A tool call's final state and the facts of how it ended."""

    kind: Literal["tool_result"] = "tool_result"
    turn_id: str
    tool_use_id: str
    name: str
    state: ToolState
    content: str
    is_error: bool = False
    side_effects: SideEffects = SideEffects.NONE
    exit_code: int | None = None
    signal: str | None = None
    ended_by: str | None = None
    residue: list[dict[str, Any]] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    note: str = ""  # the user's note with a denial, or the rule's reason
    denied_by: Literal["user", "policy", "hook"] | None = None
    blocks: list[dict[str, Any]] | None = None  # images after the text (ToolResult.blocks)


class PermissionRecord(_Record):
    """A permission decision about one tool call: who decided, and by which rule.

    The policy's ruling comes first (``decided_by`` ``rule``, ``mode``, ``session``
    or ``policy``; ``verdict`` ``ask`` when it asked the user); the user's answer
    follows as a second record (``decided_by`` ``user``).
    """

    kind: Literal["permission"] = "permission"
    turn_id: str
    tool_use_id: str
    verdict: Verdict
    decided_by: Literal["rule", "mode", "session", "policy", "user", "hook"]
    rule: str | None = None  # e.g. "deny:bash(rm:*)", "mode:accept-edits", "session:bash(ls)"
    reason: str = ""  # the policy's reason, or the note the user gave with a denial
    decision: Decision | None = None  # the user's answer


class SteerRecord(_Record):
    kind: Literal["steer"] = "steer"
    id: str
    steer_kind: SteerKind
    state: SteerStatus
    text: str
    turn_id: str | None = None
    # injected: rides after a tool batch's results; new_turn: starts a turn of its
    # own (its text is that turn's user message).
    delivery: SteerDelivery | None = None
    images: list[ImageAttachment] = Field(default_factory=list)  # kept when injected


class TurnEndedRecord(_Record):
    kind: Literal["turn_ended"] = "turn_ended"
    turn_id: str
    status: TurnStatus
    detail: str = ""


class CheckpointRecord(_Record):
    kind: Literal["checkpoint"] = "checkpoint"
    checkpoint_id: str
    turn_id: str | None = None
    label: str = ""
    scope: str = ""
    warnings: list[str] = Field(default_factory=list)


class RewindRecord(_Record):
    """A rewind. With the conversation restored, the model view goes back to before
    the checkpoint's user message; the records after it stay here (a branch)."""

    kind: Literal["rewind"] = "rewind"
    checkpoint_id: str
    restore: RestoreWhat
    undo_checkpoint_id: str | None = None
    restored: list[str] = Field(default_factory=list)
    skipped_conflicts: list[str] = Field(default_factory=list)


class BackgroundResultRecord(_Record):
    """A background job (sub-agent) ended: the model sees it on its next request."""

    kind: Literal["background_result"] = "background_result"
    job_id: str
    description: str
    state: BackgroundState
    text: str


class HookRecord(_Record):
    """One hook command's run: what ran (``command``, configured at ``source``), how it
    ended, what it decided; ``context`` is what the model is told because of it."""

    kind: Literal["hook"] = "hook"
    event: HookEvent
    command: str
    source: str
    ending: HookEnding
    decision: HookDecision = HookDecision.NONE
    turn_id: str | None = None
    tool_use_id: str | None = None
    exit_code: int | None = None
    signal: str | None = None
    duration_s: float = 0.0
    reason: str = ""
    context: str = ""


class NoticeRecord(_Record):
    kind: Literal["notice"] = "notice"
    level: NoticeLevel
    text: str


Record = Annotated[
    Union[
        SessionStarted,
        AgentProcessRecord,
        SessionForkedRecord,
        UserMessageRecord,
        ModelRequestRecord,
        RetryRecord,
        AssistantMessageRecord,
        ToolIntentRecord,
        ToolStateRecord,
        ToolResultRecord,
        PermissionRecord,
        SteerRecord,
        TurnEndedRecord,
        CheckpointRecord,
        RewindRecord,
        BackgroundResultRecord,
        HookRecord,
        NoticeRecord,
        UsageRecord,
        CompactionRecord,
        MemoryNoteRecord,
        ModelChangeRecord,
        PermissionModeRecord,
        ConversationClearedRecord,
        UserCommandRecord,
        SessionNamedRecord,
    ],
    Field(discriminator="kind"),
]
RECORD_ADAPTER: TypeAdapter[Record] = TypeAdapter(Record, config=ConfigDict(defer_build=True))
