"""The app's side of a turn: its permission callback and its hook callbacks.

- ``can_use_tool``: asked when a call needs permission and the app registered a
  callback (the SDK passes ``--permission-prompt-tool stdio``). Its ``allow`` may carry
  ``updatedInput``, the whole input the call runs with (checked again by the permission
  rules: a deny rule still wins); ``deny`` carries the message the model is told, and
  ``interrupt: true`` also ends the turn. An error answer, or none, denies.
- ``hook_callback``: the hooks given in ``initialize`` join the settings' hooks
  (``hooks/commands.py``, ``extra``): same matchers, same input, and the callback's
  answer is read as a hook command's JSON stdout. A callback that fails or times out
  is a failed hook (``onFailure`` as for commands: a gate is blocked by default).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_tui.cancel import Cancelled, CancelScope
from agent_tui.hooks import CommandHooks
from agent_tui.hooks.config import DEFAULT_TIMEOUT_S, HookCommand, OnFailure
from agent_tui.hooks.matchers import Matcher
from agent_tui.hooks.runner import CommandRun
from agent_tui.protocol import Decide, Decision, Interrupt, Op, PermissionRequested
from agent_tui.protocol.states import HookEnding, HookEvent
from agent_tui.protocol.tool_names import claude_input, claude_name, our_input
from agent_tui.sdk_protocol.wire import ControlError, Wire

CALLBACK_PREFIX = "sdk-callback:"
#: The file the app's hooks and agents are said to come from.
APP_FILE = Path("<agent sdk app>")


class SetupError(Exception):
    """The app's ``initialize`` asks for what agent-tui cannot do (said to the app)."""


def hook_commands(given: Any) -> list[HookCommand]:
    """The ``hooks`` of an ``initialize`` request as hook commands (one per callback id)."""
    if not given:
        return []
    if not isinstance(given, dict):
        raise SetupError("initialize: hooks must be an object of events")
    hooks: list[HookCommand] = []
    for event_name, matchers in given.items():
        try:
            event = HookEvent(event_name)
        except ValueError:
            raise SetupError(f"initialize: agent-tui runs no {event_name} hooks (it runs "
                             f"{', '.join(e.value for e in HookEvent)})") from None
        for group in matchers or []:
            hooks.extend(_group(event, group))
    return hooks


def _group(event: HookEvent, group: Any) -> list[HookCommand]:
    if not isinstance(group, dict):
        raise SetupError(f"initialize: a {event} hook matcher must be an object")
    try:
        matcher = Matcher.parse(group.get("matcher") or "")
        failure = group.get("onFailure")
        return [HookCommand(
            event=event, matcher=matcher, command=f"{CALLBACK_PREFIX}{callback_id}",
            timeout_s=float(group.get("timeout") or DEFAULT_TIMEOUT_S),
            on_failure=OnFailure.CONTINUE if failure == "continue" else (
                None if failure is None else OnFailure.BLOCK),
            file=APP_FILE,
        ) for callback_id in group.get("hookCallbackIds") or []]
    except (ValueError, TypeError) as exc:
        raise SetupError(f"initialize: a {event} hook: {exc}") from None


def add_callbacks(hooks: Any, callbacks: list[HookCommand], wire: Wire) -> None:
    """Join ``callbacks`` to the session's hooks (a :class:`CommandHooks`)."""
    if not callbacks:
        return
    if not isinstance(hooks, CommandHooks):
        raise SetupError("initialize: this session takes no hooks")

    async def run(hook: HookCommand, stdin: bytes, scope: CancelScope) -> CommandRun:
        return await run_callback(wire, hook, stdin, scope)

    hooks.extra.extend(callbacks)
    hooks.run_extra = run


async def run_callback(wire: Wire, hook: HookCommand, stdin: bytes, scope: CancelScope) -> CommandRun:
    """One ``hook_callback`` request, as a hook command's run."""
    if scope.cancelled:  # cancel point: what it would gate is already cancelled
        return CommandRun(ending=HookEnding.CANCELLED)
    payload = json.loads(stdin)
    started = time.monotonic()
    request = wire.request({
        "subtype": "hook_callback", "callback_id": hook.command.removeprefix(CALLBACK_PREFIX),
        "input": payload, "tool_use_id": payload.get("tool_use_id"),
    }, timeout=hook.timeout_s)
    try:
        async with scope.linked():  # cancel point: Esc while the app's hook runs
            answer = await request
    except Cancelled:
        return CommandRun(ending=HookEnding.CANCELLED)
    except TimeoutError:
        return CommandRun(ending=HookEnding.TIMED_OUT)
    except ControlError as exc:
        return CommandRun(ending=HookEnding.NOT_STARTED, error=f"the app's hook failed: {exc}")
    return CommandRun(ending=HookEnding.EXITED, exit_code=0, stdout=json.dumps(answer),
                      duration_s=round(time.monotonic() - started, 3))


