"""The hooks port: what the core asks of the user's hooks, and the typed answers.

A hook is a command the user configured to run at a point of the agent's work
(Claude Code's format; ``hooks/`` parses the settings and runs the commands).
The core calls one async method per event, under the cancel scope of what the hook
gates, and gets a :class:`HookAnswer` back: what the hooks decided together, and the
facts of each command's run (journalled one record each, ``core/hooks/hook_points.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from agent_tui.protocol.states import HookDecision, HookEnding, HookEvent

if TYPE_CHECKING:
    from agent_tui.cancel import CancelScope


class HookRun(BaseModel):
    """One hook command's run: what ran, how it ended, what it decided."""

    command: str
    source: str  # where it is configured: "FILE:LINE"
    ending: HookEnding
    exit_code: int | None = None
    signal: str | None = None
    duration_s: float = 0.0
    decision: HookDecision = HookDecision.NONE
    reason: str = ""  # why it decided (a block's reason goes to the model, or the user)
    context: str = ""  # text it gave the model (additionalContext, or stdout where that counts)
    message: str = ""  # for the user: systemMessage, or a failed hook's stderr
    stop: str | None = None  # it asked to end the turn ("continue": false): its stopReason
    # PreToolUse: the input fields it asked to change (``updatedInput``), in our keys.
    updated_input: dict[str, Any] | None = None
    # Elicitation, ElicitationResult: the answer it gave the server (``action``, ``content``).
    reply: dict[str, Any] | None = None


class HookAnswer(BaseModel):
    """What the hooks of one event decided together.

    The strongest decision wins (block over ask over allow), with the reasons of the
    runs that decided it; ``context`` holds what every run gave the model.
    """

    runs: list[HookRun] = Field(default_factory=list)
    decision: HookDecision = HookDecision.NONE
    reason: str = ""
    context: list[str] = Field(default_factory=list)
    stop: str | None = None
    # PreToolUse: the input fields the hooks asked to change, merged in run order.
    updated_input: dict[str, Any] | None = None
    # SessionStart: variables the hooks wrote to ``CLAUDE_ENV_FILE``, for the commands
    # the agent runs in this session.
    env: dict[str, str] = Field(default_factory=dict)
    # Elicitation, ElicitationResult: the first run's answer to the server, if any.
    reply: dict[str, Any] | None = None

    @property
    def cancelled(self) -> bool:
        """A run was ended because what it gated was cancelled (Esc, shutdown)."""
        return any(run.ending is HookEnding.CANCELLED for run in self.runs)


class HookBase(BaseModel):
    """The input every hook gets on stdin (Claude Code's common fields)."""

    session_id: str
    transcript_path: str = ""
    cwd: str
    # Inside a sub-agent (its tool hooks, SubagentStart, SubagentStop): which one, as
    # Claude Code sends them; the main agent's hooks get neither key.
    agent_id: str | None = None
    agent_type: str | None = None

    def fields(self) -> dict[str, Any]:
        """The keys as a hook reads them (the agent's only inside a sub-agent)."""
        return self.model_dump(exclude_none=True)


class SettingsChange(BaseModel):
    """A settings file that changed during the session, as ``ConfigChange`` sees it."""

    source: str  # Claude Code's word: user_settings, project_settings, local_settings
    file_path: str


class HookRow(BaseModel):
    """One configured hook, for ``/hooks``."""

    event: HookEvent
    matcher: str
    command: str
    timeout_s: float
    source: str  # "FILE:LINE"


