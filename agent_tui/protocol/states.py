"""Every state the core reports or the journal keeps, as enums.

Front ends compare these, never strings. The values are the words of docs/architecture.md and
of the stream-json output, so journals written before an enum existed still load.
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


class PermissionMode(StrEnum):
    """Who decides what runs: ``ask`` asks for anything that writes or runs,
    ``accept-edits`` also allows file edits inside the workspace, ``plan`` is read-only
    (enforced: writes are refused, commands run in a read-only sandbox), ``auto``
    allows all, ``dont-ask`` never asks: what ``ask`` would ask is refused (only what a
    rule allows runs). Claude Code's words for them are :data:`CLAUDE_MODE_NAMES`."""

    ASK = "ask"
    ACCEPT_EDITS = "accept-edits"
    PLAN = "plan"
    AUTO = "auto"
    DONT_ASK = "dont-ask"

    @property
    def claude_name(self) -> str:
        """Claude Code's word for this mode (hook payloads, notices): the one place a
        mode is rendered in its words."""
        return _CLAUDE_WORD[self]

    @classmethod
    def parse(cls, text: str) -> PermissionMode:
        """Ours or Claude Code's word; raises ValueError naming the choices."""
        try:
            return CLAUDE_MODE_NAMES.get(text) or cls(text)
        except ValueError:
            raise ValueError(f"unknown permission mode {text!r} (use one of "
                             f"{mode_choices()})") from None


#: Claude Code's permission mode words -> ours: the one table every reader of a mode
#: word uses (the command line, settings files, ACP, hook payloads).
CLAUDE_MODE_NAMES: dict[str, PermissionMode] = {
    "default": PermissionMode.ASK,
    "acceptEdits": PermissionMode.ACCEPT_EDITS,
    "plan": PermissionMode.PLAN,
    "bypassPermissions": PermissionMode.AUTO,
    "dontAsk": PermissionMode.DONT_ASK,
}
_CLAUDE_WORD = {mode: word for word, mode in CLAUDE_MODE_NAMES.items()}


def mode_choices() -> str:
    """Every word a mode may be given by: ours, then Claude Code's (for messages)."""
    words = [*(m.value for m in PermissionMode), *CLAUDE_MODE_NAMES]
    return ", ".join(dict.fromkeys(words))


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


class TodoStatus(StrEnum):
    """A plan item's status, as the model writes it (``todo_write``)."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


class TodoPriority(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class PlanItemState(StrEnum):
    """How a plan item is shown: its status, or ``interrupted`` when it was in
    progress as a turn was interrupted (it is not done, and nobody works on it)."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    INTERRUPTED = "interrupted"


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
    MODEL_REFUSED = "model_refused"  # a SetModel named no model the provider has: unchanged
    CONTAINMENT = "containment"
    TOOLS_CHANGED = "tools_changed"  # an MCP server's tools changed (the prompt cache rebuilds)
    SESSION_FORKED = "session_forked"  # resumed while open elsewhere, or --fork-session


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
    WEB_SEARCH = "web_search"  # a web_search call's own request (the server-side tool)
    HOOK = "hook"  # a prompt hook's request (hooks/prompt_hook.py)


class HookEvent(StrEnum):
    """When a hook runs (Claude Code's event names, as written in settings files)."""

    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    POST_TOOL_USE_FAILURE = "PostToolUseFailure"  # a call that failed by itself
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    STOP = "Stop"
    SESSION_START = "SessionStart"
    SETUP = "Setup"  # --init / --maintenance: once, before SessionStart
    PRE_COMPACT = "PreCompact"
    SUBAGENT_START = "SubagentStart"
    SUBAGENT_STOP = "SubagentStop"
    SESSION_END = "SessionEnd"
    STOP_FAILURE = "StopFailure"  # the turn ended on an API error
    POST_COMPACT = "PostCompact"  # a compaction was saved
    PERMISSION_REQUEST = "PermissionRequest"  # a call would be asked: a hook may answer
    PERMISSION_DENIED = "PermissionDenied"  # a rule or the mode denied a call
    NOTIFICATION = "Notification"  # the user is waited for (a permission prompt)
    CONFIG_CHANGE = "ConfigChange"  # a settings file changed: before its reload applies
    TASK_CREATED = "TaskCreated"  # a plan item is added (todo_write)
    TASK_COMPLETED = "TaskCompleted"  # a plan item is marked completed (todo_write)
    ELICITATION = "Elicitation"  # an MCP server asks the user: a hook may answer first
    ELICITATION_RESULT = "ElicitationResult"  # the answer, before it goes to the server
    PRE_SKILL_SHELL_COMMAND = "PreSkillShellCommand"  # a command's ``!`` line, before it runs
    POST_TOOL_BATCH = "PostToolBatch"  # the calls of one model reply have all ended
    USER_PROMPT_EXPANSION = "UserPromptExpansion"  # a custom command became its prompt
    PRE_MODEL_SWITCH = "PreModelSwitch"  # /model asks for another model: a hook may refuse it
    POST_MODEL_SWITCH = "PostModelSwitch"  # the session's model changed
    INSTRUCTIONS_LOADED = "InstructionsLoaded"  # a CLAUDE.md or memory file was read
    DIRECTORY_ADDED = "DirectoryAdded"  # /add-dir added a folder mid-session
    # agent-tui's own: after Esc, how each tool call ended and which processes were ended
    INTERRUPT = "Interrupt"


class SessionEndReason(StrEnum):
    """Why the session ends, as a ``SessionEnd`` hook reads it (Claude Code's words)."""

    CLEAR = "clear"  # /clear: a new conversation begins
    LOGOUT = "logout"
    PROMPT_INPUT_EXIT = "prompt_input_exit"  # the user quit the TUI
    OTHER = "other"  # the end of a print-mode run, an ACP session's end, ...


class HookDecision(StrEnum):
    """What a hook decided. ``block`` means: deny the call, block the prompt or the
    compaction, or (for ``Stop``) do not stop yet."""

    NONE = "none"  # no opinion: things go on as without the hook
    ALLOW = "allow"  # PreToolUse: no need to ask the user
    ASK = "ask"  # PreToolUse: ask the user even where the settings allow
    BLOCK = "block"


class HookEnding(StrEnum):
    """How one hook command ended."""

    EXITED = "exited"  # it ended by itself (its exit code says how)
    TIMED_OUT = "timed_out"  # killed at its timeout
    CANCELLED = "cancelled"  # killed because what it gated was cancelled (Esc, shutdown)
    NOT_STARTED = "not_started"  # it could not be started


class HookRunState(StrEnum):
    RUNNING = "running"
    ENDED = "ended"
