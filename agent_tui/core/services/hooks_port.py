"""The hooks port: what the core asks of the user's hooks, and the typed answers.

A hook is a command the user configured to run at a point of the agent's work
(Claude Code's format; ``hooks/`` parses the settings and runs the commands).
The core calls :meth:`HooksPort.fire` with the event and its fields, under the cancel
scope of what the hook gates, and gets a :class:`HookAnswer` back: what the hooks decided together, and the
facts of each command's run (journalled one record each, ``core/hooks/hook_points.py``).
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import Field

from agent_tui.cancel import CancelScope
from agent_tui.protocol.model_base import DeferredModel
from agent_tui.protocol.states import HookDecision, HookEnding, HookEvent


class HookRun(DeferredModel):
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


class HookAnswer(DeferredModel):
    """What the hooks of one event decided together.

    The strongest decision wins (block over ask over allow), with the reasons of the
    runs that decided it; ``context`` holds what every run gave the model.
    """

    runs: list[HookRun] = Field(default_factory=list)
    decision: HookDecision = HookDecision.NONE
    reason: str = ""
    context: list[str] = Field(default_factory=list)
    stop: str | None = None
    # The event's ``"continue": false`` ends the turn after the tool batch (its row says).
    ends_turn: bool = False
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


class HookBase(DeferredModel):
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


class SettingsChange(DeferredModel):
    """A settings file that changed during the session, as ``ConfigChange`` sees it."""

    source: str  # Claude Code's word: user_settings, project_settings, local_settings
    file_path: str


class HookRow(DeferredModel):
    """One configured hook, for ``/hooks``."""

    event: HookEvent
    matcher: str
    command: str
    timeout_s: float
    source: str  # "FILE:LINE"


class HooksPort(Protocol):
    """The user's hooks. :meth:`fire` runs the hooks configured for an event (none:
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

    async def fire(
        self, event: HookEvent, base: HookBase, scope: CancelScope, fields: Mapping[str, Any],
        *, subject: str | None = None, tool_input: Mapping[str, Any] | None = None,
    ) -> HookAnswer:
        """Run the hooks of ``event`` whose matcher fits ``subject`` (and whose ``if``
        fits ``tool_input``). ``fields``: the event's own stdin fields, in ours (its row
        in ``hooks/events.py`` says which, and how they are put in Claude Code's shapes:
        a tool's ``tool_name``, ``tool_input`` and ``tool_response`` as the model and
        the tool gave them). What each event's answer can decide is its row's too:
        ``updated_input`` (in our keys), ``env`` (from ``CLAUDE_ENV_FILE``), ``reply``."""

    def changed_settings(self) -> list[SettingsChange]:
        """The settings files changed since the last look (a stat each), not applied yet."""

    def apply_settings(self, blocked: Mapping[str, str]) -> None:
        """Put the changed files' hooks in force, but those of ``blocked`` (file path:
        the hook's reason), which keep their old hooks; one notice says what was done."""

    def rows(self) -> list[HookRow]:
        """The hooks in force and where each came from."""
