"""What each hook event is, in one place: one row of :data:`EVENTS` per event.

A row says what the event's matcher is tried against (a tool's name, one of a few words
Claude Code gives, or nothing), what stdin carries beyond the common fields (and how
our values are put in Claude Code's shapes), how its hooks' answers act (whether a
failed hook blocks what it gates, whether exit code 2 and ``decision`` can block at all,
whether a block means "do not stop yet", whether plain stdout is context, which
``hookSpecificOutput`` fields it reads, what a project's hook may not do) and where it
fires. The settings parser (``config.py``), the runner (``commands.py``) and the reading
of answers (``answers.py``) ask :func:`event_facts`; none of them names an event. So a
new event is its name in :class:`~agent_tui.protocol.states.HookEvent`, its row here, and
the call where it fires (``HooksPort.fire``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agent_tui.hooks.payloads import failure_error, tool_fields, tool_response
from agent_tui.protocol.states import HookEvent


class Subject(StrEnum):
    """What an event's matcher is tried against."""

    NONE = "none"  # no known set: a matcher's names are not checked
    TOOL = "tool"  # the tool's name (either spelling), and ``if`` takes a rule
    WORD = "word"  # one of the event's ``words`` (a source, a trigger, a reason)


#: How a row puts the caller's fields (ours) in Claude Code's shapes: (fields, workspace).
Shape = Callable[[Mapping[str, Any], str], dict[str, Any]]


def as_given(fields: Mapping[str, Any], _workspace: str) -> dict[str, Any]:
    """Fields that are already what the hooks read."""
    return dict(fields)


def tool_call(fields: Mapping[str, Any], workspace: str) -> dict[str, Any]:
    """``tool_name`` and ``tool_input`` (ours) in Claude Code's shapes, and a
    ``tool_response`` (ours) as Claude Code gives that tool's."""
    shaped = {**fields, **tool_fields(fields["tool_name"], fields["tool_input"], workspace)}
    if "tool_response" in fields:
        shaped["tool_response"] = tool_response(
            fields["tool_name"], shaped["tool_input"], fields["tool_response"])
    return shaped


def failed_call(fields: Mapping[str, Any], workspace: str) -> dict[str, Any]:
    """A failed call: its response (ours) becomes ``error``; ``is_interrupt`` is always
    false (a call Esc ended runs no hook: the ``Interrupt`` event says it)."""
    rest = {k: v for k, v in fields.items() if k != "tool_response"}
    return {**tool_call(rest, workspace), "error": failure_error(fields["tool_response"]),
            "is_interrupt": False}


def call_batch(fields: Mapping[str, Any], workspace: str) -> dict[str, Any]:
    """``tool_calls``: each call (ours: ``name``, ``input``, ``id``, ``response``) as
    a ``PostToolUse`` hook reads it."""
    shaped = []
    for call in fields["tool_calls"]:
        one = tool_call({"tool_name": call["name"], "tool_input": call["input"],
                         "tool_response": call["response"]}, workspace)
        shaped.append({"tool_name": one["tool_name"], "tool_input": one["tool_input"],
                       "tool_use_id": call["id"], "tool_response": one["tool_response"]})
    return {**fields, "tool_calls": shaped}


@dataclass(frozen=True)
class EventFacts:
    """One event's row (the defaults: an event that is told, matched on nothing)."""

    subject: Subject = Subject.NONE
    words: frozenset[str] = frozenset()  # for Subject.WORD, in Claude Code's words
    # What stdin carries beyond the common fields (the runner refuses any other key).
    stdin: frozenset[str] = frozenset()
    shape: Shape = as_given  # how the caller's fields become stdin
    fires: str = ""  # where it fires, for a reader
    gates: bool = False  # a failed hook may block what it gates
    can_block: bool = True  # False: exit 2 and ``decision`` only say something
    stops: bool = False  # a block means "do not stop yet"; the reason is what to do next
    stdout_is_context: bool = False  # plain stdout (exit 0, not JSON) goes to the model
    # It gates a call the model asked for: an answer that cannot be read blocks,
    # ``decision: "approve"`` allows, its ``stopReason`` is not shown to the model.
    guards_call: bool = False
    # ``hookSpecificOutput.permissionDecision`` decides (allow, deny, ask, defer).
    decides_permission: bool = False
    # ``hookSpecificOutput.updatedInput`` is read (Claude Code's keys, given back in ours).
    changes_input: bool = False
    # No one is asked: ask, defer and any changed input all block it.
    unattended: bool = False
    # ``hookSpecificOutput.decision.behavior`` answers a permission prompt (a
    # project's hook may only say no).
    answers_prompt: bool = False
    # ``hookSpecificOutput.action`` answers an MCP server's question (a project's hook
    # may decline, never accept); ``declined``: the reason of a decline that gave none.
    replies: bool = False
    declined: str = ""
    # A project's hook may block a change of the project's own settings files only.
    guards_settings: bool = False
    ends_turn: bool = False  # ``"continue": false`` ends the turn after the tool batch
    env_file: bool = False  # its hooks get ``CLAUDE_ENV_FILE``; the answer's ``env`` is read


