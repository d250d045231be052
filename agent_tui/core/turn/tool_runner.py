"""A turn's tool batch: permission gating, intent, execution under the cleanup budget.

Calls that may have side effects run one at a time in the model's order;
consecutive read-only (or otherwise concurrent) calls run alongside each other.
Cancel points, each marked ``# cancel point``: before a tool is started, while a
``PreToolUse`` hook gates it (``core/hooks/hook_points.py``), during a permission wait
(``core/calls/approvals.py``), while waiting for the turn's checkpoint, and right before
the tool starts. Phase 2 of a cancel: a running tool is told to
stop through its own scope and has ``cleanup_budget`` seconds to report how it
ended; one that does not becomes ``unknown``.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any, Literal

from agent_tui.cancel import Cancelled, CancelReason, CancelScope
from agent_tui.core.history.history import result_wording
from agent_tui.core.hooks.hook_points import HookPoints, gated
from agent_tui.core.hooks.permission_points import (
    notify_permission_prompt,
    permission_denied,
    permission_request,
)
from agent_tui.core.services.hooks_port import HookAnswer
from agent_tui.core.services.stopping import stopping_detail
from agent_tui.core.journal.records import (
    MemoryNoteRecord,
    PermissionRecord,
    ToolIntentRecord,
    ToolResultRecord,
)
from agent_tui.core.memory.memory_loader import folder_memory, read_refusal
from agent_tui.core.calls.state import TERMINAL_TOOL_STATES
from agent_tui.core.calls.permission import Ruling, decided_by
from agent_tui.protocol.states import HookDecision, HookEvent
from agent_tui.protocol import (
    Decision,
    Notice,
    NoticeLevel,
    PermissionRequested,
    SideEffects,
    ToolOutput,
    ToolState,
    ToolStateChanged,
    TurnState,
    TurnStateChanged,
    Verdict,
)
from agent_tui.core.modes.plan_mode import Permit, leave_plan_mode
from agent_tui.core.calls.tool import AnyTool, InvalidInput, ToolContext, ToolResult
from agent_tui.core.turn.turn_log import ToolCall, TurnLog
from agent_tui.core.turn.web_search import Searcher


def operation_id(session_id: str, turn_id: str, tool_use_id: str) -> str:
    """Stable across retries and resume: derived, never random."""
    digest = hashlib.sha256(f"{session_id}/{turn_id}/{tool_use_id}".encode()).hexdigest()
    return f"op_{digest[:24]}"


class ToolRunner:
    def __init__(
        self, log: TurnLog, scope: CancelScope, checkpoint: asyncio.Task[None] | None
    ) -> None:
        self.log = log
        self.deps = log.deps
        self.scope = scope
        self.checkpoint = checkpoint
        self.running: set[str] = set()
        self._tool_scopes: dict[str, CancelScope] = {}
        self._ended_while_cancelling = 0
        self.running_at_cancel = 0
        self._shown_stopping: set[str] = set()  # calls the turn ended without
        self.hooks = HookPoints(log.deps, scope, log.record, log.turn_id)

    def _concurrent(self, call: ToolCall) -> bool:
        return self.log.read_only(call) or (
            call.tool is not None and call.invalid is None and call.tool.concurrent
        )

    async def run_batch(self, calls: list[ToolCall]) -> None:
        i = 0
        while i < len(calls):
            if self.scope.cancelled:  # cancel point: before a tool is started
                break
            group = [calls[i]]
            if self._concurrent(calls[i]):
                while i + len(group) < len(calls) and self._concurrent(calls[i + len(group)]):
                    group.append(calls[i + len(group)])
            i += len(group)
            if len(group) == 1:
                await self._run_call(group[0])
            else:
                await asyncio.gather(*(self._run_call(c) for c in group))
        self.close_entrance(calls)

    def close_entrance(
        self, calls: list[ToolCall], ended_by: CancelReason | None = None, why: str = ""
    ) -> None:
        """Phase 1 of a cancel: whatever has not started never will. ``ended_by``: what
        closed it when the user did not (the stream failed, the turn failed), and ``why``."""
        for call in calls:
            if call.state in (ToolState.QUEUED, ToolState.AWAITING_APPROVAL):
                self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START, content=why,
                                       ended_by=ended_by)

    def _finish_unstarted(
        self,
        call: ToolCall,
        state: ToolState,
        content: str = "",
        note: str = "",
        denied_by: Literal["user", "policy", "hook"] | None = None,
        ended_by: CancelReason | None = None,
    ) -> None:
        if call.state in TERMINAL_TOOL_STATES:
            return  # the turn ended it while it waited (a hook, the checkpoint): said once
        record = ToolResultRecord(
            turn_id=self.log.turn_id,
            tool_use_id=call.id,
            name=call.name,
            state=state,
            content=content,
            is_error=True,
            note=note,
            denied_by=denied_by,
            ended_by=ended_by,
        )
        self.log.record(record, durable=True)
        text, _ = result_wording(record)
        extra = {"ended_by": ended_by} if ended_by is not None else {}
        self.log.set_tool_state(call, state, detail=content or note, result=text, **extra)

    async def _permitted(
        self, call: ToolCall, tool: AnyTool, args: Any, hooked: HookAnswer
    ) -> Permit | None:
        """Ask the policy (after the hooks), and the user when it says ask. None: the
        call has ended; else where it runs and what the user said."""
        turn_id = self.log.turn_id
        ruling = gated(self.deps.policy.check(tool, args), hooked)
        by = decided_by(ruling.rule)
        self.log.record(PermissionRecord(
            turn_id=turn_id, tool_use_id=call.id, verdict=ruling.verdict,
            decided_by=by, rule=ruling.rule, reason=ruling.reason,
        ))
        if ruling.verdict is Verdict.ASK or ruling.unasked:  # a hook may answer for the user
            try:
                answered = await permission_request(self.hooks, call.id, call.name, call.input or {})
            except Cancelled:
                self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START)
                return None
            if answered.decision in (HookDecision.ALLOW, HookDecision.BLOCK):
                allowed = answered.decision is HookDecision.ALLOW
                ruling = Ruling(verdict=Verdict.ALLOW if allowed else Verdict.DENY,
                                rule=f"hook:{HookEvent.PERMISSION_REQUEST}",
                                reason=answered.reason or f"{'allowed' if allowed else 'denied'} "
                                "by a PermissionRequest hook", confinement=ruling.confinement)
                by = "hook"
                self.log.record(PermissionRecord(
                    turn_id=turn_id, tool_use_id=call.id, verdict=ruling.verdict,
                    decided_by=by, rule=ruling.rule, reason=ruling.reason))
        if ruling.verdict is Verdict.DENY:
            self._finish_unstarted(call, ToolState.DENIED, note=ruling.reason,
                                   denied_by="hook" if by == "hook" else "policy")
            if by != "hook":
                await permission_denied(self.hooks, call.id, call.name, call.input or {},
                                        ruling.reason)
            return None
        if ruling.verdict is not Verdict.ASK:
            return Permit(confinement=ruling.confinement)
        self.log.set_tool_state(call, ToolState.AWAITING_APPROVAL)
        notify_permission_prompt(self.hooks, call.name)
        self.log.emit(
            PermissionRequested(
                turn_id=turn_id,
                tool_use_id=call.id,
                name=call.name,
                summary=tool.summary(args),
                input=call.input or {},
                reason=ruling.reason,
                rule=ruling.rule,
            )
        )
        try:
            # cancel point: during a permission wait (inside Approvals.wait)
            decision = await self.deps.approvals.wait(call.id, self.scope)
        except Cancelled:
            self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START)
            return None
        denied = decision.decision is Decision.DENY
        self.log.record(PermissionRecord(
            turn_id=turn_id, tool_use_id=call.id,
            verdict=Verdict.DENY if denied else Verdict.ALLOW,
            decided_by="user", rule=ruling.rule, reason=decision.note,
            decision=decision.decision,
        ))
        if denied:
            self._finish_unstarted(call, ToolState.DENIED, note=decision.note, denied_by="user")
            return None
        if decision.rules:
            self.deps.policy.allow(decision.rules)
        elif decision.decision is Decision.ALLOW_SESSION:
            self.deps.policy.remember(tool, args)
        if decision.updated_input is not None and decision.updated_input != call.input:
            return await self._changed_by_answer(call, tool, decision.updated_input)
        return Permit(confinement=ruling.confinement, approval=decision.decision)

    async def _changed_by_answer(
        self, call: ToolCall, tool: AnyTool, changed: dict[str, Any]
    ) -> Permit | None:
        """An allow that changed the input: the call runs as changed, if that is valid
        and the hooks and rules let it (an answer never beats a guard: the PreToolUse
        hooks see the changed input too, and a deny rule still wins)."""
        try:
            args = tool.parse(changed)
            hooked = await self.hooks.pre_tool(call.id, call.name, changed)
        except InvalidInput as exc:
            self._finish_unstarted(call, ToolState.FAILED, content=(
                f"Not started: the permission answer changed its input into one that is not "
                f"valid: {exc}"))
            return None
        except Cancelled:  # cancel point: Esc ended the hook; the call never starts
            self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START)
            return None
        again = self.hooks.changed_input(tool, call.name, changed, hooked)
        if isinstance(again, str):
            self._finish_unstarted(call, ToolState.FAILED, content=again)
            return None
        changed, args = again if again is not None else (changed, args)
        ruling = gated(self.deps.policy.check(tool, args), hooked)
        if ruling.verdict is Verdict.DENY:
            by = decided_by(ruling.rule)
            self._finish_unstarted(call, ToolState.DENIED, note=ruling.reason,
                                   denied_by="hook" if by == "hook" else "policy")
            return None
        call.input, call.args = changed, args
        return Permit(confinement=ruling.confinement, approval=Decision.ALLOW_ONCE)

    async def _run_call(self, call: ToolCall) -> None:
        if call.invalid is not None or call.tool is None:
            self._finish_unstarted(call, ToolState.FAILED, content=call.invalid or "invalid call")
            return
        tool, args = call.tool, call.args
        try:
            hooked = await self.hooks.pre_tool(call.id, call.name, call.input or {})
        except Cancelled:  # cancel point: Esc ended the hook; the call never starts
            self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START)
            return
        changed = self.hooks.changed_input(tool, call.name, call.input or {}, hooked)
        if isinstance(changed, str):
            self._finish_unstarted(call, ToolState.FAILED, content=changed)
            return
        if changed is not None:  # updatedInput: the call runs, and is checked, as changed
            call.input, call.args = changed
            args = call.args
        permit = await self._permitted(call, tool, args, hooked)
        if permit is None:
            return
        args = call.args  # an answer may have changed it
        if self.checkpoint is not None and not self.log.read_only(call):
            try:
                async with self.scope.linked():  # cancel point: waiting for the checkpoint
                    await asyncio.shield(self.checkpoint)
            except Cancelled:
                self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START)
                return
        if self.scope.cancelled:  # cancel point: right before the tool starts
            self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START)
            return
        op_id = operation_id(self.deps.config.session_id, self.log.turn_id, call.id)
        intent = ToolIntentRecord(
            turn_id=self.log.turn_id, tool_use_id=call.id, name=call.name,
            input=call.input or {}, operation_id=op_id, read_only=self.log.read_only(call),
        )
        if not self.log.record(intent, durable=True) and not self.log.read_only(call):
            self._finish_unstarted(
                call,
                ToolState.FAILED,
                content="Not started: its intent could not be recorded in the journal.",
            )
            return
        self.log.set_tool_state(call, ToolState.RUNNING)
        self.running.add(call.id)
        try:
            result = await self._execute(call, tool, args, op_id, permit)
        finally:
            self.running.discard(call.id)
        self._finish(call, result)
        if self.hooks.wants_post_tool(call.name, result, call.input or {}):
            await self._post_tool_hooks(call, result)

    async def _post_tool_hooks(self, call: ToolCall, result: ToolResult) -> None:
        """A hook may change files (a formatter): snapshot around it, so what it
        changed counts as the agent's and a rewind restores it without a conflict."""
        watch = await self._snapshot_before()
        try:
            await self.hooks.post_tool(call.id, call.name, call.input or {}, result)
        finally:
            if watch is not None:
                await self._writes_done(watch)

    async def _execute(
        self, call: ToolCall, tool: AnyTool, args: Any, op_id: str, permit: Permit
    ) -> ToolResult:
        tool_scope = self.scope.child(f"tool:{call.id}")
        self._tool_scopes[call.id] = tool_scope
        turn_id = self.log.turn_id
        subagents = self.deps.subagents
        ctx = ToolContext(
            scope=tool_scope, workspace=self.deps.config.workspace, tool_use_id=call.id,
            operation_id=op_id, env=dict(self.deps.config.env),
            emit_output=lambda text: self.log.emit(
                ToolOutput(turn_id=turn_id, tool_use_id=call.id, text=text)
            ),
            subagents=(
                subagents.for_call(self.deps, call.id, tool_scope) if subagents is not None else None
            ),
            confinement=permit.confinement, approval=permit.approval,
            added_dirs=tuple(self.deps.config.added_dirs),
            web_search=Searcher(self.deps, self.log.record, self.log.emit, turn_id=turn_id,
                                tool_use_id=call.id, scope=tool_scope),
            leave_plan_mode=lambda approval: leave_plan_mode(
                self.deps, self.log.record, self.log.emit, approval),
            session_id=self.deps.config.session_id, effort=self.deps.config.effort,
        )
        watch = await self._watch_writes(tool, call)
        task = asyncio.create_task(tool.run(args, ctx))
        stop_asked = asyncio.create_task(tool_scope.wait())
        budget = self.deps.config.cleanup_budget
        try:
            await asyncio.wait({task, stop_asked}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                # Phase 2: the tool was told to stop; it has a bounded time to report.
                await asyncio.wait({task}, timeout=budget)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            stop_asked.cancel()
            tool_scope.detach()
            self._tool_scopes.pop(call.id, None)
            if watch is not None:
                await self._writes_done(watch)
        no_effects = SideEffects.NONE if self.log.read_only(call) else SideEffects.UNVERIFIED
        if not task.done():
            task.cancel()
            return ToolResult(
                outcome=ToolState.UNKNOWN,
                content=f"{tool.name} did not confirm it stopped within {budget:g} s",
                is_error=True,
                side_effects=SideEffects.UNVERIFIED,
                ended_by=tool_scope.reason,
            )
        exc = task.exception()
        if isinstance(exc, Cancelled):
            return ToolResult(
                outcome=ToolState.CANCELLED_WHILE_RUNNING,
                content="",
                is_error=True,
                ended_by=exc.reason,
                side_effects=no_effects,
            )
        if exc is not None:
            return ToolResult.error(
                f"{tool.name} failed with an internal error: {exc!r}", side_effects=no_effects
            )
        return task.result()

    async def _watch_writes(self, tool: AnyTool, call: ToolCall) -> str | None:
        """Snapshot before a call that may change files without reporting them (a
        shell command), so a later rewind knows those changes were the agent's."""
        if tool.reports_own_writes or self.log.read_only(call):
            return None
        return await self._snapshot_before()

    async def _snapshot_before(self) -> str | None:
        checkpoints = self.deps.checkpoints
        if checkpoints is None:
            return None
        try:
            return await asyncio.to_thread(checkpoints.command_started)
        except Exception:
            return None  # without it a rewind asks before touching such files

    async def _writes_done(self, token: str) -> None:
        checkpoints = self.deps.checkpoints
        if checkpoints is None:
            return
        try:
            await asyncio.shield(asyncio.to_thread(checkpoints.command_finished, token))
        except Exception:
            pass

    def _finish(self, call: ToolCall, result: ToolResult) -> None:
        record = ToolResultRecord(
            turn_id=self.log.turn_id,
            tool_use_id=call.id,
            name=call.name,
            state=result.outcome,
            content=result.content,
            is_error=result.is_error,
            side_effects=result.side_effects,
            exit_code=result.exit_code,
            signal=result.signal,
            ended_by=result.ended_by,
            residue=[r.model_dump() for r in result.residue],
            details=result.details,
            blocks=result.blocks,
        )
        self.log.record(record, durable=True)
        self._folder_memory(call)
        text, _ = result_wording(record)
        detail_bits = []
        if result.signal:
            detail_bits.append(result.signal)
        if result.exit_code is not None:
            detail_bits.append(f"exit {result.exit_code}")
        if result.ended_by is CancelReason.SEND_TO_BACKGROUND:
            detail_bits.append(f"moved to the background as {result.details.get('shell_id', '?')}")
        if not detail_bits and call.id in self._shown_stopping:  # "stopping: ..." is over
            detail_bits.append((result.content or "stopped").splitlines()[0])
        self.log.set_tool_state(
            call,
            result.outcome,
            detail=", ".join(detail_bits),
            result=text,
            side_effects=result.side_effects,
            exit_code=result.exit_code,
            signal=result.signal,
            residue=record.residue,
            ended_by=result.ended_by,
        )
        if result.residue:
            listing = ", ".join(f"{r.pid} ({r.cmdline})" for r in result.residue)
            self.log.emit(
                Notice(
                    level=NoticeLevel.WARNING,
                    text=f"{call.name}: {len(result.residue)} process(es) could not be ended: {listing}",
                )
            )
        if self.log.state is TurnState.CANCELLING and self.running_at_cancel:
            self._ended_while_cancelling += 1
            self.log.emit(
                TurnStateChanged(
                    turn_id=self.log.turn_id,
                    state=TurnState.CANCELLING,
                    detail=f"{self._ended_while_cancelling} of "
                    f"{self.running_at_cancel} running tool calls ended",
                )
            )

    def _folder_memory(self, call: ToolCall) -> None:
        """A call that worked on a file in a subfolder brings that folder's own
        AGENTS.md into the conversation, as a note after the results (once)."""
        path = (call.input or {}).get("path")
        if not isinstance(path, str) or not path:
            return
        records = self.deps.journal.records
        loaded = {r.path for r in records if isinstance(r, MemoryNoteRecord)}
        found = folder_memory(self.deps.config.workspace, Path(path), loaded,
                              read_refusal(self.deps.policy, self.deps.tools))
        for item in found.files:  # a file's imports follow it, each a note of its own
            self.log.record(MemoryNoteRecord(path=item.path, text=item.text), durable=True)
        for problem in found.problems:
            self.log.emit(Notice(level=NoticeLevel.WARNING, text=str(problem)))

    # -- one call, or the running ones, from outside the batch ---------------------

    def show_stopping(self, since: float) -> None:
        """The calls still stopping as their turn ends (told to stop ``since`` seconds
        ago), shown so in place; their final state follows when they end."""
        budget = self.deps.config.cleanup_budget
        for call_id in sorted(self.running):
            call = self.log.calls[call_id]
            self._shown_stopping.add(call_id)
            grace = call.tool.stop_grace_s if call.tool is not None else None
            detail = stopping_detail(grace, budget, since)
            summary = call.tool.summary(call.args) if call.tool and call.args is not None else ""
            self.log.emit(ToolStateChanged(
                turn_id=self.log.turn_id, tool_use_id=call.id, name=call.name,
                state=ToolState.RUNNING, summary=summary, input=call.input, detail=detail))

    def cancel_call(self, tool_use_id: str) -> bool:
        """Stop one running call, leaving the turn to go on."""
        scope = self._tool_scopes.get(tool_use_id)
        return scope is not None and scope.cancel(CancelReason.USER_INTERRUPT)

    def send_to_background(self) -> int:
        """Move running calls that can keep running in the background there (send-now).
        Returns how many were asked."""
        asked = 0
        for call_id, scope in list(self._tool_scopes.items()):
            tool = self.log.calls[call_id].tool
            if tool is not None and tool.can_background:
                asked += scope.cancel(CancelReason.SEND_TO_BACKGROUND)
        return asked
