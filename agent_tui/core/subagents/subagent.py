"""Sub-agents: nested agent loops that a tool call (``task``) hands work to.

A foreground sub-agent runs its own turn under the scope of the tool call that
started it: Esc on the parent turn reaches it and everything it started, with the
same two phases and honest states. A background sub-agent runs under a scope of
its own (not under any turn): Esc does not stop it; it is listed as a background
job, can be stopped by id, is stopped when the session shuts down, and its result
reaches the parent conversation on the next request.

Each sub-agent has its own id, journal branch and model view. Its events reach the
front ends with ``parent_tool_use_id`` set to the ``task`` call they belong to.

A typed sub-agent (``subagent_type``, a file of ``core/calls/agent_types.py``) runs with
its file's body as the system prompt, only the tools its file lists (never
``task``: it cannot start sub-agents of its own) and its model.

Its hooks know it by an ``agent_id`` of its own and its ``agent_type`` (the type's
name, ``general-purpose`` when none is named); its conversation is also kept in
Claude Code's transcript shape (``subagents/agent-<agent_id>.jsonl`` in the
session's folder) for them. ``SubagentStart`` hooks run before its first request.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from dataclasses import replace
from collections.abc import Callable


from agent_tui.cancel import Cancelled, CancelReason, CancelScope
from agent_tui.core.calls.agent_types import GENERAL, INHERIT, AgentType
from agent_tui.core.calls.approvals import Approvals
from agent_tui.core.journal.claude_transcript import ClaudeTranscript
from agent_tui.core.services.deps import AgentIdentity, SessionDeps
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.protocol import (
    BackgroundJobChanged,
    BackgroundKind,
    BackgroundState,
    Event,
    Notice,
    NoticeLevel,
    SideEffects,
    ToolState,
    TurnStatus,
)
from agent_tui.core.journal.journal import Journal, JournalWriteError
from agent_tui.core.services.model_control import resolve_model
from agent_tui.core.history.export import final_answer
from agent_tui.core.journal.records import BackgroundResultRecord
from agent_tui.core.services.queue import MessageQueue
from agent_tui.core.calls.state import tool_started
from agent_tui.core.calls.tool import ToolResult, ToolSet
from agent_tui.protocol.tool_names import claude_name
from agent_tui.core.turn.turn import Turn

SUBAGENT_SYSTEM = (
    "You are a sub-agent of agent-tui, given one task by the main agent. Work through "
    "tools in the user's workspace, then answer with a concise report of what you did "
    "and found: that answer is all the main agent will see."
)


class SubAgents:
    """Runs sub-agents for one session; also the registry of background ones."""

    def __init__(self, journal: Journal, emit: Callable[[Event], None]) -> None:
        # The session's journal and emit: a background sub-agent's result and job
        # state are told there, whichever loop started it.
        self.journal = journal
        self.emit = emit
        self.background_root = CancelScope("background-agents")
        self._ids = itertools.count(1)
        self._running: dict[str, asyncio.Task[ToolResult]] = {}
        self._scopes: dict[str, CancelScope] = {}
        self._descriptions: dict[str, str] = {}
        self._callers: dict[str, str | None] = {}  # job id -> the task call that started it
        self.turns: dict[str, Turn] = {}  # tool_use_id -> running child Turn

    # -- the child's wiring ---------------------------------------------------------

    def _child_deps(
        self, parent: SessionDeps, parent_tool_use_id: str, journal: Journal,
        agent: AgentType | None = None,
    ) -> SessionDeps:
        tools = parent.tools
        if agent is None:
            config = replace(parent.config, system=SUBAGENT_SYSTEM)
        else:
            config = replace(parent.config, system=agent.system)  # its model: at its start
            # the parent's tools as they are now, in their order, less what the type
            # does not list
            tools = ToolSet(t for name in parent.tools.names()
                            if agent.allows(name) and (t := parent.tools.get(name)) is not None)
            offered = parent.tools.names()
            absent = [n for n in agent.tools or ()
                      if not any(o == n or o.startswith(n + "__") for o in offered)]
            if absent:
                parent.emit(Notice(level=NoticeLevel.WARNING, text=(
                    f"sub-agent {agent.name}: " + ", ".join(claude_name(n) for n in absent)
                    + " not offered in this session; it runs without")))

        def emit(event: Event) -> None:
            parent_emit = parent.emit
            if getattr(event, "type", "") in ("turn_started", "turn_ended", "turn_state"):
                return  # the task call's own tool_state tells the parent's story
            if hasattr(event, "parent_tool_use_id") and event.parent_tool_use_id is None:
                event = event.model_copy(update={"parent_tool_use_id": parent_tool_use_id})
            parent_emit(event)

        return replace(
            parent,
            agent=self._identity(parent, journal, agent),
            config=config,
            tools=tools,
            journal=journal,
            emit=emit,
            queue=MessageQueue(),
            approvals=parent.approvals if isinstance(parent.approvals, Approvals) else Approvals(),
            depth=parent.depth + 1,
        )

    @staticmethod
    def _identity(parent: SessionDeps, journal: Journal, agent: AgentType | None) -> AgentIdentity:
        agent_id = secrets.token_hex(8)
        base = parent.journal.path
        transcript = None if base is None else ClaudeTranscript(
            journal, base.parent / "subagents" / f"agent-{agent_id}.jsonl",
            session_id=parent.config.session_id, cwd=str(parent.config.workspace),
            emit=parent.emit, agent_id=agent_id)
        return AgentIdentity(id=agent_id, type=agent.name if agent is not None else GENERAL,
                             transcript=transcript)

    def _journal_for(self, parent: SessionDeps, name: str) -> Journal:
        base = parent.journal.path
        if base is None:
            return Journal()
        return Journal(base.parent / "agents" / f"{name}.jsonl")

    # -- running ----------------------------------------------------------------------

    def for_call(self, parent: SessionDeps, tool_use_id: str, scope: CancelScope) -> Spawner:
        return Spawner(self, parent, tool_use_id, scope)

    @staticmethod
    def too_deep(parent: SessionDeps) -> ToolResult | None:
        limit = parent.config.max_subagent_depth
        if parent.depth + 1 > limit:
            return ToolResult.error(
                f"sub-agent nesting limit reached (at most {limit} level"
                f"{'s' if limit != 1 else ''} of sub-agents): do this work yourself"
            )
        return None

    async def run(
        self,
        parent: SessionDeps,
        parent_tool_use_id: str,
        scope: CancelScope,
        description: str,
        prompt: str,
        agent: AgentType | None = None,
    ) -> ToolResult:
        """A foreground sub-agent: runs under ``scope`` (the task call's)."""
        refused = self.too_deep(parent)
        if refused is not None:
            return refused
        journal = self._journal_for(parent, parent_tool_use_id)
        deps = self._child_deps(parent, parent_tool_use_id, journal, agent)
        return await self._run_turn(deps, parent_tool_use_id, scope, prompt, agent)

    async def _run_turn(self, deps: SessionDeps, key: str, scope: CancelScope, prompt: str,
                        agent: AgentType | None) -> ToolResult:
        if agent is not None and agent.model != INHERIT:
            try:  # an alias is the newest model the provider lists under it
                deps.config.model = await resolve_model(deps, agent.model, scope)
            except Cancelled:
                return ToolResult(outcome=ToolState.CANCELLED_WHILE_RUNNING, is_error=True,
                                  content="The sub-agent was stopped before it started.",
                                  ended_by=scope.reason)
        turn = Turn(deps, f"agent:{key}", scope, prompt)
        self.turns[key] = turn
        try:
            if deps.hooks is not None:  # SubagentStart: its context is in the first request
                await HookPoints(deps, scope, turn.log.record, turn.id).subagent_start()
            ended = await turn.run()
        finally:
            self.turns.pop(key, None)
        answer = final_answer(deps.journal.records)
        side_effects = (
            SideEffects.UNVERIFIED
            if any(
                tool_started(c.state) and c.tool is not None and not c.tool.read_only
                for c in turn.calls.values()
            )
            else SideEffects.NONE
        )
        if ended.status is TurnStatus.COMPLETED:
            return ToolResult.ok(answer or "(the sub-agent gave no answer)", side_effects)
        if ended.status is TurnStatus.CANCELLED:
            states = ", ".join(f"{c.name}: {c.state}" for c in turn.calls.values())
            text = "The sub-agent was stopped before it finished."
            if states:
                text += f" Its tool calls: {states}."
            if answer:
                text += f"\nIts answer so far:\n{answer}"
            return ToolResult(
                outcome=ToolState.CANCELLED_WHILE_RUNNING,
                content=text,
                is_error=True,
                ended_by=scope.reason,
                side_effects=side_effects,
            )
        return ToolResult.error(f"the sub-agent failed: {ended.detail}", side_effects)

    def start_background(
        self, parent: SessionDeps, description: str, prompt: str, agent: AgentType | None = None,
        tool_use_id: str | None = None,
    ) -> str:
        """A background sub-agent: its own scope, not under the turn. Returns its id."""
        job_id = f"agent_{next(self._ids)}"
        scope = self.background_root.child(job_id)
        journal = self._journal_for(parent, job_id)
        deps = self._child_deps(parent, job_id, journal, agent)
        self._scopes[job_id] = scope
        self._descriptions[job_id] = description
        self._callers[job_id] = tool_use_id
        self._changed(job_id, BackgroundState.RUNNING)
        task = asyncio.get_running_loop().create_task(self._run_turn(deps, job_id, scope, prompt, agent))
        self._running[job_id] = task

        def done(t: asyncio.Task[ToolResult]) -> None:
            self._running.pop(job_id, None)
            scope.detach()
            if t.cancelled():
                result = ToolResult(outcome=ToolState.UNKNOWN, content="it was torn down",
                                    side_effects=SideEffects.UNVERIFIED)
            elif t.exception() is not None:
                result = ToolResult.error(f"internal error: {t.exception()!r}")
            else:
                result = t.result()
            state = {
                ToolState.SUCCEEDED: BackgroundState.COMPLETED,
                ToolState.CANCELLED_WHILE_RUNNING: BackgroundState.CANCELLED,
            }.get(result.outcome, BackgroundState.FAILED)
            try:
                self.journal.append(
                    BackgroundResultRecord(
                        job_id=job_id, description=description, state=state,
                        text=result.content,
                    ),
                    durable=True,
                )
            except JournalWriteError as exc:
                self.emit(exc.notice())
            self._changed(job_id, state, detail=result.content.splitlines()[0][:200]
                          if result.content else "")

        task.add_done_callback(done)
        return job_id

    def _changed(self, job_id: str, state: BackgroundState, detail: str = "") -> None:
        self.emit(
            BackgroundJobChanged(
                id=job_id, kind=BackgroundKind.AGENT, description=self._descriptions.get(job_id, ""),
                state=state, detail=detail, tool_use_id=self._callers.get(job_id),
            )
        )

    # -- stopping (BackgroundWork) ------------------------------------------------

    def cancel_call(self, tool_use_id: str) -> bool:
        """Stop one tool call running inside some sub-agent (not the whole turn)."""
        return any(turn.cancel_call(tool_use_id) for turn in list(self.turns.values()))

    def request_stop(self, job_id: str) -> bool:
        scope = self._scopes.get(job_id)
        if scope is None or job_id not in self._running:
            return False
        scope.cancel(CancelReason.USER_INTERRUPT)
        return True

    async def shutdown(self) -> None:
        self.background_root.cancel(CancelReason.SHUTDOWN)
        if self._running:
            await asyncio.wait(set(self._running.values()), timeout=30)


class Spawner:
    """What a ``task`` call gets in its ToolContext: sub-agents bound to that call."""

    def __init__(self, agents: SubAgents, parent: SessionDeps, tool_use_id: str, scope: CancelScope):
        self._agents = agents
        self._parent = parent
        self._tool_use_id = tool_use_id
        self._scope = scope

    async def run(
        self, description: str, prompt: str, agent: AgentType | None = None
    ) -> ToolResult:
        return await self._agents.run(
            self._parent, self._tool_use_id, self._scope, description, prompt, agent
        )

    def start_background(
        self, description: str, prompt: str, agent: AgentType | None = None
    ) -> ToolResult:
        refused = self._agents.too_deep(self._parent)
        if refused is not None:
            return refused
        job_id = self._agents.start_background(self._parent, description, prompt, agent,
                                               self._tool_use_id)
        return ToolResult.ok(
            f"Started background sub-agent {job_id}. Its result will be shown to you when "
            "it finishes; the user can stop it.",
            SideEffects.UNVERIFIED,
        )
