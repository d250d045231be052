"""The hook points of a custom command (its ``!`` lines, its prompt), a reply's tool batch, a model switch, the instruction files read and a folder added.

Each takes the :class:`~agent_tui.core.hooks.hook_points.HookPoints` of what it serves
(a turn, a command's lines, the session) and asks the port, as Claude Code does:

- ``PreSkillShellCommand``: each ``!`` line of a custom command, before any runs (the
  lines of a command all run or none does). Matched on ``Bash``; a block, an ask or
  an ``updatedInput`` keeps it from running (no one is asked about a command's lines).
- ``PostToolBatch``: once the calls of one model reply have all ended, before the next
  request: each call's input and response; a block (exit 2, ``decision: "block"``)
  ends the turn, its context reaches the model once for the whole batch.
- ``PreModelSwitch``: ``/model`` (or the SDK's ``set_model``) asks for another model:
  a block refuses the switch. ``PostModelSwitch``: the model changed; its context
  reaches the model with the next request.
- ``InstructionsLoaded``: each ``CLAUDE.md`` and memory file read as the session
  opens (``load_reason`` ``session_start``, or ``include`` for an ``@`` import), and
  each sub-folder's one a batch of calls brought in (``nested_traversal``).
- ``DirectoryAdded``: ``/add-dir`` added a folder (``source`` ``slash_command``).
- ``UserPromptExpansion``: a custom command became its prompt (its lines ran): a
  block keeps the prompt from being sent, context rides with it.
"""

from __future__ import annotations

from typing import Any

from agent_tui.core.hooks.hook_points import HookPoints, unless_blocked
from agent_tui.core.journal.records import (
    AssistantMessageRecord,
    MemoryNoteRecord,
    ToolResultRecord,
)
from agent_tui.core.memory.memory import MemoryFile
from agent_tui.core.services.model_control import MODEL_ALIASES
from agent_tui.core.services.hooks_port import HookAnswer
from agent_tui.protocol.states import HookDecision, HookEvent
from agent_tui.protocol.tool_names import claude_name, shell_tool

E = HookEvent

#: ``memory_type`` in Claude Code's words, for each of our memory scopes.
_MEMORY_TYPES = {"user": "User", "project": "Project", "local": "Local", "folder": "Project"}


async def skill_shell_command(
    points: HookPoints, *, command: str, command_name: str, step_id: str,
) -> str:
    """Why ``command`` (a ``!`` line of ``/command_name``) may not run; "" when it may.
    Raises ``Cancelled`` when the lines were stopped meanwhile."""
    shell = shell_tool()  # the line is matched as a call of the shell
    if not points.wanted(E.PRE_SKILL_SHELL_COMMAND, shell, {"command": command}):
        return ""
    answer = await points.dispatch(
        E.PRE_SKILL_SHELL_COMMAND, shell,
        {"tool_name": claude_name(shell), "tool_input": {"command": command},
         "tool_use_id": step_id, "command_name": command_name, "invoked_by": "user"},
        tool_use_id=step_id, tool_input={"command": command},
    )
    points.scope.raise_if_cancelled()  # cancel point: while a hook judges the line
    if answer is None or answer.decision is not HookDecision.BLOCK:
        return ""
    return answer.reason or "blocked by a PreSkillShellCommand hook"


async def tool_batch(points: HookPoints, call_ids: list[str], since: int = 0) -> None:
    """After the calls of one reply (their results are journalled from record
    ``since`` on): ``InstructionsLoaded`` (``nested_traversal``) for each sub-folder's
    memory file they brought in, then ``PostToolBatch``; a block of that sets
    ``points.stop_reason`` (the turn ends). Neither once Esc was pressed."""
    if points.scope.cancelled:
        return
    notes = [r for r in points.deps.journal.records[since:] if isinstance(r, MemoryNoteRecord)]
    if notes:
        await _loaded(points, [(n.path, "Project", "nested_traversal", None) for n in notes])
    if points.scope.cancelled or not points.wanted(E.POST_TOOL_BATCH):
        return
    wanted = set(call_ids)
    results = {r.tool_use_id: r for r in points.deps.journal.records
               if isinstance(r, ToolResultRecord) and r.tool_use_id in wanted}
    inputs = _inputs(points, wanted)
    calls = [{"name": r.name, "id": r.tool_use_id, "input": inputs.get(r.tool_use_id, {}),
              "response": {"content": r.content, "is_error": r.is_error,
                           "exit_code": r.exit_code, "details": r.details, "blocks": r.blocks}}
             for call_id in call_ids if (r := results.get(call_id)) is not None]
    answer = await points.dispatch(
        E.POST_TOOL_BATCH, None, {"tool_calls": calls},
        to_model=lambda _answer, run: run.context,
    )
    if answer is not None and answer.decision is HookDecision.BLOCK and points.stop_reason is None:
        points.stop_reason = answer.reason or "a PostToolBatch hook ended the turn"


