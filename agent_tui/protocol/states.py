"""Every state the core reports or the journal keeps, as enums.

Front ends compare these, never strings. The values are the words of DESIGN.md and of
the stream-json output, so journals written before an enum existed still load.
"""

from __future__ import annotations

from enum import StrEnum


class TurnState(StrEnum):
    RUNNING = "running"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"
    COMPLETED = "completed"
    FAILED = "failed"


class TurnStatus(StrEnum):
    """How a turn ended (``turn_ended.status``)."""

    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"


class ToolState(StrEnum):
    STREAMING = "streaming"
    QUEUED = "queued"
    AWAITING_APPROVAL = "awaiting_approval"
    DENIED = "denied"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED_BEFORE_START = "cancelled_before_start"
    CANCELLED_WHILE_RUNNING = "cancelled_while_running"
    UNKNOWN = "unknown"


class SideEffects(StrEnum):
    NONE = "none"
    VERIFIED = "verified"
    UNVERIFIED = "unverified"


class Verdict(StrEnum):
    """What the permission policy says of a call."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


class Decision(StrEnum):
    """The user's answer to a permission request."""

    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"


class SteerKind(StrEnum):
    STEER = "steer"
    FOLLOW_UP = "follow_up"


class SteerStatus(StrEnum):
    QUEUED = "queued"
    APPLIED = "applied"
    RETURNED = "returned"
    EDITED = "edited"  # the user changed a queued item's text
    REMOVED = "removed"  # the user took a queued item back


class SteerDelivery(StrEnum):
    """How an applied steer reached the model."""

    INJECTED = "injected"  # after a batch's tool results, inside the running turn
    NEW_TURN = "new_turn"  # as the message of the next turn


class RestoreWhat(StrEnum):
    BOTH = "both"  # code and conversation
    CONVERSATION = "conversation"
    CODE = "code"


class NoticeLevel(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class NoticeCode(StrEnum):
    """What a notice is about, for a front end that reacts to it (never its text)."""

    GENERAL = "general"
    JOURNAL_WRITE_FAILED = "journal_write_failed"
    JOURNAL_WRITE_RECOVERED = "journal_write_recovered"
    MODEL_SWITCHED = "model_switched"
    CONTAINMENT = "containment"
    TOOLS_CHANGED = "tools_changed"  # an MCP server's tools changed (the prompt cache rebuilds)


class BackgroundKind(StrEnum):
    SHELL = "shell"
    AGENT = "agent"


class BackgroundState(StrEnum):
    RUNNING = "running"
    EXITED = "exited"
    KILLED = "killed"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class CompactionState(StrEnum):
    STARTED = "started"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"


class CompactionTrigger(StrEnum):
    AUTO = "auto"  # the last request's usage passed the threshold
    OVERFLOW = "overflow"  # the API answered "prompt is too long"
    MANUAL = "manual"  # /compact or the stream-json op


class RequestPurpose(StrEnum):
    """Why a model request was sent (``usage.purpose``)."""

    TURN = "turn"
    COMPACTION = "compaction"
