"""Events: what the session tells its front ends.

Print mode's stream-json output is exactly ``event.model_dump_json()``, one per line.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made, and a -p turn makes these classes whether it uses them or not.
from typing import Any, Literal, Union

from pydantic import Field

from agent_tui.cancel import CancelReason
from agent_tui.protocol.model_base import DeferredModel
from agent_tui.protocol.states import (
    BackgroundKind,
    BackgroundState,
    CompactionState,
    CompactionTrigger,
    HookDecision,
    HookEvent,
    HookRunState,
    NoticeCode,
    NoticeLevel,
    PermissionMode,
    RequestPurpose,
    RestoreWhat,
    SideEffects,
    SteerKind,
    SteerStatus,
    ToolState,
    TurnState,
    TurnStatus,
)



class TurnStarted(DeferredModel):
    type: Literal["turn_started"] = "turn_started"
    turn_id: str
    text: str
    images: list[str] = Field(default_factory=list)  # the images sent with it, by path


class TurnStateChanged(DeferredModel):
    """The turn's state, with what is true now (e.g. "stopping: 1 tool running")."""

    type: Literal["turn_state"] = "turn_state"
    turn_id: str
    state: TurnState
    detail: str = ""


class TextDelta(DeferredModel):
    type: Literal["text_delta"] = "text_delta"
    turn_id: str
    text: str
    parent_tool_use_id: str | None = None


class ToolStateChanged(DeferredModel):
    """Every transition of every tool call."""

    type: Literal["tool_state"] = "tool_state"
    turn_id: str
    tool_use_id: str
    name: str
    state: ToolState
    parent_tool_use_id: str | None = None
    summary: str = ""
    input: dict[str, Any] | None = None
    detail: str = ""  # how it ended: exit code, signal, why denied, why unknown
    result: str | None = None  # what the model is told, once the call has ended
    side_effects: SideEffects | None = None
    exit_code: int | None = None
    signal: str | None = None
    residue: list[dict[str, Any]] = Field(default_factory=list)
    # What stopped a running call, if something did (send_to_background: it moved to
    # the background and runs on; its output from then on is the job's).
    ended_by: CancelReason | None = None


class ToolOutput(DeferredModel):
    """Output a running tool produced (coalesced by the tool)."""

    type: Literal["tool_output"] = "tool_output"
    turn_id: str
    tool_use_id: str
    text: str
    parent_tool_use_id: str | None = None


class PermissionRequested(DeferredModel):
    type: Literal["permission_requested"] = "permission_requested"
    turn_id: str
    tool_use_id: str
    name: str
    summary: str
    input: dict[str, Any]
    reason: str = ""
    parent_tool_use_id: str | None = None
    rule: str | None = None  # what made it ask: "ask:Bash(git push:*)", "mode:ask"


class SteerState(DeferredModel):
    type: Literal["steer_state"] = "steer_state"
    id: str
    state: SteerStatus
    kind: SteerKind = SteerKind.STEER
    text: str = ""
    images: list[str] = Field(default_factory=list)  # the images sent with it, by path


class RetryScheduled(DeferredModel):
    """The model call failed and will be tried again after ``delay`` seconds."""

    type: Literal["retry_scheduled"] = "retry_scheduled"
    turn_id: str
    attempt: int
    delay: float
    reason: str


class Notice(DeferredModel):
    type: Literal["notice"] = "notice"
    level: NoticeLevel
    text: str
    code: NoticeCode = NoticeCode.GENERAL


class HookStateChanged(DeferredModel):
    """The hooks of one event started or ended. While a ``PreToolUse`` hook runs, its
    tool call shows as "checked by hook"."""

    type: Literal["hook"] = "hook"
    event: HookEvent
    state: HookRunState
    commands: list[str]
    turn_id: str | None = None
    tool_use_id: str | None = None
    parent_tool_use_id: str | None = None
    decision: HookDecision = HookDecision.NONE  # once ended
    detail: str = ""  # once ended: the reason, or what went wrong


class TurnEnded(DeferredModel):
    type: Literal["turn_ended"] = "turn_ended"
    turn_id: str
    status: TurnStatus
    detail: str = ""


class RewindPoint(DeferredModel):
    checkpoint_id: str
    label: str  # the user message (or what the checkpoint was taken before)
    time: float
    turn_id: str | None = None  # None for checkpoints taken before a rewind
    warnings: list[str] = Field(default_factory=list)


class RewindPoints(DeferredModel):
    type: Literal["rewind_points"] = "rewind_points"
    points: list[RewindPoint]  # newest first
    available: bool = True  # False when this session keeps no checkpoints


class FileChangeInfo(DeferredModel):
    path: str
    kind: str  # what the rewind does to the file: added | modified | deleted
    lines_added: int | None = None
    lines_removed: int | None = None
    conflict: bool = False


class RewindPlanned(DeferredModel):
    type: Literal["rewind_plan"] = "rewind_plan"
    checkpoint_id: str
    label: str
    changes: list[FileChangeInfo]
    not_undoable: list[str]
    warnings: list[str] = Field(default_factory=list)


