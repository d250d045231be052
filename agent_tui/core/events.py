"""Ops in, Events out: the only language between the core and its front ends.

Front ends (TUI, print mode, ACP, tests) put Ops into the session and render the
Events it emits. Each Op's docstring names the Events that answer it. Every model
here serialises to one JSON object with a ``type`` field: the stream-json output of
print mode is exactly ``event.model_dump_json()``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, TypeAdapter

from agent_tui.core.permission import Decision
from agent_tui.core.state import SideEffects, ToolState, TurnState

# --------------------------------------------------------------------------- Ops


class UserMessage(BaseModel):
    """Starts a turn when idle; steers the running turn otherwise.

    Answered by ``turn_started`` (idle) or ``steer_state`` queued -> applied | returned.
    """

    type: Literal["user_message"] = "user_message"
    text: str


class FollowUp(BaseModel):
    """Runs as a new turn after the agent stops on its own.

    Answered by ``steer_state`` (kind follow_up) queued -> applied | returned.
    """

    type: Literal["follow_up"] = "follow_up"
    text: str


class Interrupt(BaseModel):
    """Esc: cancel the running turn. Answered by ``turn_state`` cancelling, then
    ``turn_ended`` cancelled (or nothing when idle)."""

    type: Literal["interrupt"] = "interrupt"


class SendNow(BaseModel):
    """Deliver a message at once: running commands that can move to the background do
    so (they keep running), and the message is applied right after. When idle, starts
    a turn. Answered by ``steer_state`` queued -> applied and ``tool_state``."""

    type: Literal["send_now"] = "send_now"
    text: str


class Decide(BaseModel):
    """The user's answer to a ``permission_requested``. Answered by ``tool_state``."""

    type: Literal["decide"] = "decide"
    tool_use_id: str
    decision: Decision
    note: str = ""


class RestoreWhat(StrEnum):
    BOTH = "both"  # code and conversation
    CONVERSATION = "conversation"
    CODE = "code"


class ListRewindPoints(BaseModel):
    """Ask for the points a rewind can go back to. Answered by ``rewind_points``."""

    type: Literal["list_rewind_points"] = "list_rewind_points"


class PlanRewind(BaseModel):
    """Preview a rewind (nothing changes). Answered by ``rewind_plan``."""

    type: Literal["plan_rewind"] = "plan_rewind"
    checkpoint_id: str


class Rewind(BaseModel):
    """Go back to a checkpoint (only while no turn runs). Answered by ``rewound``
    (or a ``notice`` saying why not)."""

    type: Literal["rewind"] = "rewind"
    checkpoint_id: str
    restore: RestoreWhat = RestoreWhat.BOTH
    overwrite_conflicts: bool = False


class CancelTool(BaseModel):
    """Stop one running tool call (or sub-agent) without ending the turn. Answered by
    its ``tool_state``, or a ``notice`` when no such call runs."""

    type: Literal["cancel_tool"] = "cancel_tool"
    tool_use_id: str


class StopBackground(BaseModel):
    """Stop one background job (a command or a sub-agent) by id. Answered by
    ``background_job`` when it has ended, or a ``notice`` if there is no such job."""

    type: Literal["stop_background"] = "stop_background"
    id: str


class Shutdown(BaseModel):
    """Stop the session: interrupt what runs, end background work, then stop.
    Answered by ``session_closed``."""

    type: Literal["shutdown"] = "shutdown"


Op = Annotated[
    Union[
        UserMessage,
        FollowUp,
        SendNow,
        Interrupt,
        Decide,
        ListRewindPoints,
        PlanRewind,
        Rewind,
        CancelTool,
        StopBackground,
        Shutdown,
    ],
    Field(discriminator="type"),
]
OP_ADAPTER: TypeAdapter[Op] = TypeAdapter(Op)


# ------------------------------------------------------------------------ Events


class TurnStarted(BaseModel):
    type: Literal["turn_started"] = "turn_started"
    turn_id: str
    text: str


