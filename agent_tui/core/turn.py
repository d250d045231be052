"""The agent loop of one turn: model call -> tool batch -> (steer) -> model call ...

Cancel points, each marked ``# cancel point`` below: before each model request,
while the stream is read (a stalled read is interrupted, not waited out), during
retry back-off, before a tool is started, during a permission wait, and right
before a tool starts. A cancel runs in two phases: the entrance closes (no new
request, retry or tool start; queued calls become ``cancelled_before_start``), then
running tools get a bounded cleanup budget to stop and report what they know.
A tool that finished before or while the cancel arrived keeps its real result.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent_tui.cancel import Cancelled, CancelReason, CancelScope
from agent_tui.core.approvals import Approvals
from agent_tui.core.events import (
    Event,
    Notice,
    NoticeLevel,
    PermissionRequested,
    RetryScheduled,
    SteerState,
    SteerStatus,
    TextDelta,
    ToolOutput,
    ToolStateChanged,
    TurnEnded,
    TurnStarted,
    TurnStateChanged,
)
from agent_tui.core.history import ModelViewError, check_model_view, model_view, result_wording
from agent_tui.core.journal import (
    AssistantMessageRecord,
    Journal,
    JournalWriteError,
    ModelRequestRecord,
    PermissionRecord,
    RetryRecord,
    SteerRecord,
    ToolIntentRecord,
    ToolResultRecord,
    ToolStateRecord,
    TurnEndedRecord,
    UserMessageRecord,
)
from agent_tui.core.permission import Decision, PermissionPolicy, Verdict, decided_by
from agent_tui.core.queue import MessageQueue
from agent_tui.core.state import (
    SideEffects,
    ToolState,
    TurnState,
    advance_tool,
    advance_turn,
)
from agent_tui.core.tool import InvalidInput, Tool, ToolContext, ToolResult, ToolSet
from agent_tui.providers import base as model

DEFAULT_SYSTEM = (
    "You are agent-tui, a coding agent working in the user's workspace through tools. "
    "Be brief. When a tool result says a call was interrupted or its result is unknown, "
    "check the current state before doing it again."
)


@dataclass
class AgentConfig:
    workspace: Path
    model: str
    session_id: str = "session"
    system: str = DEFAULT_SYSTEM
    max_tokens: int = 8192
    max_retries: int = 4
    retry_base: float = 1.0
    retry_cap: float = 30.0
    # Phase 2 of a cancel: how long a running tool may take to stop and report
    # (a command that ignores SIGTERM needs its grace, the KILL and a pipe drain).
    cleanup_budget: float = 6.0
    # Extra environment for the commands tools run (the settings files' ``env``).
    env: dict[str, str] = field(default_factory=dict)
    # How many levels of sub-agents may be started under the main agent.
    max_subagent_depth: int = 1


@dataclass
class TurnDeps:
    config: AgentConfig
    provider: model.Provider
    tools: ToolSet
    policy: PermissionPolicy
    journal: Journal
    emit: Callable[[Event], None]
    queue: MessageQueue = field(default_factory=MessageQueue)
    approvals: Approvals = field(default_factory=Approvals)
    # agent_tui.checkpoints.Checkpoints, or None for a session without rewind
    checkpoints: Any = None
    # core.subagent.SubAgents of the session (set by the session), and this loop's depth
    subagents: Any = None
    depth: int = 0


class ToolCall(BaseModel):
    """One tool call of the turn and its live state."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str
    name: str
    index: int
    state: ToolState = ToolState.STREAMING
    input_json: str = ""
    input: dict[str, Any] | None = None
    args: Any = None
    tool: Tool | None = None
    invalid: str | None = None  # why the call cannot run (unknown tool, bad input)


class Reply(BaseModel):
    """What one model response produced, complete or not."""

    blocks: dict[int, dict[str, Any]] = {}
    calls: dict[int, ToolCall] = {}
    stop_reason: str | None = None
    ended: str = "end_turn"
    error: Any = None

    @property
    def empty(self) -> bool:
        return not self.calls and not any(b.get("text") for b in self.blocks.values())

    def complete_calls(self) -> list[ToolCall]:
        return [c for i, c in sorted(self.calls.items()) if c.input is not None]


def operation_id(session_id: str, turn_id: str, tool_use_id: str) -> str:
    """Stable across retries and resume: derived, never random."""
    digest = hashlib.sha256(f"{session_id}/{turn_id}/{tool_use_id}".encode()).hexdigest()
    return f"op_{digest[:24]}"


