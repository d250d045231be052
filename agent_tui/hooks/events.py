"""What each hook event is, in one place: what its matcher filters and what its hooks'
answers can do.

:func:`event_facts` answers for every :class:`HookEvent` through one exhaustive
``match``, so a new event (a row of the enum) is not accepted by the type checker
until it says here what its matcher filters (a tool's name, one of a few words Claude
Code gives, or nothing), whether a failed hook of it blocks what it gates, whether its
hooks can block at all, whether a block means "do not stop yet", and whether plain
stdout is context for the model. The settings parser (``config.py``) and the reading
of answers (``answers.py``) ask it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import assert_never

from agent_tui.protocol.states import HookEvent


class Subject(StrEnum):
    """What an event's matcher is tried against."""

    NONE = "none"  # no known set: a matcher's names are not checked
    TOOL = "tool"  # the tool's name (either spelling), and ``if`` takes a rule
    WORD = "word"  # one of the event's ``words`` (a source, a trigger, a reason)


@dataclass(frozen=True)
class EventFacts:
    subject: Subject = Subject.NONE
    words: frozenset[str] = frozenset()  # for Subject.WORD, in Claude Code's words
    gates: bool = False  # a failed hook may block what it gates
    can_block: bool = True  # False: exit 2 and ``decision`` only say something
    stops: bool = False  # a block means "do not stop yet"; the reason is what to do next
    stdout_is_context: bool = False  # plain stdout (exit 0, not JSON) goes to the model


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


def event_facts(event: HookEvent) -> EventFacts:
    """What ``event`` is (see the module's docstring)."""
    E = HookEvent
    match event:
        case E.PRE_TOOL_USE:
            return EventFacts(Subject.TOOL, gates=True)
        case E.POST_TOOL_USE | E.POST_TOOL_USE_FAILURE | E.PERMISSION_REQUEST | E.PERMISSION_DENIED:
            return EventFacts(Subject.TOOL)
        case E.USER_PROMPT_SUBMIT:
            return EventFacts(gates=True, stdout_is_context=True)
        case E.STOP | E.SUBAGENT_STOP:
            return EventFacts(stops=True)
        case E.SESSION_START:
            return EventFacts(Subject.WORD, frozenset({"startup", "resume", "clear", "compact"}),
                              can_block=False, stdout_is_context=True)
        case E.SETUP:
            return EventFacts(Subject.WORD, frozenset({"init", "maintenance"}), can_block=False)
        case E.PRE_COMPACT:
            return EventFacts(Subject.WORD, _TRIGGERS, gates=True)
        case E.POST_COMPACT:
            return EventFacts(Subject.WORD, _TRIGGERS)
        case E.SUBAGENT_START:
            return EventFacts(can_block=False)
        case E.SESSION_END:
            return EventFacts(Subject.WORD, frozenset({
                "clear", "logout", "prompt_input_exit", "bypass_permissions_disabled", "other"}),
                can_block=False)
        case E.NOTIFICATION:
            return EventFacts(Subject.WORD, frozenset({
                "permission_prompt", "idle_prompt", "auth_success", "elicitation_dialog"}))
        case E.STOP_FAILURE:
            return EventFacts(Subject.WORD, frozenset({
                "rate_limit", "authentication_failed", "billing_error", "invalid_request",
                "server_error", "max_output_tokens", "unknown"}))
        case E.CONFIG_CHANGE:  # a failed hook lets the change apply (a new guard is not held up)
            return EventFacts(Subject.WORD, CONFIG_SOURCES)
        case E.TASK_CREATED | E.TASK_COMPLETED:  # a block refuses the todo_write call
            return EventFacts()
        case E.ELICITATION | E.ELICITATION_RESULT:  # matched on the MCP server's name
            return EventFacts()
        case E.INTERRUPT:
            return EventFacts()
        case E.PRE_SKILL_SHELL_COMMAND:  # matched on the shell tool's name (Bash)
            return EventFacts(Subject.TOOL, gates=True)
        case E.POST_TOOL_BATCH:  # a block (exit 2) ends the turn
            return EventFacts()
        case E.USER_PROMPT_EXPANSION:  # matched on the command's name: a block stops it
            return EventFacts(gates=True, stdout_is_context=True)
        case E.PRE_MODEL_SWITCH:  # matched on the new model's family (opus, sonnet, haiku)
            return EventFacts(Subject.WORD, MODEL_FAMILIES, gates=True)
        case E.POST_MODEL_SWITCH:
            return EventFacts(Subject.WORD, MODEL_FAMILIES, can_block=False,
                              stdout_is_context=True)
        case E.INSTRUCTIONS_LOADED:
            return EventFacts(Subject.WORD, LOAD_REASONS, can_block=False)
        case E.DIRECTORY_ADDED:  # ``register_repo_root`` (an SDK request) never happens here
            return EventFacts(Subject.WORD, frozenset({"slash_command", "register_repo_root"}),
                              can_block=False)
        case _:
            assert_never(event)

