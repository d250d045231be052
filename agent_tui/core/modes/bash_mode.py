"""Bash mode: a command the user typed (``!cmd``), run at once, with no model request.

It runs through the session's command runner: the ``bash`` tool the wiring handed the
core (its cgroup, its sandbox, its limits), under a cancel scope of its own that an
``interrupt`` (Esc) cancels, with the same two phases as a tool call (told to stop,
then a bounded time to report). Its state and output are shown as a call of ``bash``
outside any turn (``turn_id`` ""). The journal keeps a ``user_command`` record; the
model sees the command and its output with the next user message
(``UserCommandRecord.model_texts``).

Permission: the command is the user's own, so nothing asks; a **deny rule** still
refuses it (a rule the user wrote for this project: the same commands stay out of
reach, whoever types them), with the rule named.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any, ClassVar

from pydantic import BaseModel

from agent_tui.cancel import CancelReason, Cancelled, CancelScope
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.services.tasks import SessionTask, TaskContext, WorkKind
from agent_tui.protocol.tool_names import shell_tool
from agent_tui.core.journal.journal import JournalWriteError
from agent_tui.core.calls.permission import decided_by
from agent_tui.core.journal.records import UserCommandRecord
from agent_tui.core.calls.tool import AnyTool, InvalidInput, ToolContext, ToolResult
from agent_tui.protocol import (
    BASH_MODE_ID_PREFIX,
    ToolOutput,
    ToolState,
    ToolStateChanged,
    Verdict,
)


class UserCommandTask(SessionTask):
    """A ``!`` command in the session's slot: what is sent meanwhile waits for it; Esc
    stops it (its scope is the command's, as a tool call's is)."""

    kind: ClassVar[WorkKind] = WorkKind.USER_COMMAND
    records: ClassVar[tuple[type[BaseModel], ...]] = (UserCommandRecord,)

    def __init__(self, command: str) -> None:
        self.command = command

    @property
    def what(self) -> str:
        return "the command"

    async def run(self, ctx: TaskContext, scope: CancelScope) -> None:
        await run_user_command(ctx.deps, scope, self.command)


async def run_user_command(deps: SessionDeps, scope: CancelScope, command: str) -> None:
    """Run ``command`` for the user; say each state; journal how it ended."""
    call_id = BASH_MODE_ID_PREFIX + secrets.token_hex(6)
    name = shell_tool()  # the shell's name, whether this session offers it or not
    tool = deps.tools.get(name)

    def state(value: ToolState, **facts: Any) -> None:
        deps.emit(ToolStateChanged(turn_id="", tool_use_id=call_id, name=name, state=value,
                                   summary=f"! {command}", input={"command": command}, **facts))

    def done(record: UserCommandRecord) -> None:
        try:
            deps.journal.append(record, durable=True)
        except JournalWriteError as exc:
            deps.emit(exc.notice())
        detail = record.ended or (f"exit {record.exit_code}" if record.exit_code is not None else "")
        # No ``result``: the output was shown as it came (the journal keeps it whole).
        state(record.state, detail=detail, exit_code=record.exit_code, signal=record.signal)

    if tool is None:
        done(UserCommandRecord(id=call_id, command=command, state=ToolState.FAILED,
                               ended="Not run: this session has no command runner"))
        return
    try:
        args = tool.parse({"command": command})
    except InvalidInput as exc:
        done(UserCommandRecord(id=call_id, command=command, state=ToolState.FAILED,
                               ended=f"Not run: {exc}"))
        return
    ruling = deps.policy.check(tool, args)
    if ruling.verdict is Verdict.DENY and decided_by(ruling.rule) == "rule":
        done(UserCommandRecord(id=call_id, command=command, state=ToolState.DENIED,
                               ended=f"Not run: {ruling.reason or 'denied by a rule'}"))
        return
    state(ToolState.RUNNING)
    result = await _run(deps, tool, args, scope, call_id)
    done(UserCommandRecord(id=call_id, command=command, state=result.outcome,
                           output=result.content, exit_code=result.exit_code,
                           signal=result.signal, ended=_ending(result)))


async def _run(deps: SessionDeps, tool: AnyTool, args: BaseModel, scope: CancelScope,
               call_id: str) -> ToolResult:
    ctx = ToolContext(
        scope=scope, workspace=deps.config.workspace, tool_use_id=call_id,
        operation_id=call_id, env=dict(deps.config.env),
        added_dirs=tuple(deps.config.added_dirs),
        emit_output=lambda text: deps.emit(ToolOutput(turn_id="", tool_use_id=call_id,
                                                      text=text)),
    )
    task = asyncio.create_task(tool.run(args, ctx))
    stop_asked = asyncio.create_task(scope.wait())
    budget = deps.config.cleanup_budget
    try:
        await asyncio.wait({task, stop_asked}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():  # phase 2: told to stop, it has a bounded time to report
            await asyncio.wait({task}, timeout=budget)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        stop_asked.cancel()
    if not task.done():
        task.cancel()
        return ToolResult(outcome=ToolState.UNKNOWN, is_error=True, ended_by=scope.reason,
                          content=f"the command did not confirm it stopped within {budget:g} s")
    exc = task.exception()
    if isinstance(exc, Cancelled):
        return ToolResult(outcome=ToolState.CANCELLED_WHILE_RUNNING, content="", is_error=True,
                          ended_by=exc.reason)
    if exc is not None:
        return ToolResult.error(f"the command failed with an internal error: {exc!r}")
    return task.result()


def _ending(result: ToolResult) -> str:
    """How it ended, when not by itself with exit code 0."""
    if result.outcome is ToolState.SUCCEEDED:
        return ""
    facts = ", ".join(f for f in (result.signal, f"exit code {result.exit_code}"
                                  if result.exit_code is not None else "") if f)
    if result.ended_by is CancelReason.USER_INTERRUPT:
        return "Interrupted by the user" + (f" ({facts})" if facts else "")
    if result.outcome is ToolState.UNKNOWN:
        return f"Result unknown: {result.content}"
    if result.exit_code is not None and not result.signal:
        return f"Exit code {result.exit_code}"
    return "Failed" + (f" ({facts})" if facts else "")