def event_facts(event: HookEvent) -> EventFacts:
    """What ``event`` is (see the module's docstring)."""
    return EVENTS[event]


_TRIGGERS = frozenset({"manual", "auto"})
#: ``ConfigChange``'s sources, in Claude Code's words (``skills`` and ``policy_settings``
#: never happen here: agent-tui reloads no skills and has no managed settings file).
CONFIG_SOURCES = frozenset({
    "user_settings", "project_settings", "local_settings", "policy_settings", "skills"})
#: What ``PreModelSwitch`` and ``PostModelSwitch`` matchers are tried against.
MODEL_FAMILIES = frozenset({"opus", "sonnet", "haiku"})
#: ``InstructionsLoaded``'s ``load_reason`` (its matcher), in Claude Code's words; agent-tui
#: gives ``session_start``, ``include`` and ``nested_traversal`` (it has no path-glob rules,
#: and reads no instructions again after a compaction).
LOAD_REASONS = frozenset({
    "session_start", "nested_traversal", "path_glob_match", "include", "compact"})

_CALL = frozenset({"tool_name", "tool_input", "tool_use_id"})
_STOP = frozenset({"stop_hook_active", "last_assistant_message"})
_TASK = frozenset({"task_id", "task_subject", "task_description"})
_SWITCH = frozenset({"from_model", "to_model", "requested_model", "source"})
_ASKED = frozenset({"mcp_server_name", "message", "mode", "url", "elicitation_id",
                    "requested_schema"})
_ANSWERED = frozenset({"mcp_server_name", "mode", "action", "elicitation_id", "content"})

