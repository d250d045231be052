"""Events and journal records as ACP ``session/update`` payloads.

Owns the mapping, nothing else: no I/O, no connection. :class:`UpdateMapper` turns
the core's Events of one session into the updates a client renders (message chunks,
tool calls and their status updates) and replays a saved journal the same way for
``session/load``. :func:`plan_update` is the model's plan (``todo_write``) as a
``plan`` update: ACP's entries with priority and status; an item cut off by an
interrupt is ``pending`` again, with ``interrupted`` in its ``_meta``.

Tool call states (docs/architecture.md) are finer than ACP's four statuses; the ACP
status says where the call is (``pending`` until it starts, ``in_progress`` while it
runs, then ``completed`` or ``failed``) and our own state rides along in ``_meta``
(every update) and ``rawOutput`` (final updates)::

    {"agent_tui": {"state": "cancelled_while_running", "side_effects": "unverified",
                   "exit_code": null, "signal": "SIGTERM", ...}}

A client that says it shows a terminal fed by the agent (``_meta.terminal_output`` in
its capabilities, Zed's convention: :func:`shows_terminals`) gets a running ``bash``
call as a terminal view: ``content`` ``{"type": "terminal", "terminalId": <call id>}``
with ``_meta.terminal_info`` as it starts, its output as ``_meta.terminal_output``
chunks, and ``_meta.terminal_exit`` at the end. The command still runs in our process
control (docs/acp.md); the view only shows it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, assert_never, get_args

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentPlanUpdate,
    PlanEntryPriority,
    PlanEntryStatus,
    ToolCallStatus,
    ToolKind,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    TerminalToolCallContent,
)

from agent_tui.files.preview import FilePreview, preview
from agent_tui.protocol import ToolOutput, ToolState, ToolStateChanged
from agent_tui.core.history.history import effective_records, result_wording
from agent_tui.core.history.items import (
    BackgroundResult,
    CallStarted,
    Compaction,
    HookContext,
    MemoryNote,
    ModeChanged,
    Reply,
    Rewind,
    Steer,
    Text,
    Thinking,
    ToolCall,
    ToolUse,
    TurnEnded,
    UnfinishedCall,
    UserCommand,
    UserTurn,
    conversation,
)
from agent_tui.core.journal.records import Record
from agent_tui.core.modes.plan import plan_of
from agent_tui.core.calls.tool import ToolSet
from agent_tui.protocol.states import PlanItemState, TodoPriority
from agent_tui.protocol.tool_names import facts, runs_command

META_KEY = "agent_tui"
OUTPUT_TAIL = 16_000  # characters of live output shown while a tool runs

#: ACP's kinds of tool call, by their names (a tool says its own: ``acp_kind``).
_KINDS: dict[str, ToolKind] = {kind: kind for kind in get_args(ToolKind)}

_S = ToolState
ACP_STATUS: dict[ToolState, ToolCallStatus] = {
    _S.STREAMING: "pending",
    _S.QUEUED: "pending",
    _S.AWAITING_APPROVAL: "pending",
    _S.RUNNING: "in_progress",
    _S.SUCCEEDED: "completed",
    _S.FAILED: "failed",
    _S.DENIED: "failed",
    _S.CANCELLED_BEFORE_START: "failed",
    _S.CANCELLED_WHILE_RUNNING: "failed",
    _S.UNKNOWN: "failed",
}

Update = Any  # one of the SDK's session update models


# A plan item as ACP shows it: an interrupted one is pending again (nobody works on it).
PLAN_STATUS: dict[PlanItemState, PlanEntryStatus] = {
    PlanItemState.PENDING: "pending",
    PlanItemState.IN_PROGRESS: "in_progress",
    PlanItemState.COMPLETED: "completed",
    PlanItemState.INTERRUPTED: "pending",
}
PLAN_PRIORITY: dict[TodoPriority, PlanEntryPriority] = {
    TodoPriority.HIGH: "high", TodoPriority.MEDIUM: "medium", TodoPriority.LOW: "low",
}


def tool_kind(name: str) -> ToolKind:
    given = facts(name)
    return _KINDS.get(given.acp_kind, "other") if given is not None else "other"


def tool_locations(name: str, tool_input: dict[str, Any] | None, workspace: Path) -> list[ToolCallLocation]:
    """The file a call reads or edits, as an absolute path (ACP wants absolute ones), at
    the line it starts from (the keys the tool names: ``Tool.file_key``, ``line_key``)."""
    told = facts(name)
    if not tool_input or told is None or not told.file_key:
        return []
    path = tool_input.get(told.file_key)
    if not isinstance(path, str) or not path:
        return []
    absolute = Path(path) if Path(path).is_absolute() else workspace / path
    line = tool_input.get(told.line_key) if told.line_key else None
    if not isinstance(line, int) or line < 0:
        line = None
    return [ToolCallLocation(path=str(absolute), line=line)]


def tool_title(tools: ToolSet | None, name: str, tool_input: dict[str, Any] | None) -> str:
    """The tool's own one-line summary when the input parses, else its name."""
    tool = tools.get(name) if tools is not None else None
    if tool is None or tool_input is None:
        return name
    try:
        return tool.summary(tool.parse(tool_input))
    except Exception:  # a summary is cosmetic: never fail on it (InvalidInput included)
        return name


