"""The Tool adapter: one MCP server tool as ``mcp__SERVER__TOOL``.

The input schema is the server's; input is checked against it (JSON Schema) before
the call. ``read_only`` follows the tool's ``readOnlyHint`` annotation. The result's
content is turned into text and image blocks by :mod:`.content`.

How a call ends, and what the model is told:

- the server answered: ``succeeded`` with its content, or ``failed`` when it said
  ``isError`` or answered with a JSON-RPC error;
- the core cancelled (Esc, or our call timeout): we send ``notifications/cancelled``
  for the request and wait ``confirm_s`` (1 s) for the server's answer. An error answer
  is the server confirming it stopped: ``cancelled_while_running``. A result is the
  fact: ``succeeded``, even though we asked to cancel. Silence: ``unknown``, and the
  model is told the remote result is unknown and to check before retrying (for a
  read-only tool: that nothing changed). The framing of these words is the core's
  (``history.result_wording``); the content here says only what the server did;
- the connection was lost mid-call (the server crashed): ``unknown`` for a tool that
  may have side effects, ``failed`` for a read-only one.

**MCP tasks.** On a server that takes tool calls as tasks (``conn.task_calls``), a tool
whose ``execution.taskSupport`` is ``required`` always runs as a task; one that is
``optional`` runs plainly until a plain call of it took ``TASK_AFTER_S`` or more, and as
a task from then on (a long call gains the task's status and its ``tasks/cancel``).
A cancelled task ends ``cancelled_while_running`` when the server answers
``tasks/cancel`` with ``cancelled``, and ``unknown`` when it stays silent. A task we
lose track of (``tasks/get`` fails) is ``unknown`` too.

Every call carries ``_meta: {"agent_tui/operation_id": ctx.operation_id}`` so that a
server can recognise a retried operation.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import zlib
from typing import Any, Final

import mcp_types as types
from pydantic import BaseModel, ConfigDict

from agent_tui.cancel import CancelReason, Cancelled, CancelScope
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.core.calls.tool import InvalidInput, Outcome, Tool, ToolContext, ToolResult
from agent_tui.mcp.call import Answer, AnswerKind
from agent_tui.mcp.connection import McpConnection
from agent_tui.mcp.content import render_content
from agent_tui.mcp.errors import ServerUnavailable

OPERATION_META_KEY: Final = "agent_tui/operation_id"
#: The model API limits tool names to 64 characters of [A-Za-z0-9_-].
MAX_TOOL_NAME = 64
_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")
REQUEST_CANCELLED = -32800  # the SDK's HTTP transport answers a cancelled request so
#: A plain call of an ``optional`` task tool that took this long makes its later calls tasks.
TASK_AFTER_S = 5.0


class McpArgs(BaseModel):
    """Whatever the server's schema allows: checked in :meth:`McpTool.parse`."""

    model_config = ConfigDict(extra="allow")


def tool_name(server: str, tool: str) -> str:
    """``mcp__SERVER__TOOL``, made safe and short enough for the model API."""
    name = f"mcp__{server}__{_BAD_CHARS.sub('_', tool)}"
    if len(name) > MAX_TOOL_NAME:
        digest = f"{zlib.crc32(name.encode()):08x}"
        name = f"{name[: MAX_TOOL_NAME - 9]}_{digest}"
    return name