class Turn:
    def __init__(
        self,
        deps: TurnDeps,
        turn_id: str,
        scope: CancelScope,
        text: str,
        checkpoint: asyncio.Task[None] | None = None,
        ready: asyncio.Future[Any] | None = None,
    ) -> None:
        self.deps = deps
        self.id = turn_id
        self.scope = scope
        self.text = text
        self.checkpoint = checkpoint
        self.ready = ready
        self.state = TurnState.RUNNING
        self.calls: dict[str, ToolCall] = {}
        self._running: set[str] = set()
        self._tool_scopes: dict[str, CancelScope] = {}
        self._ended_while_cancelling = 0
        self._running_at_cancel = 0

    # -- bookkeeping -------------------------------------------------------------

    def _emit(self, event: Event) -> None:
        self.deps.emit(event)

    def _record(self, record: Any, *, durable: bool = False) -> bool:
        try:
            self.deps.journal.append(record, durable=durable)
            return True
        except JournalWriteError as exc:
            self._emit(Notice(level=NoticeLevel.ERROR, text=str(exc)))
            return False

    def _set_turn_state(self, new: TurnState, detail: str = "") -> None:
        self.state = advance_turn(self.state, new)
        self._emit(TurnStateChanged(turn_id=self.id, state=new, detail=detail))

    def _set_tool_state(self, call: ToolCall, new: ToolState, **extra: Any) -> None:
        if new is not ToolState.STREAMING:  # streaming is where every call is born
            call.state = advance_tool(call.state, new)
            self._record(ToolStateRecord(turn_id=self.id, tool_use_id=call.id, state=new))
        summary = ""
        if call.tool is not None and call.args is not None:
            summary = call.tool.summary(call.args)
        self._emit(
            ToolStateChanged(
                turn_id=self.id,
                tool_use_id=call.id,
                name=call.name,
                state=new,
                summary=summary,
                input=call.input,
                **extra,
            )
        )

    # -- the loop -------------------------------------------------------------------

    async def run(self) -> TurnEnded:
        self._loop = asyncio.get_running_loop()
        self._emit(TurnStarted(turn_id=self.id, text=self.text))
        self._record(UserMessageRecord(turn_id=self.id, text=self.text), durable=True)
        watch = self.scope.on_cancel(self._cancel_requested)
        status, detail = "completed", ""
        try:
            while True:
                reply = await self._call_model()
                self._record_reply(reply)
                calls = reply.complete_calls()
                if self.scope.cancelled:
                    self._close_entrance(calls)
                    break
                if not calls:
                    break
                await self._run_batch(calls)
                if self.scope.cancelled:
                    break
                self._apply_steers()
        except Cancelled:
            pass
        except model.ProviderError as exc:
            status, detail = "failed", f"model request failed: {exc}"
        except ModelViewError as exc:
            status, detail = "failed", f"internal error, request not sent: {exc}"
        except Exception as exc:  # a bug: say so, keep the session alive
            status, detail = "failed", f"internal error: {exc!r}"
            self._emit(Notice(level=NoticeLevel.ERROR, text=traceback.format_exc()))
        finally:
            watch.remove()
        self._close_entrance(list(self.calls.values()))
        if self.scope.cancelled:
            status = "cancelled"
            if self.state is TurnState.RUNNING:
                self._set_turn_state(TurnState.CANCELLING)
            self._set_turn_state(TurnState.CANCELLED, self._cancel_summary())
        else:
            self._set_turn_state(
                TurnState.COMPLETED if status == "completed" else TurnState.FAILED, detail
            )
        if detail:
            self._emit(Notice(level=NoticeLevel.ERROR, text=detail))
        self._record(TurnEndedRecord(turn_id=self.id, status=status, detail=detail), durable=True)
        ended = TurnEnded(turn_id=self.id, status=status, detail=detail)  # type: ignore[arg-type]
        self._emit(ended)
        return ended

    def _cancel_requested(self, reason: CancelReason) -> None:
        # Runs on the cancelling thread; move to the loop to touch state.
        try:
            self._loop.call_soon_threadsafe(self._enter_cancelling)
        except RuntimeError:
            pass

    def _enter_cancelling(self) -> None:
        if self.state is not TurnState.RUNNING:
            return
        running = self._running_at_cancel = len(self._running)
        self._set_turn_state(
            TurnState.CANCELLING,
            f"{running} tool call{'s' if running != 1 else ''} running" if running else "",
        )

    def _cancel_summary(self) -> str:
        counts: dict[str, int] = {}
        for call in self.calls.values():
            counts[call.state] = counts.get(call.state, 0) + 1
        return ", ".join(f"{n} {state}" for state, n in counts.items())

    # -- model calls ------------------------------------------------------------------

    async def _call_model(self) -> Reply:
        attempt = 0
        cfg = self.deps.config
        if self.ready is not None and not self.ready.done():
            async with self.scope.linked():  # cancel point: waiting for tools to be ready
                await asyncio.shield(self.ready)
        while True:
            self.scope.raise_if_cancelled()  # cancel point: before each model request
            messages = model_view(self.deps.journal.records)
            check_model_view(messages)
            request = model.ModelRequest(
                model=cfg.model,
                system=cfg.system,
                messages=messages,
                tools=self.deps.tools.specs(),
                max_tokens=cfg.max_tokens,
            )
            self._record(
                ModelRequestRecord(
                    turn_id=self.id, attempt=attempt + 1, messages=len(messages), model=cfg.model
                )
            )
            reply = await self._stream_reply(request)
            error = reply.error
            if error is None:
                return reply
            if not reply.empty or not error.retryable or attempt >= cfg.max_retries:
                # Text already shown cannot be taken back by a retry: end the turn.
                self._record_reply(reply)
                raise error
            attempt += 1
            delay = min(cfg.retry_cap, error.retry_after or cfg.retry_base * 2 ** (attempt - 1))
            self._record(
                RetryRecord(turn_id=self.id, attempt=attempt, delay=delay, reason=str(error))
            )
            self._emit(
                RetryScheduled(turn_id=self.id, attempt=attempt, delay=delay, reason=str(error))
            )
            async with self.scope.linked():  # cancel point: during retry back-off
                await asyncio.sleep(delay)

    async def _stream_reply(self, request: model.ModelRequest) -> Reply:
        reply = Reply()
        stream = self.deps.provider.stream(request)
        try:
            async with self.scope.linked():  # cancel point: while the stream is read
                async for event in stream:
                    self._on_stream_event(reply, event)
            reply.ended = reply.stop_reason or "end_turn"
        except Cancelled:
            reply.ended = "cancelled"
        except model.ProviderError as exc:
            reply.ended, reply.error = "error", exc
        finally:
            await _close_stream(stream)
        self._settle_calls(reply)
        return reply

    def _on_stream_event(self, reply: Reply, event: model.StreamEvent) -> None:
        if isinstance(event, model.TextStarted):
            reply.blocks[event.index] = {"type": "text", "text": ""}
        elif isinstance(event, model.TextDelta):
            block = reply.blocks.setdefault(event.index, {"type": "text", "text": ""})
            block["text"] += event.text
            self._emit(TextDelta(turn_id=self.id, text=event.text))
        elif isinstance(event, model.ToolUseStarted):
            call = ToolCall(id=event.id, name=event.name, index=event.index)
            reply.calls[event.index] = call
            self.calls[call.id] = call
            self._set_tool_state(call, ToolState.STREAMING)
        elif isinstance(event, model.ToolInputDelta):
            reply.calls[event.index].input_json += event.partial_json
        elif isinstance(event, model.BlockStopped):
            call = reply.calls.get(event.index)
            if call is not None:
                self._complete_call(call)
        elif isinstance(event, model.MessageEnded):
            reply.stop_reason = event.stop_reason

    def _complete_call(self, call: ToolCall) -> None:
        """All arguments have arrived: parse and validate them, then queue the call."""
        try:
            raw = json.loads(call.input_json) if call.input_json.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            return  # stays incomplete; _settle_calls drops it
        if not isinstance(raw, dict):
            return
        call.input = raw
        tool = self.deps.tools.get(call.name)
        if tool is None:
            call.invalid = f"unknown tool {call.name!r}"
        else:
            call.tool = tool
            try:
                call.args = tool.parse(raw)
            except InvalidInput as exc:
                call.invalid = str(exc)
        self._set_tool_state(call, ToolState.QUEUED)

    def _settle_calls(self, reply: Reply) -> None:
        """Calls whose arguments never completed never run and never reach the model."""
        for call in reply.calls.values():
            if call.state is ToolState.STREAMING:
                if self.scope.cancelled:
                    self._set_tool_state(
                        call, ToolState.CANCELLED_BEFORE_START, detail="arguments incomplete"
                    )
                else:
                    self._set_tool_state(
                        call,
                        ToolState.FAILED,
                        detail=f"arguments incomplete (stream ended: {reply.ended})",
                    )

    def _record_reply(self, reply: Reply) -> None:
        blocks: list[dict[str, Any]] = []
        incomplete: list[dict[str, Any]] = []
        for index in sorted(set(reply.blocks) | set(reply.calls)):
            if index in reply.blocks:
                blocks.append(dict(reply.blocks[index]))
                continue
            call = reply.calls[index]
            if call.input is None:
                incomplete.append({"id": call.id, "name": call.name, "partial": call.input_json})
            else:
                blocks.append(
                    {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
                )
        self._record(
            AssistantMessageRecord(
                turn_id=self.id, blocks=blocks, ended=reply.ended, incomplete_tool_uses=incomplete
            ),
            durable=reply.ended == "cancelled",
        )

    # -- tool batch ---------------------------------------------------------------

    def _read_only(self, call: ToolCall) -> bool:
        return (
            call.tool is not None
            and call.args is not None
            and call.invalid is None
            and call.tool.is_read_only(call.args)
        )

    def _concurrent(self, call: ToolCall) -> bool:
        return self._read_only(call) or (
            call.tool is not None and call.invalid is None and call.tool.concurrent
        )

    async def _run_batch(self, calls: list[ToolCall]) -> None:
        """Side-effecting calls one at a time in the model's order; consecutive
        read-only (or otherwise concurrent) calls alongside each other."""
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
        self._close_entrance(calls)

    def _close_entrance(self, calls: list[ToolCall]) -> None:
        """Phase 1 of a cancel: whatever has not started never will."""
        for call in calls:
            if call.state in (ToolState.QUEUED, ToolState.AWAITING_APPROVAL):
                self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START)

    def _finish_unstarted(
        self,
        call: ToolCall,
        state: ToolState,
        content: str = "",
        note: str = "",
        denied_by: str | None = None,
    ) -> None:
        record = ToolResultRecord(
            turn_id=self.id,
            tool_use_id=call.id,
            name=call.name,
            state=state,
            content=content,
            is_error=True,
            note=note,
            denied_by=denied_by,
        )
        self._record(record, durable=True)
        text, _ = result_wording(record)
        self._set_tool_state(call, state, detail=content or note, result=text)

    async def _run_call(self, call: ToolCall) -> None:
        if call.invalid is not None or call.tool is None:
            self._finish_unstarted(call, ToolState.FAILED, content=call.invalid or "invalid call")
            return
        tool, args = call.tool, call.args
        ruling = self.deps.policy.check(tool, args)
        self._record(PermissionRecord(
            turn_id=self.id, tool_use_id=call.id, verdict=ruling.verdict.value,
            decided_by=decided_by(ruling.rule), rule=ruling.rule, reason=ruling.reason,
        ))
        if ruling.verdict is Verdict.DENY:
            self._finish_unstarted(call, ToolState.DENIED, note=ruling.reason, denied_by="policy")
            return
        if ruling.verdict is Verdict.ASK:
            self._set_tool_state(call, ToolState.AWAITING_APPROVAL)
            self._emit(
                PermissionRequested(
                    turn_id=self.id,
                    tool_use_id=call.id,
                    name=call.name,
                    summary=tool.summary(args),
                    input=call.input or {},
                    reason=ruling.reason,
                )
            )
            try:
                decision = await self.deps.approvals.wait(call.id, self.scope)
            except Cancelled:
                self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START)
                return
            self._record(PermissionRecord(
                turn_id=self.id, tool_use_id=call.id,
                verdict="deny" if decision.decision is Decision.DENY else "allow",
                decided_by="user", rule=ruling.rule, reason=decision.note,
                decision=decision.decision.value,
            ))
            if decision.decision is Decision.DENY:
                self._finish_unstarted(call, ToolState.DENIED, note=decision.note, denied_by="user")
                return
            if decision.decision is Decision.ALLOW_SESSION:
                self.deps.policy.remember(tool, args)
        if self.checkpoint is not None and not self._read_only(call):
            try:
                async with self.scope.linked():  # cancel point: waiting for the checkpoint
                    await asyncio.shield(self.checkpoint)
            except Cancelled:
                self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START)
                return
        if self.scope.cancelled:  # cancel point: right before the tool starts
            self._finish_unstarted(call, ToolState.CANCELLED_BEFORE_START)
            return
        op_id = operation_id(self.deps.config.session_id, self.id, call.id)
        intent = ToolIntentRecord(
            turn_id=self.id, tool_use_id=call.id, name=call.name, input=call.input or {},
            operation_id=op_id,
        )
        if not self._record(intent, durable=True) and not self._read_only(call):
            self._finish_unstarted(
                call,
                ToolState.FAILED,
                content="Not started: its intent could not be recorded in the journal.",
            )
            return
        self._set_tool_state(call, ToolState.RUNNING)
        self._running.add(call.id)
        try:
            result = await self._execute(call, tool, args, op_id)
        finally:
            self._running.discard(call.id)
        self._finish(call, result)

    async def _execute(self, call: ToolCall, tool: Tool, args: Any, op_id: str) -> ToolResult:
        tool_scope = self.scope.child(f"tool:{call.id}")
        self._tool_scopes[call.id] = tool_scope
        ctx = ToolContext(
            scope=tool_scope,
            workspace=self.deps.config.workspace,
            tool_use_id=call.id,
            operation_id=op_id,
            env=dict(self.deps.config.env),
            emit_output=lambda text: self._emit(
                ToolOutput(turn_id=self.id, tool_use_id=call.id, text=text)
            ),
            subagents=(
                self.deps.subagents.for_call(self.deps, call.id, tool_scope)
                if self.deps.subagents is not None
                else None
            ),
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
                side_effects=SideEffects.NONE if self._read_only(call) else SideEffects.UNVERIFIED,
            )
        if exc is not None:
            return ToolResult.error(
                f"{tool.name} failed with an internal error: {exc!r}",
                side_effects=SideEffects.NONE if self._read_only(call) else SideEffects.UNVERIFIED,
            )
        return task.result()

    async def _watch_writes(self, tool: Tool, call: ToolCall) -> str | None:
        """Snapshot before a call that may change files without reporting them (a
        shell command), so a later rewind knows those changes were the agent's."""
        checkpoints = self.deps.checkpoints
        if checkpoints is None or tool.reports_own_writes or self._read_only(call):
            return None
        try:
            return await asyncio.to_thread(checkpoints.command_started)
        except Exception:
            return None  # without it a rewind asks before touching such files

    async def _writes_done(self, token: str) -> None:
        try:
            await asyncio.shield(asyncio.to_thread(self.deps.checkpoints.command_finished, token))
        except Exception:
            pass

    def _finish(self, call: ToolCall, result: ToolResult) -> None:
        record = ToolResultRecord(
            turn_id=self.id,
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
        )
        self._record(record, durable=True)
        text, _ = result_wording(record)
        detail_bits = []
        if result.signal:
            detail_bits.append(result.signal)
        if result.exit_code is not None:
            detail_bits.append(f"exit {result.exit_code}")
        self._set_tool_state(
            call,
            result.outcome,
            detail=", ".join(detail_bits),
            result=text,
            side_effects=result.side_effects,
            exit_code=result.exit_code,
            signal=result.signal,
            residue=record.residue,
        )
        if result.residue:
            listing = ", ".join(f"{r.pid} ({r.cmdline})" for r in result.residue)
            self._emit(
                Notice(
                    level=NoticeLevel.WARNING,
                    text=f"{call.name}: {len(result.residue)} process(es) could not be ended: {listing}",
                )
            )
        if self.state is TurnState.CANCELLING and self._running_at_cancel:
            self._ended_while_cancelling += 1
            self._emit(
                TurnStateChanged(
                    turn_id=self.id,
                    state=TurnState.CANCELLING,
                    detail=f"{self._ended_while_cancelling} of "
                    f"{self._running_at_cancel} running tool calls ended",
                )
            )

    # -- steering ---------------------------------------------------------------------

    def cancel_call(self, tool_use_id: str) -> bool:
        """Stop one running call, leaving the turn to go on."""
        scope = self._tool_scopes.get(tool_use_id)
        return scope is not None and scope.cancel(CancelReason.USER_INTERRUPT)

    def send_to_background(self) -> int:
        """Move running calls that can keep running in the background there (send-now).
        Returns how many were asked."""
        asked = 0
        for call_id, scope in list(self._tool_scopes.items()):
            tool = self.calls[call_id].tool
            if tool is not None and tool.can_background:
                asked += scope.cancel(CancelReason.SEND_TO_BACKGROUND)
        return asked

    def _apply_steers(self) -> None:
        """Steers ride after this batch's tool results, before the next model call."""
        for item in self.deps.queue.take_steers():
            self._record(
                SteerRecord(
                    id=item.id, steer_kind=item.kind, state="applied", text=item.text,
                    turn_id=self.id, delivery="injected",
                )
            )
            self._emit(SteerState(id=item.id, state=SteerStatus.APPLIED, kind=item.kind, text=item.text))


async def _close_stream(stream: Any) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is None:
        return
    try:
        await asyncio.wait_for(aclose(), timeout=2.0)
    except Exception:
        pass  # closing is best effort; the connection is dropped with the client