class PermissionAsker:
    """Answers ``permission_requested`` through the app's ``can_use_tool``."""

    def __init__(self, wire: Wire, submit: Callable[[Op], None], workspace: Path,
                 on_asking: Callable[[bool], None] = lambda _waiting: None) -> None:
        self.wire = wire
        self.submit = submit
        self.workspace = workspace
        self.on_asking = on_asking  # True while a question waits for the app
        self._asking: set[asyncio.Task[None]] = set()
        self._waiting = 0  # questions the app has not answered yet

    def __call__(self, asked: PermissionRequested) -> None:
        task = asyncio.get_running_loop().create_task(self._ask(asked))
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _ask(self, asked: PermissionRequested) -> None:
        shown = claude_input(asked.name, asked.input, str(self.workspace))
        body: dict[str, Any] = {
            "subtype": "can_use_tool", "tool_name": claude_name(asked.name), "input": shown,
            "permission_suggestions": None, "blocked_path": None,
            "tool_use_id": asked.tool_use_id,
        }
        if asked.reason:
            body["decision_reason"] = asked.reason
        if asked.parent_tool_use_id is not None:
            body["agent_id"] = asked.parent_tool_use_id
        self._waiting += 1
        self.on_asking(True)
        try:
            answer = await self.wire.request(body)
        except ControlError as exc:
            self._deny(asked, f"the app's permission callback failed: {exc}")
            return
        finally:
            self._waiting -= 1
            self.on_asking(self._waiting > 0)
        if answer.get("behavior") != "allow":
            self._deny(asked, str(answer.get("message") or "denied by the app"))
            if answer.get("interrupt"):
                self.submit(Interrupt())
            return
        updated = answer.get("updatedInput")
        changed = our_input(asked.name, updated) if isinstance(updated, dict) and updated != shown else None
        self.submit(Decide(tool_use_id=asked.tool_use_id, decision=Decision.ALLOW_ONCE,
                           updated_input=changed))

    def _deny(self, asked: PermissionRequested, why: str) -> None:
        self.submit(Decide(tool_use_id=asked.tool_use_id, decision=Decision.DENY, note=why))


#: What an app's agent definition may say that agent-tui's sub-agent types hold.
_AGENT_KEYS = frozenset({"description", "prompt", "tools", "disallowedTools", "model"})


def add_agents(tools: Any, given: Any) -> None:
    """The ``agents`` of an ``initialize`` request as sub-agent types of the ``task``
    tool (beside ``.claude/agents/``'s; the app's win a name clash). A field agent-tui
    does not act on is an error naming it, never dropped."""
    if not given:
        return
    from agent_tui.core.calls.agent_types import INHERIT, AgentScope, AgentType
    from agent_tui.tools.task import TaskTool, describe

    task = tools.first(lambda t: t.starts_agents)
    if not isinstance(task, TaskTool) or not isinstance(given, dict):
        raise SetupError("initialize: agents need the task tool, and an object of agents")
    for name, spec in given.items():
        if not isinstance(spec, dict) or not spec.get("description") or not spec.get("prompt"):
            raise SetupError(f"initialize: agent {name!r} needs a description and a prompt")
        extra = sorted(set(spec) - _AGENT_KEYS)
        if extra:
            raise SetupError(f"initialize: agent {name!r}: {', '.join(extra)} not supported by "
                             "agent-tui (it takes description, prompt, tools, disallowedTools, "
                             "model)")
        agent = AgentType(
            name=str(name), description=str(spec["description"]), system=str(spec["prompt"]),
            file=APP_FILE, scope=AgentScope.USER,
            tools=None if spec.get("tools") is None else _our_names(name, spec["tools"]),
            disallowed=_our_names(name, spec.get("disallowedTools") or []),
            model=str(spec.get("model") or INHERIT),
        )
        kept = [t for t in task.agent_types.types if t.name != agent.name]
        task.agent_types.types = [*kept, agent]
    task.description = describe(task.agent_types)


def _our_names(agent: str, names: Any) -> tuple[str, ...]:
    from agent_tui.protocol.tool_names import our_name

    ours = []
    for name in names if isinstance(names, list) else []:
        found = our_name(str(name))
        if found is None:
            raise SetupError(f"initialize: agent {agent!r}: no tool is named {name!r}")
        ours.append(found)
    return tuple(ours)
