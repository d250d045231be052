"""What a hook's ending means, in Claude Code's terms, and what several hooks decide.

One command's ending (:func:`decide`):

- exit 0: no opinion, unless stdout is a JSON object: ``decision`` (``block``, or
  ``approve`` for ``PreToolUse``) with ``reason``; ``hookSpecificOutput``
  ``permissionDecision`` (``allow`` | ``deny`` | ``ask`` | ``defer``; also for
  ``PreSkillShellCommand``, where all but ``allow`` block, and ``PreModelSwitch``) with
  ``permissionDecisionReason``, ``updatedInput`` (the input fields to change before
  the call runs) and ``additionalContext``; ``continue: false`` with ``stopReason``;
  ``systemMessage`` for the user; for ``PermissionRequest``, ``hookSpecificOutput``
  ``decision.behavior`` ``allow`` or ``deny`` (with ``message``); for ``Elicitation``
  and ``ElicitationResult``, ``hookSpecificOutput`` ``action`` (``accept``,
  ``decline``: a block, ``cancel``) with ``content``; ``suppressOutput`` is accepted (agent-tui shows no
  hook's stdout to the user, so there is nothing to hide). Plain stdout is context
  for the model after ``UserPromptSubmit`` and ``SessionStart``. Claude Code's fields
  agent-tui does not act on (``UNSUPPORTED_SPECIFIC``) are named to the user.
- exit 2: a block, with stderr as the reason (for ``SessionStart``,
  ``SubagentStart`` and ``SessionEnd``, which gate nothing, stderr is shown to the
  user); for ``Stop`` and ``SubagentStop`` a block means "go on", the reason being
  the agent's next instruction.
- any other exit: a failed hook, shown to the user; things go on.
- timed out or could not start: shown to the user, and treated as ``onFailure``
  says; unset, an event that gates something (a tool call, a prompt, a compaction)
  is blocked, with the reason saying so.

Several commands of one event (:func:`combine`): the strongest decision wins (block
over ask over allow); in print mode, where no one can answer, ``ask`` blocks.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.core.services.hooks_port import HookAnswer, HookRun
from agent_tui.protocol.states import HookDecision, HookEnding, HookEvent
from agent_tui.hooks.config import HookCommand, OnFailure
from agent_tui.hooks.events import event_facts
from agent_tui.hooks.runner import CommandRun

D = HookDecision

#: ``hookSpecificOutput`` fields of Claude Code that agent-tui does not act on: named
#: to the user when a hook answers with one, never silently dropped.
UNSUPPORTED_SPECIFIC = frozenset({
    "permissionApplyRules", "runAsynchronously", "sessionTitle", "initialUserMessage",
    "watchPaths", "reloadSkills",
})
_RANK = {D.NONE: 0, D.ALLOW: 1, D.ASK: 2, D.BLOCK: 3}
_PERMISSION = {"allow": D.ALLOW, "deny": D.BLOCK, "ask": D.ASK, "defer": D.NONE}


class _Output(DeferredModel):
    """A hook's JSON answer (unknown fields are ignored, as Claude Code does)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    continue_: bool = Field(default=True, alias="continue")
    stop_reason: str | None = Field(default=None, alias="stopReason")
    system_message: str | None = Field(default=None, alias="systemMessage")
    decision: str | None = None
    reason: str | None = None
    specific: dict[str, Any] | None = Field(default=None, alias="hookSpecificOutput")


def decide(event: HookEvent, hook: HookCommand, ran: CommandRun) -> HookRun:
    run = HookRun(
        command=hook.command, source=hook.source, ending=ran.ending, exit_code=ran.exit_code,
        signal=ran.signal, duration_s=ran.duration_s,
    )
    if ran.ending is HookEnding.CANCELLED:
        return run
    if ran.ending is HookEnding.TIMED_OUT:
        return _failed(run, event, hook, f"timed out after {hook.timeout_s:g} s and was killed",
                       default_block=True)
    if ran.ending is HookEnding.NOT_STARTED:
        return _failed(run, event, hook, f"could not be started: {ran.error}", default_block=True)
    if ran.failure:
        return _failed(run, event, hook, ran.failure, default_block=False)
    stderr = ran.stderr.strip()
    if ran.exit_code == 2:
        if not event_facts(event).can_block:
            run.message = stderr
        else:
            run.decision = D.BLOCK
            run.reason = stderr or "a hook blocked this (exit code 2, no message)"
        return run
    if ran.exit_code != 0:
        how = f"exit code {ran.exit_code}" if ran.exit_code is not None else f"signal {ran.signal}"
        return _failed(run, event, hook, f"failed ({how})" + (f": {stderr}" if stderr else ""),
                       default_block=False)
    if ran.stdout_cut and event_facts(event).guards_call:
        return _unreadable(run, hook, "printed more than agent-tui keeps of an answer")
    return _read_stdout(run, event, ran.stdout, hook)