class HooksPort(Protocol):
    """The user's hooks. Each method runs the hooks configured for its event (none:
    an empty answer at once), each in its own process group under ``scope``: when
    the scope is cancelled, the hooks are ended and the answer says so.

    ``tool_name`` and ``tool_input`` are ours, as the model sent them; what the hooks
    read is Claude Code's shape of them (``Bash``, ``file_path``...), and an
    ``updatedInput`` comes back in our keys."""

    #: ``Stop`` hooks may keep the agent going at most this many times in a row.
    max_stop_continues: int

    def matching(
        self, event: HookEvent, subject: str | None = None,
        tool_input: Mapping[str, Any] | None = None,
    ) -> list[HookRow]:
        """The hooks that would run for ``event`` (``subject``: the tool's name for
        tool events, the trigger or source for the others)."""

    async def pre_tool_use(
        self, base: HookBase, scope: CancelScope, *, tool_name: str, tool_input: dict[str, Any],
        tool_use_id: str,
    ) -> HookAnswer: ...

    async def post_tool_use(
        self, base: HookBase, scope: CancelScope, *, tool_name: str, tool_input: dict[str, Any],
        tool_use_id: str, tool_response: dict[str, Any],
    ) -> HookAnswer: ...

    async def post_tool_use_failure(
        self, base: HookBase, scope: CancelScope, *, tool_name: str, tool_input: dict[str, Any],
        tool_use_id: str, tool_response: dict[str, Any],
    ) -> HookAnswer: ...

    async def user_prompt_submit(
        self, base: HookBase, scope: CancelScope, *, prompt: str
    ) -> HookAnswer: ...

    async def stop(
        self, base: HookBase, scope: CancelScope, *, stop_hook_active: bool,
        last_assistant_message: str = "",
    ) -> HookAnswer: ...

    async def session_start(
        self, base: HookBase, scope: CancelScope, *, source: str, model: str = ""
    ) -> HookAnswer:
        """Also gives the hooks ``CLAUDE_ENV_FILE``; the answer's ``env`` is what they
        wrote there."""

    async def setup(self, base: HookBase, scope: CancelScope, *, trigger: str) -> HookAnswer:
        """``Setup`` (``--init``, ``--maintenance``), matched on ``trigger``; like
        ``session_start``, it gives the hooks ``CLAUDE_ENV_FILE`` and cannot block."""

    async def pre_compact(
        self, base: HookBase, scope: CancelScope, *, trigger: str, custom_instructions: str
    ) -> HookAnswer: ...

    async def subagent_start(self, base: HookBase, scope: CancelScope) -> HookAnswer:
        """Matched on ``base.agent_type``; cannot block: the answer's ``context`` is
        for the sub-agent's first request."""

    async def subagent_stop(
        self, base: HookBase, scope: CancelScope, *, stop_hook_active: bool,
        last_assistant_message: str = "", agent_transcript_path: str = "",
    ) -> HookAnswer:
        """Matched on ``base.agent_type``; a block keeps the sub-agent working."""

    async def permission_request(
        self, base: HookBase, scope: CancelScope, *, tool_name: str, tool_input: dict[str, Any],
        tool_use_id: str,
    ) -> HookAnswer:
        """``PermissionRequest``: a call would be asked; a hook may answer for the user."""

    async def permission_denied(
        self, base: HookBase, scope: CancelScope, *, tool_name: str, tool_input: dict[str, Any],
        tool_use_id: str, reason: str,
    ) -> HookAnswer:
        """``PermissionDenied``: a rule or the mode denied a call (told, not asked)."""

    async def notification(
        self, base: HookBase, scope: CancelScope, *, message: str, title: str,
        notification_type: str,
    ) -> HookAnswer:
        """``Notification``: the user is waited for."""

    async def stop_failure(
        self, base: HookBase, scope: CancelScope, *, error: str, error_details: str,
        last_assistant_message: str,
    ) -> HookAnswer:
        """``StopFailure``: the turn ended on an API error (it cannot be blocked)."""

    async def post_compact(
        self, base: HookBase, scope: CancelScope, *, trigger: str, compact_summary: str
    ) -> HookAnswer:
        """``PostCompact``: a compaction's summary was saved."""

    async def interrupt(
        self, base: HookBase, scope: CancelScope, *, tool_calls: list[dict[str, Any]],
        processes_ended: list[dict[str, Any]], processes_left: list[dict[str, Any]],
    ) -> HookAnswer:
        """``Interrupt`` (agent-tui's own): after Esc, each tool call's end state."""

    async def session_end(self, base: HookBase, scope: CancelScope, *, reason: str) -> HookAnswer:
        """Matched on ``reason``; cannot block: the session ends whatever it answers."""

    async def pre_skill_shell_command(
        self, base: HookBase, scope: CancelScope, *, command: str, command_name: str,
        step_id: str, invoked_by: str,
    ) -> HookAnswer:
        """``PreSkillShellCommand``: a command's ``!`` line before it runs (matched on
        ``Bash``); a block, ask or changed input keeps it from running."""

    async def post_tool_batch(
        self, base: HookBase, scope: CancelScope, *, calls: list[dict[str, Any]]
    ) -> HookAnswer:
        """``PostToolBatch``: the calls of one reply ended (each ``name``, ``input``,
        ``id``, ``response`` in ours); a block ends the turn."""

    async def model_switch(
        self, base: HookBase, scope: CancelScope, *, event: HookEvent, family: str | None,
        fields: dict[str, Any],
    ) -> HookAnswer:
        """``PreModelSwitch`` (a block refuses the switch) or ``PostModelSwitch``, matched
        on the new model's family."""

    async def instructions_loaded(
        self, base: HookBase, scope: CancelScope, *, fields: dict[str, Any]
    ) -> HookAnswer:
        """``InstructionsLoaded``, matched on ``load_reason``; it cannot block."""

    async def user_prompt_expansion(
        self, base: HookBase, scope: CancelScope, *, fields: dict[str, Any]
    ) -> HookAnswer:
        """``UserPromptExpansion``, matched on ``command_name``: a block keeps the
        command's prompt from being sent; context rides with it."""

    async def directory_added(
        self, base: HookBase, scope: CancelScope, *, directory: str, source: str
    ) -> HookAnswer:
        """``DirectoryAdded``, matched on ``source``; it cannot block."""

    def changed_settings(self) -> list[SettingsChange]:
        """The settings files changed since the last look (a stat each), not applied yet."""

    def apply_settings(self, blocked: Mapping[str, str]) -> None:
        """Put the changed files' hooks in force, but those of ``blocked`` (file path:
        the hook's reason), which keep their old hooks; one notice says what was done."""

    async def config_change(
        self, base: HookBase, scope: CancelScope, *, change: SettingsChange
    ) -> HookAnswer:
        """``ConfigChange``, matched on ``change.source``: a block keeps the old settings."""

    async def task_created(
        self, base: HookBase, scope: CancelScope, *, task_id: str, task_subject: str,
        task_description: str = "",
    ) -> HookAnswer:
        """``TaskCreated``: a plan item is added; a block refuses the plan."""

    async def task_completed(
        self, base: HookBase, scope: CancelScope, *, task_id: str, task_subject: str,
        task_description: str = "",
    ) -> HookAnswer:
        """``TaskCompleted``: a plan item is marked completed; a block refuses the plan."""

    async def elicitation(
        self, base: HookBase, scope: CancelScope, *, server: str, fields: dict[str, Any]
    ) -> HookAnswer:
        """``Elicitation``, matched on ``server``: a block declines, a ``reply`` answers;
        neither: the user is asked."""

    async def elicitation_result(
        self, base: HookBase, scope: CancelScope, *, server: str, fields: dict[str, Any]
    ) -> HookAnswer:
        """``ElicitationResult``: a block declines, a ``reply`` replaces the answer."""

    def rows(self) -> list[HookRow]:
        """The hooks in force and where each came from."""