class McpTool(Tool[McpArgs]):
    Input = McpArgs

    def __init__(
        self,
        conn: McpConnection,
        spec: types.Tool,
        *,
        confirm_s: float = 1.0,
        call_timeout_s: float | None = None,
    ) -> None:
        self.conn = conn
        self.server = conn.name
        self.spec_source = spec  # as the server listed it (a new listing is compared to it)
        self.remote_name = spec.name
        self.name = tool_name(conn.name, spec.name)  # per instance
        self.description = (
            spec.description or spec.title or f"{spec.name} (from MCP server {conn.name})"
        )
        hints = spec.annotations
        self.read_only = bool(hints is not None and hints.read_only_hint is True)
        schema = dict(spec.input_schema or {})
        schema.setdefault("type", "object")
        if schema.get("type") == "object":
            schema.setdefault("properties", {})
        self._schema = schema
        self._validator = _validator(schema)
        self.confirm_s = confirm_s
        self.call_timeout_s = call_timeout_s
        support = spec.execution.task_support if spec.execution is not None else None
        self.task_support = support or "forbidden"
        self.slow = False  # a plain call of it took TASK_AFTER_S or more

    @property
    def as_task(self) -> bool:
        """Whether the next call runs as an MCP task (see the module's docstring)."""
        if not self.conn.task_calls:
            return False
        return self.task_support == "required" or (self.task_support == "optional" and self.slow)

    def task_mode(self) -> str | None:
        """How it runs as an MCP task, in words for ``/mcp`` (None: never)."""
        if not self.conn.task_calls or self.task_support not in ("required", "optional"):
            return None
        if self.task_support == "required":
            return "always"
        return f"now: a call took {TASK_AFTER_S:g} s" if self.slow else f"once a call takes {TASK_AFTER_S:g} s"

    # -- schema ---------------------------------------------------------------

    def input_schema(self) -> dict[str, Any]:
        return self._schema

    def parse(self, raw: dict[str, Any]) -> McpArgs:
        if not isinstance(raw, dict):
            raise InvalidInput(f"invalid input for {self.name}: expected an object")
        problems = _check(self._validator, self._schema, raw)
        if problems:
            raise InvalidInput(f"invalid input for {self.name}: {'; '.join(problems)}")
        return McpArgs.model_validate(raw)

    def summary(self, args: McpArgs) -> str:
        text = json.dumps(args.model_dump(), ensure_ascii=False, separators=(",", ":"))
        if len(text) > 200:
            text = text[:199] + "…"
        return f"{self.server}: {self.remote_name} {text}"

    # -- running ----------------------------------------------------------------

    async def run(self, args: McpArgs, ctx: ToolContext) -> ToolResult:
        scope = ctx.scope.child(f"mcp:{self.name}")
        if self.call_timeout_s is not None:
            scope.cancel_after(self.call_timeout_s)
        try:
            return await self._run(args, ctx, scope)
        finally:
            scope.detach()

    async def _run(self, args: McpArgs, ctx: ToolContext, scope: CancelScope) -> ToolResult:
        arguments = args.model_dump()
        try:
            await self.conn.wait_ready(scope)
        except Cancelled as exc:
            return self._result(
                ToolState.CANCELLED_WHILE_RUNNING,
                f"MCP server '{self.server}' was still starting: {self.remote_name} was not called.",
                ended_by=exc.reason, side_effects=SideEffects.NONE, is_error=True,
            )
        except ServerUnavailable as exc:
            return self._result(
                ToolState.FAILED, f"MCP server '{self.server}' is not available: {exc}",
                side_effects=SideEffects.NONE, is_error=True,
            )
        # RequestParamsMeta is open (``extra_items=Any``, PEP 728), which mypy does not
        # read yet: it takes the extra key for an unknown one.
        meta: types.RequestParamsMeta = {OPERATION_META_KEY: ctx.operation_id}  # type: ignore[typeddict-unknown-key]
        call = self.conn.submit(self.remote_name, arguments, meta, ctx.emit_output, as_task=self.as_task)
        began = time.monotonic()
        try:
            try:
                async with scope.linked():
                    answer = await asyncio.shield(call.answer)
                if not call.as_task and time.monotonic() - began >= TASK_AFTER_S:
                    self.slow = True
                return self._finished(answer, call.request_id, call.task_id)
            except Cancelled as exc:
                reason = exc.reason
            call.request_cancel(self._why(reason))
            try:
                answer = await asyncio.wait_for(asyncio.shield(call.answer), self.confirm_s)
            except TimeoutError:
                call.abandon()
                return self._silent_after_cancel(reason, call.request_id, task_id=call.task_id)
            return self._after_cancel(answer, reason, call.request_id, call.task_id)
        finally:
            if not call.answer.done():  # our own task was cancelled: stop the request too
                call.request_cancel("cancelled")
                call.abandon()

    # -- wording ------------------------------------------------------------------

    def _effects(self) -> SideEffects:
        return SideEffects.NONE if self.read_only else SideEffects.UNVERIFIED

    def _result(self, outcome: Outcome, content: str, *, request_id: str | None = None,
                is_error: bool = False, side_effects: SideEffects | None = None,
                ended_by: CancelReason | None = None, details_confirmed: bool = False,
                blocks: list[dict[str, Any]] | None = None, task_id: str | None = None) -> ToolResult:
        details: dict[str, Any] = {"server": self.server, "tool": self.remote_name,
                                   "request_id": request_id}
        if task_id is not None:
            details["task_id"] = task_id
        if ended_by is not None:
            details["confirmed"] = details_confirmed
        return ToolResult(
            outcome=outcome, content=content, details=details, is_error=is_error,
            side_effects=self._effects() if side_effects is None else side_effects,
            ended_by=ended_by, blocks=blocks,
        )

    def _finished(self, answer: Answer, request_id: str | None, task_id: str | None = None) -> ToolResult:
        where = f"MCP server '{self.server}'"
        if answer.kind is AnswerKind.RESULT:
            assert answer.result is not None
            text, images = render_content(answer.result)
            if answer.result.is_error:
                return self._result(ToolState.FAILED, text or f"{self.remote_name} reported an error",
                                    request_id=request_id, is_error=True, blocks=images or None,
                                    task_id=task_id)
            return self._result(ToolState.SUCCEEDED, text, request_id=request_id,
                                blocks=images or None, task_id=task_id)
        if answer.kind is AnswerKind.ERROR:
            return self._result(
                ToolState.FAILED, f"{where} answered with error {answer.code}: {answer.message}",
                request_id=request_id, is_error=True, task_id=task_id,
            )
        if answer.kind is AnswerKind.TASK_LOST:
            cause = (f"{where} ran {self.remote_name} as task {task_id}, then could not tell its state "
                     f"({answer.message})")
            if self.read_only:
                return self._result(ToolState.FAILED, cause + ".", request_id=request_id, is_error=True,
                                    task_id=task_id)
            return self._result(ToolState.UNKNOWN, cause + "; the call may or may not have taken effect "
                                "on the server", request_id=request_id, is_error=True, task_id=task_id)
        if answer.kind is AnswerKind.TASK_CANCELLED:  # not ours to ask for: the server cancelled it
            return self._result(ToolState.FAILED, f"{where} cancelled task {task_id} ({self.remote_name})"
                                + (f": {answer.message}" if answer.message else "."),
                                request_id=request_id, is_error=True, task_id=task_id)
        if answer.kind is AnswerKind.MALFORMED:
            return self._result(
                ToolState.FAILED,
                f"{where} returned a malformed result for {self.remote_name} ({answer.message}). "
                + ("" if self.read_only else "Whether it took effect is unknown; check before retrying."),
                request_id=request_id, is_error=True,
            )
        # CLOSED / ABANDONED: the connection ended under the call.
        if self.conn.login_needed:  # refused (401/403) before it ran: a login is wanted
            return self._result(
                ToolState.FAILED, f"{where} wants a new login before it runs {self.remote_name}, which did "
                f"not run: {self.conn.error or 'needs a login'}", request_id=request_id, is_error=True,
                side_effects=SideEffects.NONE)
        tail = self.conn.stderr_tail()
        cause = f"{where} closed the connection while {self.remote_name} was running"
        cause += f" (stderr: {tail})" if tail else " (the server may have crashed)"
        if self.read_only or request_id is None:
            return self._result(ToolState.FAILED, cause + ".", request_id=request_id, is_error=True,
                                side_effects=SideEffects.NONE if request_id is None else self._effects())
        # The core words an unknown result around this cause (history.result_wording).
        return self._result(
            ToolState.UNKNOWN, cause + "; the call may or may not have taken effect on the server",
            request_id=request_id, is_error=True,
        )

    # After a cancel, the core's wording says who stopped the call and what that means
    # (history.result_wording); the content says what the server did about it.

    def _after_cancel(self, answer: Answer, reason: CancelReason, request_id: str | None,
                      task_id: str | None = None) -> ToolResult:
        if answer.kind is AnswerKind.NOT_SENT:
            return self._result(
                ToolState.CANCELLED_WHILE_RUNNING,
                f"The request never reached MCP server '{self.server}': {self.remote_name} did not run.",
                request_id=None, is_error=True, ended_by=reason, side_effects=SideEffects.NONE,
            )
        if answer.kind is AnswerKind.TASK_CANCELLED:
            said = f": {answer.message}" if answer.message else ""
            return self._result(
                ToolState.CANCELLED_WHILE_RUNNING,
                f"MCP server '{self.server}' confirmed it cancelled task {task_id} ({self.remote_name}){said}.",
                request_id=request_id, is_error=True, ended_by=reason, details_confirmed=True,
                task_id=task_id,
            )
        if answer.kind is AnswerKind.RESULT:
            result = self._finished(answer, request_id, task_id)  # it finished first: that is the fact
            result.details["arrived_after_cancel"] = True
            return result
        if answer.kind is AnswerKind.ERROR:
            return self._result(
                ToolState.CANCELLED_WHILE_RUNNING,
                f"MCP server '{self.server}' confirmed it stopped {self.remote_name} "
                f"(error {answer.code}: {answer.message}).",
                request_id=request_id, is_error=True, ended_by=reason,
                details_confirmed=True,
            )
        return self._silent_after_cancel(reason, request_id, answer, task_id=task_id)

    def _silent_after_cancel(self, reason: CancelReason, request_id: str | None,
                             answer: Answer | None = None, *, task_id: str | None = None) -> ToolResult:
        why = self._why(reason)
        lost = answer is not None and answer.kind in (AnswerKind.CLOSED, AnswerKind.MALFORMED)
        how = ("the connection to the server ended" if lost
               else f"the server did not confirm within {self.confirm_s:g} s")
        what = self.remote_name if task_id is None else f"task {task_id} ({self.remote_name})"
        text = f"{why}: asked MCP server '{self.server}' to cancel {what}, but {how}"
        text += "; no result" if self.read_only else (
            "; the call may have completed, partly run, or not run on the server")
        return self._result(ToolState.UNKNOWN, text, request_id=request_id, is_error=True, ended_by=reason,
                            task_id=task_id)


    def _why(self, reason: CancelReason) -> str:
        if reason is CancelReason.TIMEOUT and self.call_timeout_s is not None:
            return (f"Timed out after {self.call_timeout_s:g} s (MCP server '{self.server}''s tool "
                    "timeout: its \"timeout\" setting or MCP_TOOL_TIMEOUT, in milliseconds)")
        return _reason_text(reason)


def _reason_text(reason: CancelReason) -> str:
    return {
        CancelReason.USER_INTERRUPT: "Interrupted by the user",
        CancelReason.TIMEOUT: "Timed out",
        CancelReason.SHUTDOWN: "Stopped at shutdown",
    }.get(reason, f"Cancelled ({reason})")


def _validator(schema: dict[str, Any]) -> Any:
    try:
        from jsonschema import validators
        from jsonschema.exceptions import SchemaError

        cls = validators.validator_for(schema)
        cls.check_schema(schema)
        return cls(schema)
    except (ImportError, SchemaError, Exception):
        return None  # a broken schema: fall back to checking required keys


def _check(validator: Any, schema: dict[str, Any], raw: dict[str, Any]) -> list[str]:
    if validator is None:
        required = schema.get("required") or []
        return [f"{key}: required" for key in required if isinstance(key, str) and key not in raw]
    problems = []
    for err in sorted(validator.iter_errors(raw), key=lambda e: list(e.path))[:5]:
        where = ".".join(str(p) for p in err.path) or "input"
        problems.append(f"{where}: {err.message}")
    return problems