class Rewound(DeferredModel):
    type: Literal["rewound"] = "rewound"
    checkpoint_id: str
    restore: RestoreWhat
    text: str = ""  # the user message rewound to, for the input box
    restored: list[FileChangeInfo] = Field(default_factory=list)
    skipped_conflicts: list[FileChangeInfo] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    not_undoable: list[str] = Field(default_factory=list)
    undo_checkpoint_id: str | None = None


class BackgroundJobChanged(DeferredModel):
    """A background job (Esc does not stop these) started, changed or ended."""

    type: Literal["background_job"] = "background_job"
    id: str
    kind: BackgroundKind
    description: str
    state: BackgroundState
    detail: str = ""
    tool_use_id: str | None = None  # the call that started it (None: not a call's)


class SessionClosed(DeferredModel):
    type: Literal["session_closed"] = "session_closed"


class ThinkingDelta(DeferredModel):
    """Thinking text as the model streams it (shown dim, folded by default)."""

    type: Literal["thinking_delta"] = "thinking_delta"
    turn_id: str
    text: str
    parent_tool_use_id: str | None = None


class ResponseStarted(DeferredModel):
    """A model request's response began (``message_start``): its id and the usage the
    API said then (input and cache counts; output so far). Its :class:`Usage` follows
    when the request ends."""

    type: Literal["response_started"] = "response_started"
    turn_id: str
    model: str
    message_id: str = ""  # the API's (empty: the provider gives none)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    purpose: RequestPurpose = RequestPurpose.TURN
    parent_tool_use_id: str | None = None


class Usage(DeferredModel):
    """One model request's usage, exactly as the API reported it. An interrupted
    request reports what ``message_start`` said and the output so far."""

    type: Literal["usage"] = "usage"
    turn_id: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    # usage.server_tool_use.web_search_requests: searches the API ran ($10 per 1,000,
    # in cost_usd)
    web_search_requests: int = 0
    interrupted: bool = False
    purpose: RequestPurpose = RequestPurpose.TURN
    cost_usd: float | None = None  # None: the model's price is unknown
    # input_tokens is agent-tui's estimate (a request cut before the server said its
    # size: OpenAI's wire formats say it only at the end), and so is its cost
    estimated: bool = False
    context_window: int | None = None
    parent_tool_use_id: str | None = None
    # message_delta's stop reason (None: the request did not end with one)
    stop_reason: str | None = None


class Compaction(DeferredModel):
    """A compaction of the model view started or ended."""

    type: Literal["compaction"] = "compaction"
    state: CompactionState
    trigger: CompactionTrigger = CompactionTrigger.AUTO
    tokens_before: int = 0
    tokens_after: int = 0
    detail: str = ""


class ModelChanged(DeferredModel):
    """The model (or its thinking setting) requests now use."""

    type: Literal["model_changed"] = "model_changed"
    model: str
    thinking: str = ""
    context_window: int | None = None
    max_output_tokens: int | None = None


class PermissionModeChanged(DeferredModel):
    """The permission mode calls are decided by from now on (and at the session's
    start). ``previous`` is None at the start."""

    type: Literal["permission_mode_changed"] = "permission_mode_changed"
    mode: PermissionMode
    previous: PermissionMode | None = None


class ModelInfoItem(DeferredModel):
    id: str
    display_name: str = ""
    context_window: int | None = None
    max_output_tokens: int | None = None


class Models(DeferredModel):
    """The models the provider offers (answers ``list_models``)."""

    type: Literal["models"] = "models"
    models: list[ModelInfoItem]
    current: str
    error: str = ""


class ContextItem(DeferredModel):
    label: str  # system prompt, tools, memory, messages, tool output, summary
    tokens: int


class ContextReport(DeferredModel):
    """What fills the window: estimated parts, and what the last request really used."""

    type: Literal["context_report"] = "context_report"
    model: str
    window: int
    used: int  # the last request's input (cached or not), or the estimate before one
    measured: bool  # ``used`` is the API's own count
    items: list[ContextItem]
    notes: list[str] = Field(default_factory=list)  # e.g. how commands are contained


class ConversationCleared(DeferredModel):
    """A new conversation started; what came before stays in the journal."""

    type: Literal["conversation_cleared"] = "conversation_cleared"


Event = Union[
    TurnStarted,
    TurnStateChanged,
    TextDelta,
    ToolStateChanged,
    ToolOutput,
    PermissionRequested,
    SteerState,
    RetryScheduled,
    Notice,
    HookStateChanged,
    TurnEnded,
    RewindPoints,
    RewindPlanned,
    Rewound,
    BackgroundJobChanged,
    SessionClosed,
    ThinkingDelta,
    ResponseStarted,
    Usage,
    Compaction,
    ModelChanged,
    PermissionModeChanged,
    Models,
    ConversationCleared,
    ContextReport,
]