E = HookEvent
#: Every event's row. A row's keyword arguments are the :class:`EventFacts` it does not
#: leave at their defaults.
EVENTS: dict[HookEvent, EventFacts] = {
    E.PRE_TOOL_USE: EventFacts(
        Subject.TOOL, stdin=_CALL, shape=tool_call, gates=True, guards_call=True,
        decides_permission=True, changes_input=True, ends_turn=True,
        fires="before a call's permission check (core/hooks/hook_points.py)"),
    E.POST_TOOL_USE: EventFacts(
        Subject.TOOL, stdin=_CALL | {"tool_response"}, shape=tool_call, ends_turn=True,
        fires="after a call succeeded (core/hooks/hook_points.py)"),
    E.POST_TOOL_USE_FAILURE: EventFacts(
        Subject.TOOL, stdin=_CALL | {"error", "is_interrupt"}, shape=failed_call,
        fires="after a call failed by itself (core/hooks/hook_points.py)"),
    E.PERMISSION_REQUEST: EventFacts(
        Subject.TOOL, stdin=_CALL | {"permission_suggestions"}, shape=tool_call,
        answers_prompt=True, fires="a call would be asked (core/hooks/permission_points.py)"),
    E.PERMISSION_DENIED: EventFacts(
        Subject.TOOL, stdin=_CALL | {"reason"}, shape=tool_call,
        fires="a rule or the mode denied a call (core/hooks/permission_points.py)"),
    E.USER_PROMPT_SUBMIT: EventFacts(
        stdin=frozenset({"prompt"}), gates=True, stdout_is_context=True,
        fires="a turn starts (core/hooks/hook_points.py)"),
    E.STOP: EventFacts(stdin=_STOP, stops=True,
                       fires="the model stopped on its own (core/hooks/hook_points.py)"),
    E.SUBAGENT_STOP: EventFacts(
        stdin=_STOP | {"agent_transcript_path"}, stops=True,
        fires="a sub-agent's model stopped on its own (core/hooks/hook_points.py)"),
    E.SESSION_START: EventFacts(
        Subject.WORD, frozenset({"startup", "resume", "clear", "compact"}),
        stdin=frozenset({"source", "model"}), can_block=False, stdout_is_context=True,
        env_file=True, fires="the session opens, is cleared or compacted "
                             "(core/hooks/session_end.py)"),
    E.SETUP: EventFacts(
        Subject.WORD, frozenset({"init", "maintenance"}), stdin=frozenset({"trigger"}),
        can_block=False, env_file=True,
        fires="--init, --maintenance: before SessionStart (core/hooks/session_end.py)"),
    E.PRE_COMPACT: EventFacts(
        Subject.WORD, _TRIGGERS, stdin=frozenset({"trigger", "custom_instructions"}),
        gates=True, fires="before a compaction (core/compaction/compaction.py)"),
    E.POST_COMPACT: EventFacts(
        Subject.WORD, _TRIGGERS, stdin=frozenset({"trigger", "compact_summary"}),
        fires="a compaction was saved (core/compaction/compaction.py)"),
    E.SUBAGENT_START: EventFacts(
        can_block=False, fires="before a sub-agent's first request (core/subagents/subagent.py)"),
    E.SESSION_END: EventFacts(
        Subject.WORD, frozenset({
            "clear", "logout", "prompt_input_exit", "bypass_permissions_disabled", "other"}),
        stdin=frozenset({"reason"}), can_block=False,
        fires="the session ends, or /clear (core/hooks/session_end.py)"),
    E.NOTIFICATION: EventFacts(
        Subject.WORD, frozenset({
            "permission_prompt", "idle_prompt", "auth_success", "elicitation_dialog"}),
        stdin=frozenset({"message", "title", "notification_type"}),
        fires="the user is waited for (core/hooks/permission_points.py, idle.py)"),
    E.STOP_FAILURE: EventFacts(
        Subject.WORD, frozenset({
            "rate_limit", "authentication_failed", "billing_error", "invalid_request",
            "server_error", "max_output_tokens", "unknown"}),
        stdin=frozenset({"error", "error_details", "last_assistant_message"}),
        fires="the turn ended on an API error (core/hooks/hook_points.py)"),
    # A failed hook lets the change apply (a new guard is not held up).
    E.CONFIG_CHANGE: EventFacts(
        Subject.WORD, CONFIG_SOURCES, stdin=frozenset({"source", "file_path"}),
        guards_settings=True, fires="a settings file changed, before the next turn "
                                    "(core/hooks/hook_points.py)"),
    # A block refuses the todo_write call.
    E.TASK_CREATED: EventFacts(stdin=_TASK, fires="a todo_write call adds a plan item "
                                                  "(core/hooks/task_points.py)"),
    E.TASK_COMPLETED: EventFacts(stdin=_TASK, fires="a todo_write call completes a plan item "
                                                    "(core/hooks/task_points.py)"),
    # Matched on the MCP server's name.
    E.ELICITATION: EventFacts(
        stdin=_ASKED, replies=True, declined="Elicitation denied by hook",
        fires="an MCP server asks the user (hooks/elicitation.py)"),
    E.ELICITATION_RESULT: EventFacts(
        stdin=_ANSWERED, replies=True, declined="Elicitation result blocked by hook",
        fires="the answer, before it goes to the server (hooks/elicitation.py)"),
    E.INTERRUPT: EventFacts(
        stdin=frozenset({"tool_calls", "processes_ended", "processes_left"}),
        fires="a turn Esc ended has closed (core/hooks/hook_points.py)"),
    # Matched on the shell tool's name (Bash).
    E.PRE_SKILL_SHELL_COMMAND: EventFacts(
        Subject.TOOL, stdin=_CALL | {"command_name", "invoked_by"}, gates=True,
        decides_permission=True, changes_input=True, unattended=True,
        fires="a custom command's ! line, before it runs (core/hooks/work_points.py)"),
    # A block (exit 2) ends the turn.
    E.POST_TOOL_BATCH: EventFacts(
        stdin=frozenset({"tool_calls"}), shape=call_batch, ends_turn=True,
        fires="the calls of one reply have all ended (core/hooks/work_points.py)"),
    # Matched on the command's name: a block stops it.
    E.USER_PROMPT_EXPANSION: EventFacts(
        stdin=frozenset({"expansion_type", "command_name", "command_args", "command_source",
                         "prompt"}), gates=True, stdout_is_context=True,
        fires="a custom command became its prompt (core/hooks/work_points.py)"),
    # Matched on the new model's family (opus, sonnet, haiku).
    E.PRE_MODEL_SWITCH: EventFacts(
        Subject.WORD, MODEL_FAMILIES, stdin=_SWITCH, gates=True, decides_permission=True,
        fires="/model asks for another model (core/hooks/work_points.py)"),
    E.POST_MODEL_SWITCH: EventFacts(
        Subject.WORD, MODEL_FAMILIES, stdin=_SWITCH, can_block=False, stdout_is_context=True,
        fires="the session's model changed (core/hooks/work_points.py)"),
    E.INSTRUCTIONS_LOADED: EventFacts(
        Subject.WORD, LOAD_REASONS, stdin=frozenset({
            "file_path", "memory_type", "load_reason", "parent_file_path"}), can_block=False,
        fires="a CLAUDE.md or memory file was read (core/hooks/work_points.py)"),
    # ``register_repo_root`` (an SDK request) never happens here.
    E.DIRECTORY_ADDED: EventFacts(
        Subject.WORD, frozenset({"slash_command", "register_repo_root"}),
        stdin=frozenset({"directory", "source"}), can_block=False,
        fires="/add-dir added a folder (core/hooks/work_points.py)"),
}
