"""The core's hooks port over configured commands (:class:`CommandHooks`).

For each event it picks the hooks whose matcher fits (the same command configured
twice runs once), writes the input JSON Claude Code sends, runs them side by side
(``runner.py``), and combines what they said (``answers.py``). The input carries the
common fields (``session_id``, ``transcript_path``: the session's transcript in
Claude Code's JSONL shape, ``cwd``, ``permission_mode`` in Claude Code's words,
``hook_event_name``; inside a sub-agent, ``agent_id`` and ``agent_type``) and the
event's own; a tool's name, input and response are in
Claude Code's shapes (``payloads.py``), and an ``updatedInput`` is turned back into
our keys. The environment is a command's (the agent's credentials removed, the
settings' ``env`` added) plus ``CLAUDE_PROJECT_DIR``, the workspace, and, for
``SessionStart``, ``CLAUDE_ENV_FILE`` (``env_file.py``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, assert_never

from agent_tui.cancel import CancelScope
from agent_tui.core.calls.tool import AnyTool
from agent_tui.core.services.hooks_port import (
    HookAnswer,
    HookBase,
    HookRow,
    HookRun,
    SettingsChange,
)
from agent_tui.protocol.states import HookDecision, HookEnding, HookEvent
from agent_tui.providers.base import Provider
from agent_tui.protocol.tool_names import our_input
from agent_tui.credentials import command_env
from agent_tui.hooks.answers import combine, decide
from agent_tui.hooks.config import HookCommand, HookKind
from agent_tui.hooks.env_file import (
    ENV_FILE_VAR,
    new_env_file,
    read_env_file,
    remove_env_file,
)
from agent_tui.hooks.events import event_facts
from agent_tui.hooks.payloads import claude_mode
from agent_tui.hooks.runner import CommandRun, run_command
from agent_tui.permissions import Permissions
from agent_tui.runtime.process import RunLimits

if TYPE_CHECKING:  # a prompt, MCP or HTTP hook's module is imported at its first run
    from agent_tui.hooks.prompt_hook import Account

#: Claude Code's bound (observed: a Stop hook that always blocks gets 8 more turns);
#: settings ``limits.stopHookContinues`` changes it.
DEFAULT_MAX_STOP_CONTINUES = 8


class SettingsWatch(Protocol):
    """What reads the settings files again (``reload.py``)."""

    def changed(self) -> list[SettingsChange]: ...

    def apply(self, blocked: Mapping[str, str]) -> None: ...


class CommandHooks:
    """Implements :class:`agent_tui.core.services.hooks_port.HooksPort`."""

    def __init__(
        self,
        commands: list[HookCommand],
        *,
        workspace: Path,
        env: Mapping[str, str] | None = None,
        permission_mode: str | Callable[[], str] = "ask",  # ours; a callable: the current one
        interactive: bool = True,
        max_stop_continues: int = DEFAULT_MAX_STOP_CONTINUES,
        limits: RunLimits | None = None,
    ) -> None:
        self.commands = list(commands)
        self.workspace = workspace
        self.env = {**command_env(env), "CLAUDE_PROJECT_DIR": str(workspace)}
        self.permission_mode = permission_mode
        self.interactive = interactive
        self.max_stop_continues = max_stop_continues
        self.limits = limits
        # Hooks an app registered (``sdk_protocol``: the Agent SDK's callbacks), run by
        # ``run_extra`` instead of a shell; a settings reload leaves them alone.
        self.extra: list[HookCommand] = []
        self.run_extra: Callable[[HookCommand, bytes, CancelScope], Awaitable[CommandRun]] | None = None
        self._conditions = Permissions(workspace)  # only its rule matching: for ``if``
        # Prompt hooks ask the session's provider, through its account (the spending
        # cap, /cost): set by the wiring once they are made.
        self.provider: Provider | None = None
        self.account: Account | None = None
        # MCP tool hooks call the session's MCP tools: set by the wiring.
        self.mcp_tools: Callable[[], Sequence[AnyTool]] | None = None
        self.model: Callable[[], str] = lambda: ""
        # What reads the settings files again between turns: set by ``HooksReload``.
        self.settings: SettingsWatch | None = None

    # -- what is configured ---------------------------------------------------------

    def _hooks(
        self, event: HookEvent, subject: str | None, tool_input: Mapping[str, Any] | None = None
    ) -> list[HookCommand]:
        chosen: dict[str, HookCommand] = {}
        for hook in [*self.commands, *self.extra]:
            if hook.event is event and hook.matcher.matches(subject) and self._met(
                    hook, subject, tool_input):
                chosen.setdefault(hook.command, hook)
        return list(chosen.values())

    def _met(self, hook: HookCommand, subject: str | None,
             tool_input: Mapping[str, Any] | None) -> bool:
        """A hook's ``if``: the call's tool and input match its rule (no input known:
        it runs, a guard is never skipped for want of facts)."""
        if hook.condition is None or subject is None or tool_input is None:
            return True
        return self._conditions.matches_input(hook.condition, subject, tool_input)

    def matching(
        self, event: HookEvent, subject: str | None = None,
        tool_input: Mapping[str, Any] | None = None,
    ) -> list[HookRow]:
        return [_row(h) for h in self._hooks(event, subject, tool_input)]

    def rows(self) -> list[HookRow]:
        return [_row(h) for h in [*self.commands, *self.extra]]

    # -- the events -----------------------------------------------------------------

    async def fire(
        self, event: HookEvent, base: HookBase, scope: CancelScope, fields: Mapping[str, Any],
        *, subject: str | None = None, tool_input: Mapping[str, Any] | None = None,
    ) -> HookAnswer:
        facts = event_facts(event)
        if facts.env_file:
            answer = await self._with_env_file(event, subject, base, scope, fields)
        else:
            answer = await self._run(event, subject, base, scope, fields, tool_input=tool_input)
        if facts.unattended:
            answer = _no_changes(event, answer)
        elif facts.changes_input and subject is not None:  # back into our keys
            for run in answer.runs:
                if run.updated_input:
                    run.updated_input = our_input(subject, run.updated_input)
            if answer.updated_input:
                answer.updated_input = our_input(subject, answer.updated_input)
        answer.ends_turn = facts.ends_turn
        return answer

    async def _with_env_file(
        self, event: HookEvent, subject: str | None, base: HookBase, scope: CancelScope,
        fields: Mapping[str, Any],
    ) -> HookAnswer:
        """The hooks of ``event`` with ``CLAUDE_ENV_FILE``; the answer's ``env`` is what
        they wrote there (read bounded, after they ended)."""
        if not self._hooks(event, subject):
            return HookAnswer()
        path = new_env_file()
        try:
            env = {**self.env, ENV_FILE_VAR: str(path)}
            answer = await self._run(event, subject, base, scope, fields, env=env)
            if scope.cancelled:  # cancel point: no reading once the session is ending
                return answer
            read = await read_env_file(path, env=self.env, cwd=self.workspace, scope=scope,
                                       limits=self.limits)
        finally:
            remove_env_file(path)
        answer.env = read.env
        if read.error and answer.runs:
            first = answer.runs[0]
            first.message = f"{first.message}; {read.error}" if first.message else read.error
        return answer

    def changed_settings(self) -> list[SettingsChange]:
        return self.settings.changed() if self.settings is not None else []

    def apply_settings(self, blocked: Mapping[str, str]) -> None:
        if self.settings is not None:
            self.settings.apply(blocked)

    # -- running --------------------------------------------------------------------

    def _one(self, hook: HookCommand, stdin: bytes, scope: CancelScope,
             env: Mapping[str, str] | None) -> Awaitable[CommandRun]:
        """One hook's run: its command, or its POST (headers filled only with the
        variables the hook allows, from a command's environment: the agent's own
        credentials are never among them)."""
        if self.run_extra is not None and hook in self.extra:  # an app's callback
            return self.run_extra(hook, stdin, scope)
        match hook.kind:
            case HookKind.COMMAND:
                return run_command(
                    hook.command, stdin, cwd=self.workspace,
                    env={**(env if env is not None else self.env), **hook.env},
                    timeout_s=hook.timeout_s, scope=scope, limits=self.limits)
            case HookKind.PROMPT:
                from agent_tui.hooks.prompt_hook import ask_model

                if self.provider is None:
                    return _ready(CommandRun(ending=HookEnding.NOT_STARTED,
                                             error="no model to ask in this session"))
                return ask_model(self.provider, hook.model or self.model(), hook.command,
                                 stdin.decode(), timeout_s=hook.timeout_s, scope=scope,
                                 account=self.account)
            case HookKind.MCP_TOOL:
                from agent_tui.hooks.mcp_hook import call_tool

                if self.mcp_tools is None:
                    return _ready(CommandRun(ending=HookEnding.NOT_STARTED,
                                             error="no MCP servers in this session"))
                return call_tool(self.mcp_tools(), hook.mcp_server, hook.mcp_tool,
                                 hook.mcp_input, _given(stdin), workspace=self.workspace,
                                 timeout_s=hook.timeout_s, scope=scope)
            case HookKind.HTTP:
                from agent_tui.hooks.http_hook import header_values, post_hook

                headers = header_values(hook.headers, hook.allowed_env, self.env)
                return post_hook(hook.command, stdin, headers=headers, timeout_s=hook.timeout_s,
                                 scope=scope)
            case _:
                assert_never(hook.kind)

    def _mode(self) -> str:
        mode = self.permission_mode
        return claude_mode(mode() if callable(mode) else mode)

    async def _run(
        self, event: HookEvent, subject: str | None, base: HookBase, scope: CancelScope,
        fields: Mapping[str, Any], *, env: Mapping[str, str] | None = None,
        tool_input: Mapping[str, Any] | None = None,
    ) -> HookAnswer:
        hooks = self._hooks(event, subject, tool_input)
        if not hooks:
            return HookAnswer()
        facts = event_facts(event)
        own = facts.shape(fields, str(self.workspace))
        stray = sorted(set(own) - facts.stdin)
        if stray:  # the row is what the hooks read: a field it does not name is a slip
            raise ValueError(f"{event} hooks do not read {', '.join(stray)} (hooks/events.py)")
        payload = {
            **base.fields(), "permission_mode": self._mode(),
            "hook_event_name": str(event), **own,
        }
        stdin = json.dumps(payload, ensure_ascii=False, default=str).encode()
        ran = await asyncio.gather(*(self._one(hook, stdin, scope, env) for hook in hooks))
        runs = [_held(event, subject, hook, decide(event, hook, result))
                for hook, result in zip(hooks, ran)]
        return combine(runs, can_ask=self.interactive)


def _held(event: HookEvent, subject: str | None, hook: HookCommand, run: HookRun) -> HookRun:
    """What a project's hook may not do (stricter than Claude Code, where a trusted
    project's hook may): answer a permission prompt or an MCP server's question with
    a yes on your behalf (it may say no), or keep a change of a settings file that is
    not the project's own (your files, ``--settings``) from applying: a repository
    never holds up a guard you add."""
    said = ""
    if not hook.project:
        return run
    facts = event_facts(event)
    if facts.answers_prompt and run.decision is HookDecision.ALLOW:
        run.decision = HookDecision.NONE
        said = f"a project's {event} hook cannot allow a call; you are asked"
    elif facts.replies and run.reply is not None and run.reply.get("action") == "accept":
        run.reply = None
        said = f"a project's {event} hook cannot accept for you; its answer is ignored"
    elif (facts.guards_settings and run.decision is HookDecision.BLOCK
          and subject not in PROJECT_SOURCES):
        run.decision, run.reason = HookDecision.NONE, ""
        said = f"a project's {event} hook cannot block a change to {subject}; it applies"
    if said:
        run.message = f"{run.message}; {said}" if run.message else said
    return run


def _no_changes(event: HookEvent, answer: HookAnswer) -> HookAnswer:
    """An unattended event (``PreSkillShellCommand``): an ``updatedInput`` is never
    applied, and any value keeps the line from running (as in Claude Code); ``ask``
    does too (no one is asked about a command's lines)."""
    for run in answer.runs:
        if run.updated_input and run.decision is not HookDecision.BLOCK:
            run.decision = HookDecision.BLOCK
            run.reason = run.reason or f"a {event} hook changed the command"
        if run.decision is HookDecision.ASK:
            run.decision = HookDecision.BLOCK
            run.reason = run.reason or f"a {event} hook asks to confirm it"
        run.updated_input = None
    return combine(answer.runs, can_ask=False) if answer.runs else answer


#: The ``ConfigChange`` sources a project's hook may block: the project's own files.
PROJECT_SOURCES = frozenset({"project_settings", "local_settings"})


def _given(stdin: bytes) -> Any:
    try:
        return json.loads(stdin)
    except ValueError:
        return {}


async def _ready(run: CommandRun) -> CommandRun:
    return run


def _row(hook: HookCommand) -> HookRow:
    return HookRow(
        event=hook.event, matcher=hook.matcher.text, command=hook.command,
        timeout_s=hook.timeout_s, source=hook.source,
    )
