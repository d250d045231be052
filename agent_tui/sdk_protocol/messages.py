"""agent-tui's Events as Claude Code's stream-json messages.

- ``system``/``init`` opens each turn: the session id, the model, the tools and the
  permission mode in Claude Code's words, the MCP servers, the slash commands.
- ``assistant``: one message per content block, as Claude Code sends them (a text
  block when the model's text ends, a ``tool_use`` block when a call is complete);
  tools carry Claude Code's names and input shapes (``Bash``, ``file_path``...).
- ``user``: a ``tool_result`` block when a call has ended, worded as the model is told
  (a denied, cancelled or unknown call included, ``is_error`` true).
- ``assistant`` thinking blocks (``signature`` empty: the app cannot send them back).
- ``stream_event`` (``--include-partial-messages``): the model's stream as the
  Messages API events, for thinking, text and tool calls: ``message_start`` with the
  API's message id and the usage it said then, ``message_delta`` with the request's
  usage as the API reported it at the end and its stop reason (``max_tokens``,
  ``refusal``... as the API said it). Each ``assistant`` message carries its response's
  ``message_start`` usage, as Claude Code's do.
- ``result``: one per turn, Claude Code's shape (``headless.run_result``);
  ``total_cost_usd`` is 0 when the model's price is unknown (Claude Code's is a number).

Sub-agents' calls carry ``parent_tool_use_id``; their text is not forwarded (as
Claude Code does by default).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from agent_tui.core.calls.state import TERMINAL_TOOL_STATES
from agent_tui.core.session.session import Session
from agent_tui.headless import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, Tally, run_result
from agent_tui.permissions import Permissions
from agent_tui.protocol import (
    Event,
    ModelChanged,
    ResponseStarted,
    TextDelta,
    ThinkingDelta,
    ToolState,
    ToolStateChanged,
    TurnEnded,
    TurnStarted,
    TurnStatus,
    Usage,
)
from agent_tui.protocol.states import RequestPurpose
from agent_tui.protocol.tool_names import claude_input, claude_name

#: The Claude Code release whose messages and control protocol this speaks (checked
#: against it); the SDK reads it from ``system``/``init``.
CLAUDE_CODE_PROTOCOL_VERSION = "2.1.327"
_ENDED = TERMINAL_TOOL_STATES  # a call that has ended: its result goes to the app


def _uuid() -> str:
    return str(uuid.uuid4())


class Messages:
    """Turns the session's Events into messages for ``send``."""

    def __init__(self, send: Callable[[dict[str, Any]], None], *, partial: bool) -> None:
        self.send = send
        self.partial = partial
        self.session: Session | None = None
        self.model = ""
        self._text = ""  # the main agent's text block so far
        self._thinking = ""  # ... and its thinking block
        self._used_tools = False  # the message being streamed has a tool_use block
        self._message_id: str | None = None  # the model's message being streamed
        self._start_usage: dict[str, Any] | None = None  # its message_start usage
        self._usage_of: dict[str | None, dict[str, Any]] = {}  # by parent: the last usage
        self._stop_reason: str | None = None  # the turn's last response's
        self._block = 0  # the index of the next content block in it
        self._announced: set[str] = set()  # tool calls already sent as tool_use
        self._turn_began = 0.0
        self._turn_from = 0  # the session's records before the turn
        self._tally = Tally()
        self.on_turn_ended: Callable[[TurnEnded], None] = lambda _ended: None

    def attach(self, session: Session) -> None:
        self.session = session
        self.model = session.deps.config.model

    @property
    def session_id(self) -> str:
        return self.session.session_id if self.session is not None else ""

    # -- the session's Events ------------------------------------------------------

    def __call__(self, event: Event) -> None:
        self._tally.see(event)
        if isinstance(event, TurnStarted):
            self._turn_started()
        elif isinstance(event, TextDelta):
            if event.parent_tool_use_id is None:
                self._text_delta(event.text)
        elif isinstance(event, ToolStateChanged):
            self._tool_state(event)
        elif isinstance(event, ThinkingDelta):
            if event.parent_tool_use_id is None:
                self._thinking_delta(event.text)
        elif isinstance(event, ResponseStarted):
            if event.purpose is RequestPurpose.TURN:
                self._response_started(event)
        elif isinstance(event, Usage):
            if event.parent_tool_use_id is None and event.purpose is RequestPurpose.TURN:
                self._message_ended(event)
        elif isinstance(event, ModelChanged):
            self.model = event.model
        elif isinstance(event, TurnEnded):
            self._message_ended()
            self.send(self.result(event))
            self.on_turn_ended(event)

    def init(self) -> dict[str, Any]:
        session = self.session
        assert session is not None
        policy = session.policy
        mode = policy.mode.claude_name if isinstance(policy, Permissions) else "default"
        tools = [claude_name(name) for name in session.tools.names()]
        servers = sorted({name.split("__")[1] for name in session.tools.names()
                          if name.startswith("mcp__") and name.count("__") >= 2})
        return {
            "type": "system", "subtype": "init", "cwd": str(session.workspace),
            "session_id": session.session_id, "tools": tools,
            "mcp_servers": [{"name": name, "status": "connected"} for name in servers],
            "model": self.model, "permissionMode": mode, "slash_commands": _commands(session),
            "apiKeySource": "none", "claude_code_version": CLAUDE_CODE_PROTOCOL_VERSION,
            "output_style": "default", "agents": _agents(session), "skills": [], "plugins": [],
            "uuid": _uuid(),
        }

    def _turn_started(self) -> None:
        assert self.session is not None
        self._tally = Tally()
        self._turn_began = time.monotonic()
        self._turn_from = len(self.session.records())
        self._announced.clear()
        self._stop_reason = None
        self._usage_of.clear()
        self.send(self.init())

    def _response_started(self, started: ResponseStarted) -> None:
        """A response began: a sub-agent's usage is kept for its messages; the main
        agent's opens its ``message_start`` at once, as the API's stream does."""
        usage = {"input_tokens": started.input_tokens,
                 "cache_creation_input_tokens": started.cache_creation_input_tokens,
                 "cache_read_input_tokens": started.cache_read_input_tokens,
                 "output_tokens": started.output_tokens}
        self._usage_of[started.parent_tool_use_id] = usage
        if started.parent_tool_use_id is None:
            self._message_ended()  # a response whose end was not told (never expected)
            self._open_message(started.message_id or None, usage)

    def _thinking_delta(self, text: str) -> None:
        if not self._thinking:
            self._text_ended()
            self._block_start({"type": "thinking", "thinking": "", "signature": ""})
        self._thinking += text
        self._stream({"type": "content_block_delta", "index": self._block,
                      "delta": {"type": "thinking_delta", "thinking": text}})

    def _text_delta(self, text: str) -> None:
        if not self._text:
            self._thinking_ended()
            self._block_start({"type": "text", "text": ""})
        self._text += text
        self._stream({"type": "content_block_delta", "index": self._block,
                      "delta": {"type": "text_delta", "text": text}})

    def _tool_state(self, event: ToolStateChanged) -> None:
        if event.state is ToolState.STREAMING:
            return
        if event.tool_use_id not in self._announced:
            self._announced.add(event.tool_use_id)
            self._tool_use(event)
        if event.state in _ENDED:
            self._tool_result(event)

    def _tool_use(self, event: ToolStateChanged) -> None:
        main = event.parent_tool_use_id is None
        if main:
            self._text_ended()
            self._used_tools = True
        block = {"type": "tool_use", "id": event.tool_use_id, "name": claude_name(event.name),
                 "input": self._claude_input(event.name, event.input or {})}
        if not main:
            self.send(self._assistant([block], event.parent_tool_use_id))
            return
        self._block_start({**block, "input": {}})
        self._stream({"type": "content_block_delta", "index": self._block, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        self._block_ended(block)

    def _tool_result(self, event: ToolStateChanged) -> None:
        failed = event.state is not ToolState.SUCCEEDED
        content = event.result if event.result is not None else (event.detail or str(event.state))
        self.send({
            "type": "user", "message": {"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": event.tool_use_id, "content": content,
                "is_error": failed}]},
            "parent_tool_use_id": event.parent_tool_use_id, "session_id": self.session_id,
            "uuid": _uuid(), "tool_use_result": content,
        })

    # -- the model's message, block by block ----------------------------------------

    def _open_message(self, message_id: str | None, usage: dict[str, Any]) -> None:
        self._message_id = message_id or f"msg_{uuid.uuid4().hex[:24]}"
        self._start_usage = usage
        self._block = 0
        self._stream({"type": "message_start", "message": {
            "id": self._message_id, "type": "message", "role": "assistant",
            "model": self.model, "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": usage}})

    def _block_start(self, block: dict[str, Any]) -> None:
        if self._message_id is None:  # a provider that said no message_start
            self._open_message(None, dict(_NO_USAGE))
        self._stream({"type": "content_block_start", "index": self._block,
                      "content_block": block})

    def _thinking_ended(self) -> None:
        if not self._thinking:
            return
        thinking, self._thinking = self._thinking, ""
        self._block_ended({"type": "thinking", "thinking": thinking, "signature": ""})

    def _text_ended(self) -> None:
        self._thinking_ended()
        if not self._text:
            return
        text, self._text = self._text, ""
        self._block_ended({"type": "text", "text": text})

    def _block_ended(self, block: dict[str, Any]) -> None:
        """The main agent's block is whole: its ``assistant`` message, then its
        ``content_block_stop`` (Claude Code's order)."""
        self.send(self._assistant([block], None))
        self._stream({"type": "content_block_stop", "index": self._block})
        self._block += 1

    def _message_ended(self, usage: Usage | None = None) -> None:
        self._text_ended()
        if usage is not None and usage.stop_reason is not None:
            self._stop_reason = usage.stop_reason
        if self._message_id is not None:
            if usage is not None and not usage.interrupted:
                stop = usage.stop_reason or ("tool_use" if self._used_tools else "end_turn")
                self._stream({"type": "message_delta", "delta": {
                    "stop_reason": stop, "stop_sequence": None}, "usage": _usage(usage)})
            self._stream({"type": "message_stop"})
        self._message_id = None
        self._start_usage = None
        self._used_tools = False

    def _assistant(self, content: list[dict[str, Any]], parent: str | None) -> dict[str, Any]:
        return {
            "type": "assistant", "message": {
                "id": self._message_id or f"msg_{uuid.uuid4().hex[:24]}", "type": "message",
                "role": "assistant", "model": self.model, "content": content,
                "stop_reason": None, "stop_sequence": None,
                "usage": self._start_usage if parent is None else self._usage_of.get(parent)},
            "parent_tool_use_id": parent, "session_id": self.session_id, "uuid": _uuid(),
        }

    def _stream(self, event: dict[str, Any]) -> None:
        if self.partial:
            self.send({"type": "stream_event", "event": event, "session_id": self.session_id,
                       "parent_tool_use_id": None, "uuid": _uuid()})

    def _claude_input(self, name: str, given: dict[str, Any]) -> dict[str, Any]:
        workspace = str(self.session.workspace) if self.session is not None else ""
        return claude_input(name, given, workspace)

    # -- the turn's result ----------------------------------------------------------

    def result(self, ended: TurnEnded) -> dict[str, Any]:
        assert self.session is not None
        code = {TurnStatus.COMPLETED: EXIT_OK, TurnStatus.CANCELLED: EXIT_INTERRUPTED}.get(
            ended.status, EXIT_ERROR)
        result = run_result(self.session, self._tally, code,
                            elapsed=time.monotonic() - self._turn_began,
                            records=self.session.records()[self._turn_from:])
        # a completed turn's is its last response's, as Claude Code's
        stop = {TurnStatus.COMPLETED: self._stop_reason or "end_turn",
                TurnStatus.CANCELLED: "interrupted"}
        shown = result.model_dump(mode="json")
        # Claude Code always gives a number, and apps compare it (the SDK's quick start
        # does): a model whose price is unknown costs 0 here, and a cap cannot be kept
        if shown.get("total_cost_usd") is None:
            shown["total_cost_usd"] = 0.0
        if ended.status is TurnStatus.COMPLETED and self._stop_reason == "max_tokens":
            shown["is_error"] = True  # cut again after the turn asked it to go on: an
            # error in Claude Code's result too (the cut answer stays the result's text)
        return {**shown, "uuid": _uuid(),
                "stop_reason": stop.get(ended.status), "terminal_reason": str(ended.status)}


_NO_USAGE = {"input_tokens": 0, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0, "output_tokens": 0}


def _usage(usage: Usage) -> dict[str, Any]:
    """A request's usage in the API's words."""
    return {"input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "output_tokens": usage.output_tokens,
            "server_tool_use": {"web_search_requests": usage.web_search_requests}}


def _agents(session: Session) -> list[str]:
    """The sub-agent types the ``task`` tool offers (files' and the app's)."""
    types = getattr(session.tools.first(lambda t: t.starts_agents), "agent_types", None)
    return list(types.names()) if types is not None else []


def _commands(session: Session) -> list[str]:
    """The slash commands a message may start with: the workspace's custom ones."""
    from agent_tui.commands.use import custom_names

    try:
        return list(custom_names(session.workspace))
    except OSError:
        return []