def _unreadable(run: HookRun, hook: HookCommand, what: str) -> HookRun:
    """A guard whose answer cannot be read fails closed: the call is refused, and says
    why (the model controls what the hook reads, and so the length of its answer)."""
    run.message = what
    run.decision = D.BLOCK
    run.reason = (f"the {hook.event} hook `{hook.command}` {what}, so its answer cannot be "
                  "read; treated as a block")
    return run


def _failed(
    run: HookRun, event: HookEvent, hook: HookCommand, what: str, *, default_block: bool
) -> HookRun:
    run.message = what
    blocks = hook.on_failure is OnFailure.BLOCK or (hook.on_failure is None and default_block)
    if blocks and event_facts(event).gates:
        run.decision = D.BLOCK
        run.reason = f"the {event} hook `{hook.command}` {what}; treated as a block"
    return run


def _read_stdout(run: HookRun, event: HookEvent, stdout: str, hook: HookCommand) -> HookRun:
    text = stdout.strip()
    facts = event_facts(event)
    answer: _Output | None = None
    if text.startswith("{"):
        try:
            answer = _Output.model_validate(json.loads(text))
        except (ValueError, ValidationError, RecursionError):
            if facts.guards_call:
                return _unreadable(run, hook, "printed JSON that could not be read")
            run.message = "printed JSON that could not be read; taken as plain text"
    if answer is None:
        if facts.stdout_is_context:
            run.context = text
        return run
    if answer.system_message:
        run.message = answer.system_message
    if answer.decision == "block" and facts.can_block:
        run.decision, run.reason = D.BLOCK, answer.reason or ""
    elif answer.decision == "approve" and facts.guards_call:
        run.decision, run.reason = D.ALLOW, answer.reason or ""
    specific = answer.specific or {}
    context = specific.get("additionalContext")
    if isinstance(context, str):
        run.context = context
    permission = specific.get("permissionDecision")
    if facts.decides_permission and permission in _PERMISSION:
        run.decision = _PERMISSION[permission]
        if facts.unattended and permission != "allow":
            run.decision = D.BLOCK  # deny, ask and defer all keep the line from running
        reason = specific.get("permissionDecisionReason")
        run.reason = reason if isinstance(reason, str) else ""
    chosen = specific.get("decision")
    if facts.answers_prompt and isinstance(chosen, dict):
        behavior = chosen.get("behavior")
        if behavior in ("allow", "deny"):
            run.decision = D.ALLOW if behavior == "allow" else D.BLOCK
            said = chosen.get("message")
            run.reason = said if isinstance(said, str) else ""
    if facts.replies:
        _reply(run, event, specific, answer.reason)
    updated = specific.get("updatedInput")
    if facts.changes_input and isinstance(updated, dict) and updated:
        run.updated_input = updated  # Claude Code's keys: the caller translates them
    unsupported = sorted(k for k in specific if k in UNSUPPORTED_SPECIFIC)
    if unsupported:
        said = f"answered {', '.join(unsupported)}, which agent-tui does not support (ignored)"
        run.message = f"{run.message}; {said}" if run.message else said
    if not answer.continue_:
        run.stop = answer.stop_reason or ""
        if facts.stops:
            run.decision = D.NONE  # stop means stop
        elif facts.gates:
            run.decision = D.BLOCK
            # stopReason is for the user (the turn's end says it), not for the model.
            shown = None if facts.guards_call else answer.stop_reason
            run.reason = shown or run.reason or f"a {event} hook stopped the agent"
    if run.decision is D.BLOCK and not run.reason and facts.stops:
        run.reason = f"a {event} hook asked you to go on"
    return run


def _reply(run: HookRun, event: HookEvent, specific: dict[str, Any], reason: str | None) -> None:
    """An elicitation answered by the hook, as Claude Code reads it: ``hookEventName``
    must name the event; ``decline`` is a block (the server is told no)."""
    action = specific.get("action")
    if specific.get("hookEventName") != str(event) or action not in _ACTIONS:
        return
    content = specific.get("content")
    run.reply = {"action": action, **({"content": content} if isinstance(content, dict) else {})}
    if action == "decline":
        run.decision = D.BLOCK
        run.reason = reason or event_facts(event).declined


_ACTIONS = ("accept", "decline", "cancel")


def combine(runs: list[HookRun], *, can_ask: bool) -> HookAnswer:
    """What the runs of one event decide together."""
    answer = HookAnswer(runs=runs)
    for run in runs:
        decision = run.decision
        if decision is D.ASK and not can_ask:
            decision = D.BLOCK
            run.reason = ("a hook asks to confirm this, and there is no one to ask in print "
                          "mode" + (f" ({run.reason})" if run.reason else ""))
            run.decision = decision
        if _RANK[decision] > _RANK[answer.decision]:
            answer.decision = decision
    answer.reason = "\n".join(r.reason for r in runs if r.decision is answer.decision and r.reason)
    answer.context = [r.context for r in runs if r.context.strip()]
    answer.stop = next((r.stop for r in runs if r.stop is not None), None)
    answer.reply = next((r.reply for r in runs if r.reply is not None), None)
    for run in runs:
        if run.updated_input:
            answer.updated_input = {**(answer.updated_input or {}), **run.updated_input}
    return answer