class TurnStateChanged(BaseModel):
    """The turn's state, with what is true now (e.g. "stopping: 1 tool running")."""

    type: Literal["turn_state"] = "turn_state"
    turn_id: str
    state: TurnState
    detail: str = ""


class TextDelta(BaseModel):
    type: Literal["text_delta"] = "text_delta"
    turn_id: str
    text: str
    parent_tool_use_id: str | None = None


class ToolStateChanged(BaseModel):
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


class ToolOutput(BaseModel):
    """Output a running tool produced (coalesced by the tool)."""

    type: Literal["tool_output"] = "tool_output"
    turn_id: str
    tool_use_id: str
    text: str
    parent_tool_use_id: str | None = None


class PermissionRequested(BaseModel):
    type: Literal["permission_requested"] = "permission_requested"
    turn_id: str
    tool_use_id: str
    name: str
    summary: str
    input: dict[str, Any]
    reason: str = ""
    parent_tool_use_id: str | None = None


class SteerKind(StrEnum):
    STEER = "steer"
    FOLLOW_UP = "follow_up"


class SteerStatus(StrEnum):
    QUEUED = "queued"
    APPLIED = "applied"
    RETURNED = "returned"


class SteerState(BaseModel):
    type: Literal["steer_state"] = "steer_state"
    id: str
    state: SteerStatus
    kind: SteerKind = SteerKind.STEER
    text: str = ""


class RetryScheduled(BaseModel):
    """The model call failed and will be tried again after ``delay`` seconds."""

    type: Literal["retry_scheduled"] = "retry_scheduled"
    turn_id: str
    attempt: int
    delay: float
    reason: str


class NoticeLevel(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class Notice(BaseModel):
    type: Literal["notice"] = "notice"
    level: NoticeLevel
    text: str


class TurnEnded(BaseModel):
    type: Literal["turn_ended"] = "turn_ended"
    turn_id: str
    status: Literal["completed", "cancelled", "failed"]
    detail: str = ""


class RewindPoint(BaseModel):
    checkpoint_id: str
    label: str  # the user message (or what the checkpoint was taken before)
    time: float
    turn_id: str | None = None  # None for checkpoints taken before a rewind
    warnings: list[str] = Field(default_factory=list)


class RewindPoints(BaseModel):
    type: Literal["rewind_points"] = "rewind_points"
    points: list[RewindPoint]  # newest first
    available: bool = True  # False when this session keeps no checkpoints


class FileChangeInfo(BaseModel):
    path: str
    kind: str  # what the rewind does to the file: added | modified | deleted
    lines_added: int | None = None
    lines_removed: int | None = None
    conflict: bool = False


class RewindPlanned(BaseModel):
    type: Literal["rewind_plan"] = "rewind_plan"
    checkpoint_id: str
    label: str
    changes: list[FileChangeInfo]
    not_undoable: list[str]
    warnings: list[str] = Field(default_factory=list)


class Rewound(BaseModel):
    type: Literal["rewound"] = "rewound"
    checkpoint_id: str
    restore: RestoreWhat
    text: str = ""  # the user message rewound to, for the input box
    restored: list[FileChangeInfo] = Field(default_factory=list)
    skipped_conflicts: list[FileChangeInfo] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    not_undoable: list[str] = Field(default_factory=list)
    undo_checkpoint_id: str | None = None


class BackgroundJobChanged(BaseModel):
    """A background job (Esc does not stop these) started, changed or ended."""

    type: Literal["background_job"] = "background_job"
    id: str
    kind: Literal["shell", "agent"]
    description: str
    state: str  # running | exited | killed | completed | failed | cancelled
    detail: str = ""


class SessionClosed(BaseModel):
    type: Literal["session_closed"] = "session_closed"


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
    TurnEnded,
    RewindPoints,
    RewindPlanned,
    Rewound,
    BackgroundJobChanged,
    SessionClosed,
]