def plan_update(records: list[Any]) -> AgentPlanUpdate | None:
    """The plan in force after ``records`` as a ``plan`` update; None without a plan."""
    plan = plan_of(effective_records(records))
    if plan is None:
        return None
    entries = []
    for item in plan.items:
        state = plan.state_of(item)
        priority = PLAN_PRIORITY[item.priority] if item.priority else "medium"
        entry = plan_entry(item.content, priority=priority, status=PLAN_STATUS[state])
        entry.field_meta = {META_KEY: {"state": state.value}}
        entries.append(entry)
    update = update_plan(entries)
    update.field_meta = {META_KEY: {"interrupted": plan.interrupted}}
    return update


def shows_terminals(client_capabilities: Any) -> bool:
    """Whether the client shows a terminal the agent feeds (``_meta.terminal_output``)."""
    meta = getattr(client_capabilities, "field_meta", None)
    return isinstance(meta, dict) and meta.get("terminal_output") is True


def _meta(state: ToolState, **facts: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"state": str(state)}
    body.update({k: v for k, v in facts.items() if v not in (None, "", [])})
    return {META_KEY: body}


class UpdateMapper:
    """Per session: remembers which tool calls the client has seen and their output."""

    def __init__(self, workspace: Path, tools: ToolSet | None = None) -> None:
        self.workspace = workspace
        self.tools = tools
        self._started: set[str] = set()
        self._output: dict[str, str] = {}
        self._inputs: dict[str, dict[str, Any] | None] = {}
        self._diffs: dict[str, FilePreview | None] = {}  # made once, before the file changes
        self.terminals = False  # show bash calls as terminal views (:func:`shows_terminals`)
        self._views: set[str] = set()  # the calls shown as one

    def edit_content(self, tool_use_id: str, name: str, tool_input: dict[str, Any] | None) -> list[Any]:
        """A whole-file diff for the file tools that write (``files/preview.py``: a client
        places a diff of the snippet alone at the wrong line, or nowhere), so it can
        show what will change where; computed when first asked for, while the file is
        still as the call found it."""
        if tool_use_id not in self._diffs:
            if tool_input is None:
                return []
            self._diffs[tool_use_id] = preview(name, tool_input, self.workspace)
        diff = self._diffs[tool_use_id]
        return [tool_diff_content(diff.path, diff.new, diff.old)] if diff is not None else []

    # -- live events ---------------------------------------------------------------

    def text(self, text: str) -> Update:
        return update_agent_message_text(text)

    def tool_state(self, event: ToolStateChanged) -> Update:
        if event.input is not None:
            self._inputs[event.tool_use_id] = event.input
        tool_input = self._inputs.get(event.tool_use_id)
        state = event.state
        status = ACP_STATUS[state]
        final = status in ("completed", "failed")
        facts = dict(
            side_effects=str(event.side_effects) if event.side_effects else None,
            exit_code=event.exit_code,
            signal=event.signal,
            detail=event.detail,
            residue=event.residue,
            parent_tool_use_id=event.parent_tool_use_id,
        )
        meta = _meta(state, **facts)
        title = event.summary or event.name
        locations = tool_locations(event.name, tool_input, self.workspace) or None
        content: list[Any] | None = None
        raw_output: Any = None
        if state in (_S.QUEUED, _S.AWAITING_APPROVAL):
            content = self.edit_content(event.tool_use_id, event.name, tool_input) or None
        if final:
            self._output.pop(event.tool_use_id, None)
            content = []
            if state is _S.SUCCEEDED:
                content += self.edit_content(event.tool_use_id, event.name, tool_input)
            self._diffs.pop(event.tool_use_id, None)
            if event.result:
                content.append(tool_content(text_block(event.result)))
            raw_output = {**meta[META_KEY], "result": event.result}
        content = self._terminal(event, meta, content)
        if event.tool_use_id not in self._started:
            self._started.add(event.tool_use_id)
            update: Update = start_tool_call(
                event.tool_use_id,
                title,
                kind=tool_kind(event.name),
                status=status,
                content=content,
                locations=locations,
                raw_input=tool_input,
                raw_output=raw_output,
            )
        else:
            update = update_tool_call(
                event.tool_use_id,
                title=title,
                status=status,
                content=content,
                locations=locations,
                raw_input=tool_input if state is _S.QUEUED else None,
                raw_output=raw_output,
            )
        update.field_meta = meta
        return update

    def _terminal(self, event: ToolStateChanged, meta: dict[str, Any],
                  content: list[Any] | None) -> list[Any] | None:
        """A bash call's terminal view: opened as it runs, told its exit at the end (a
        background command's call ends as it starts: it keeps its text)."""
        view = {"terminal_id": event.tool_use_id}
        background = (self._inputs.get(event.tool_use_id) or {}).get("run_in_background")
        if self.terminals and runs_command(event.name) and event.state is _S.RUNNING \
                and not background and event.tool_use_id not in self._views:
            self._views.add(event.tool_use_id)
            meta["terminal_info"] = {**view, "cwd": str(self.workspace)}
            return [TerminalToolCallContent(type="terminal", terminal_id=event.tool_use_id)]
        if event.tool_use_id in self._views and ACP_STATUS[event.state] in ("completed", "failed"):
            self._views.discard(event.tool_use_id)
            meta["terminal_exit"] = {**view, "exit_code": event.exit_code, "signal": event.signal}
            terminal = TerminalToolCallContent(type="terminal", terminal_id=event.tool_use_id)
            return [terminal, *(content or [])]
        return content

    def tool_output(self, event: ToolOutput) -> Update | None:
        """Live output of a running call: the content shows the latest tail (a terminal
        view gets each chunk as it comes)."""
        if event.tool_use_id not in self._started:
            return None
        if event.tool_use_id in self._views:
            update = update_tool_call(event.tool_use_id)
            update.field_meta = {"terminal_output": {"terminal_id": event.tool_use_id,
                                                     "data": event.text}}
            return update
        tail = (self._output.get(event.tool_use_id, "") + event.text)[-OUTPUT_TAIL:]
        self._output[event.tool_use_id] = tail
        return update_tool_call(event.tool_use_id, content=[tool_content(text_block(tail))])

    def permission_call(self, tool_use_id: str, name: str, summary: str, tool_input: dict[str, Any]) -> ToolCallUpdate:
        """The tool call a permission request is about (the client already knows it)."""
        return ToolCallUpdate(
            tool_call_id=tool_use_id,
            title=summary or name,
            kind=tool_kind(name),
            status="pending",
            raw_input=tool_input,
            locations=tool_locations(name, tool_input, self.workspace) or None,
            content=self.edit_content(tool_use_id, name, tool_input) or None,
        )

    # -- replay (session/load) -------------------------------------------------------

    def replay(self, records: list[Record]) -> list[Update]:
        """The saved conversation as the updates a client would have seen."""
        updates: list[Update] = []
        for item in conversation(records).items:
            match item:
                case UserTurn() | Steer():
                    updates.append(update_user_message_text(item.text))
                case Reply():
                    for part in item.parts:
                        match part:
                            case Text():
                                updates.append(update_agent_message_text(part.text))
                            case ToolUse():
                                updates.append(self._replayed_start(part))
                            case Thinking():
                                pass  # not replayed
                            case _:
                                assert_never(part)
                case ToolCall():
                    updates.append(self._replayed_result(item))
                case UnfinishedCall():
                    # The agent stopped while it ran (or before): its turn ended without it.
                    updates.append(self._replayed_missing(item))
                case (TurnEnded() | UserCommand() | BackgroundResult() | Rewind() | Compaction()
                      | CallStarted() | ModeChanged() | MemoryNote() | HookContext()):
                    pass  # nothing a client replays
                case _:
                    assert_never(item)
        plan = plan_update(records)
        return updates + ([plan] if plan is not None else [])

    def _replayed_start(self, use: ToolUse) -> ToolCallStart:
        self._started.add(use.tool_use_id)
        update = start_tool_call(
            use.tool_use_id,
            tool_title(self.tools, use.name, use.input),
            kind=tool_kind(use.name),
            status="pending",
            locations=tool_locations(use.name, use.input, self.workspace) or None,
            raw_input=use.input,
        )
        update.field_meta = _meta(_S.QUEUED)
        return update

    def _replayed_result(self, call: ToolCall) -> ToolCallProgress:
        record = call.result
        text, _ = result_wording(record)
        meta = _meta(
            record.state,
            side_effects=str(record.side_effects),
            exit_code=record.exit_code,
            signal=record.signal,
            residue=record.residue,
        )
        update = update_tool_call(
            record.tool_use_id,
            status=ACP_STATUS[record.state],
            content=[tool_content(text_block(text))] if text else [],
            raw_output={**meta[META_KEY], "result": text},
        )
        update.field_meta = meta
        return update

    def _replayed_missing(self, call: UnfinishedCall) -> ToolCallProgress:
        text = (
            "Result unknown: the agent stopped while this call ran."
            if call.started
            else "Not run: the turn ended before this call started."
        )
        meta = _meta(call.state)
        update = update_tool_call(
            call.tool_use_id,
            status="failed",
            content=[tool_content(text_block(text))],
            raw_output={**meta[META_KEY], "result": text},
        )
        update.field_meta = meta
        return update