def _inputs(points: HookPoints, wanted: set[str]) -> dict[str, dict[str, Any]]:
    """Each call's input, from the reply that asked for it."""
    found: dict[str, dict[str, Any]] = {}
    for record in reversed(points.deps.journal.records):
        if isinstance(record, AssistantMessageRecord):
            for block in record.blocks:
                if block.get("type") == "tool_use" and block.get("id") in wanted:
                    given = block.get("input")
                    found[str(block["id"])] = given if isinstance(given, dict) else {}
            if len(found) == len(wanted):
                break
    return found


def model_family(model: str) -> str | None:
    """What ``PreModelSwitch`` and ``PostModelSwitch`` matchers are tried against: the
    model's family (``opus``, ``sonnet``, ``haiku``), None for another model."""
    lowered = model.lower()
    return next((f for f in MODEL_ALIASES if f in lowered), None)


class ModelSwitchHooks:
    """``PreModelSwitch`` and ``PostModelSwitch`` for ``ModelControl`` (``source``
    ``command``: /model, or the SDK's ``set_model``)."""

    def __init__(self, points: HookPoints) -> None:
        self.points = points

    async def before(self, old: str, new: str, requested: str) -> str:
        answer = await self._ask(E.PRE_MODEL_SWITCH, old, new, requested)
        if self.points.scope.cancelled:
            return "the switch was interrupted"
        if answer.decision is HookDecision.BLOCK:
            return answer.reason or "a PreModelSwitch hook refused the switch"
        if answer.decision is HookDecision.ASK:  # no one is asked about a switch: refused
            return answer.reason or "a PreModelSwitch hook asks to confirm the switch"
        return ""

    async def after(self, old: str, new: str, requested: str) -> None:
        await self._ask(E.POST_MODEL_SWITCH, old, new, requested)

    async def _ask(self, event: HookEvent, old: str, new: str, requested: str) -> HookAnswer:
        family = model_family(new)
        if not self.points.wanted(event, family):
            return HookAnswer()
        fields = {"from_model": old, "to_model": new, "requested_model": requested or None,
                  "source": "command"}
        answer = await self.points.dispatch(
            event, family, fields,
            to_model=lambda _answer, run: run.context if event is E.POST_MODEL_SWITCH else "",
        )
        return answer if answer is not None else HookAnswer()


async def instructions_loaded(points: HookPoints, files: list[MemoryFile]) -> None:
    """``InstructionsLoaded`` for each instruction file read as the session opens."""
    await _loaded(points, [
        (f.path, _MEMORY_TYPES.get(f.scope, "Project"),
         "include" if f.imported_from else "session_start", f.imported_from) for f in files])


async def _loaded(points: HookPoints, files: list[tuple[str, str, str, str | None]]) -> None:
    """``InstructionsLoaded`` for each (path, memory type, load reason, importing file)."""
    for path, memory_type, reason, parent in files:
        if not points.wanted(E.INSTRUCTIONS_LOADED, reason):
            continue
        fields: dict[str, Any] = {
            "file_path": path, "memory_type": memory_type, "load_reason": reason,
            **({"parent_file_path": parent} if parent else {}),
        }
        await points.dispatch(E.INSTRUCTIONS_LOADED, reason, fields)
        if points.scope.cancelled:
            return


async def directory_added(points: HookPoints, directory: str, source: str) -> None:
    """``DirectoryAdded``: a folder was added (``/add-dir``: ``slash_command``); nothing
    to decide, what the hooks say is shown to the user."""
    await points.dispatch(E.DIRECTORY_ADDED, source, {"directory": directory, "source": source})


async def prompt_expansion(points: HookPoints, *, command_name: str, command_args: str,
                           command_source: str, prompt: str) -> str:
    """``UserPromptExpansion``: ``/command_name`` became ``prompt``; why it may not be
    sent ("" when it may: what the hooks add rides with it). Raises ``Cancelled``."""
    if not points.wanted(E.USER_PROMPT_EXPANSION, command_name):
        return ""
    fields = {"expansion_type": "slash_command", "command_name": command_name,
              "command_args": command_args, "command_source": command_source, "prompt": prompt}
    answer = await points.dispatch(
        E.USER_PROMPT_EXPANSION, command_name, fields,
        to_model=unless_blocked,
    )
    points.scope.raise_if_cancelled()  # cancel point: while a hook judges the prompt
    if answer is None or answer.decision is not HookDecision.BLOCK:
        return ""
    return answer.reason or "blocked by a UserPromptExpansion hook"
