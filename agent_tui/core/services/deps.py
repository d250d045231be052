"""What a session's turns stand on: configuration, the ports to the layers around the
core, and the session's shared services, in one frozen, typed bundle.

The wiring (``cli/wiring.py``, tests, the bench) builds a :class:`SessionDeps` once; the
session, its turns, rewind and sub-agents receive it and never change it. A
sub-agent's loop gets its own copy (``dataclasses.replace``), with its own journal,
queue and depth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_tui.core.calls.approvals import Approvals
from agent_tui.core.journal.claude_transcript import ClaudeTranscript
from agent_tui.core.usage.budget import RequestBudget
from agent_tui.core.services.hooks_port import HooksPort
from agent_tui.core.journal.journal import Journal
from agent_tui.core.usage.limits import ModelLimits
from agent_tui.core.calls.permission import PermissionPolicy
from agent_tui.core.services.queue import MessageQueue
from agent_tui.core.services.stopping import Stopping
from agent_tui.core.usage.thinking import ThinkingSetting
from agent_tui.core.calls.tool import SubAgentSpawner, ToolSet
from agent_tui.core.usage.usage import UsageMeter
from agent_tui.protocol import Event
from agent_tui.providers import base as model

if TYPE_CHECKING:
    from agent_tui.cancel import CancelScope


@dataclass
class AgentConfig:
    workspace: Path
    model: str
    session_id: str = "session"
    # Empty: the session builds the coding-agent prompt once (core/memory/prompt.py), from
    # the two below and the memory files.
    system: str = ""
    system_replaced_by: str | None = None  # --system-prompt: instead of the default one
    system_appended: str = ""  # --append-system-prompt
    output_style: str | None = None  # outputStyle (core/memory/output_styles.py); None: Default
    max_tokens: int = 8192
    max_retries: int = 4
    retry_base: float = 1.0
    retry_cap: float = 30.0
    # Phase 2 of a cancel: how long a running tool may take to stop and report
    # (a command that ignores SIGTERM needs its grace, the KILL and a pipe drain).
    cleanup_budget: float = 6.0
    # After Esc, the turn ends without a call still stopping this long after it was told
    # (the TUI: the prompt is back at once; core/services/stopping.py). None: the turn
    # waits for every call's end (ACP and print mode report them with the turn's end).
    stop_settle_s: float | None = None
    # Extra environment for the commands tools run (the settings files' ``env``).
    env: dict[str, str] = field(default_factory=dict)
    # How many levels of sub-agents may be started under the main agent.
    max_subagent_depth: int = 1
    thinking: ThinkingSetting = field(default_factory=ThinkingSetting)
    effort: str | None = None  # output_config.effort, where the model offers it
    # Mark prompt-cache breakpoints (core/usage/cache.py); off for an endpoint without caching.
    prompt_cache: bool = True
    # Folders added to the workspace (``--add-dir``, ``/add-dir``, the user's settings'
    # ``permissions.additionalDirectories``), absolute and resolved. The one list of the
    # session: ``/add-dir`` appends to it, sub-agents' copies share it, the permission
    # policy reads it; each tool call gets it as ``ToolContext.added_dirs``.
    added_dirs: list[Path] = field(default_factory=list)
    # ``Setup`` hooks to run before ``SessionStart``: "init" (--init, --init-only) or
    # "maintenance" (--maintenance); None: none.
    setup_trigger: str | None = None
    # ``Notification`` idle_prompt after this many seconds of the user not writing once
    # the work ended (the TUI: 60, as Claude Code); None: never (print mode, protocols).
    idle_notify_s: float | None = None


class CheckpointsPort(Protocol):
    """The checkpoint layer as the core uses it (``agent_tui.checkpoints.Checkpoints``)."""

    def take(self, label: str, checkpoint_id: str | None = None) -> Any:
        """A checkpoint at a user message (returns its info)."""

    def list(self) -> list[Any]: ...

    def plan(self, checkpoint_id: str, extra_not_undoable: Iterable[str] = ()) -> Any:
        """What a rewind would change (nothing is changed)."""

    def restore(
        self,
        checkpoint_id: str,
        *,
        overwrite_conflicts: bool = False,
        extra_not_undoable: Iterable[str] = (),
    ) -> Any: ...

    def command_started(self) -> str | None:
        """Snapshot before a command that may change files without reporting them."""

    def command_finished(self, token: str | None) -> None:
        """Snapshot after it: what changed in between counts as the agent's."""


class SubAgentsPort(Protocol):
    """The session's sub-agents (``core/subagents/subagent.py``), as a turn hands them to a call."""

    # Where a background sub-agent's news goes (the session wraps it in its guard).
    emit: Callable[[Event], None]

    def for_call(
        self, parent: SessionDeps, tool_use_id: str, scope: CancelScope
    ) -> SubAgentSpawner: ...

    def cancel_call(self, tool_use_id: str) -> bool: ...


@dataclass(frozen=True)
class AgentIdentity:
    """Which sub-agent a loop is, as its hooks are told (``agent_id``, ``agent_type``);
    ``transcript`` is its own conversation in Claude Code's shape
    (``agent_transcript_path``)."""

    id: str
    type: str
    transcript: ClaudeTranscript | None = None


@dataclass(frozen=True)
class SessionDeps:
    config: AgentConfig
    provider: model.Provider
    tools: ToolSet
    policy: PermissionPolicy
    journal: Journal
    emit: Callable[[Event], None]
    queue: MessageQueue = field(default_factory=MessageQueue)
    approvals: Approvals = field(default_factory=Approvals)
    checkpoints: CheckpointsPort | None = None  # None: a session without rewind
    subagents: SubAgentsPort | None = None
    usage: UsageMeter = field(default_factory=UsageMeter)
    limits: ModelLimits = field(default_factory=ModelLimits)
    hooks: HooksPort | None = None  # None: no hooks configured
    # The conversation in Claude Code's JSONL shape, for hooks (``transcript_path``).
    transcript: ClaudeTranscript | None = None
    depth: int = 0  # 0 for the main agent, 1 for its sub-agents, ...
    agent: AgentIdentity | None = None  # None: the main agent
    budget: RequestBudget = field(default_factory=RequestBudget)  # the run's model requests
    stopping: Stopping = field(default_factory=Stopping)  # calls that outlived their turn
