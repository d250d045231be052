"""The core's hooks port over configured commands (:class:`CommandHooks`).

For each event it picks the hooks whose matcher fits (the same command configured
twice runs once), writes Claude Code's input JSON, runs them side by side
(``runner.py``), and combines what they said (``answers.py``). The input carries the
common fields (``session_id``, ``transcript_path``: the session's journal, ``cwd``,
``permission_mode``, ``hook_event_name``) and the event's own. A file tool's
``tool_input`` also gets Claude Code's ``file_path`` (absolute) beside our ``path``,
and ``tool_response`` its ``stdout`` (commands) or ``filePath`` (file tools), so
hook scripts written for Claude Code read what they expect. The environment is a
command's (the agent's credentials removed, the settings' ``env`` added) plus
``CLAUDE_PROJECT_DIR``, the workspace.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_tui.cancel import CancelScope
from agent_tui.core.hooks import HookAnswer, HookBase, HookRow
from agent_tui.protocol.states import HookEvent
from agent_tui.tools.bash import command_env
from agent_tui.tools.hooks.answers import combine, decide
from agent_tui.tools.hooks.config import HookCommand
from agent_tui.tools.hooks.runner import run_command
from agent_tui.tools.process import RunLimits

E = HookEvent
DEFAULT_MAX_STOP_CONTINUES = 3


class CommandHooks:
    """Implements :class:`agent_tui.core.hooks.HooksPort`."""

    def __init__(
        self,
        commands: list[HookCommand],
        *,
        workspace: Path,
        env: Mapping[str, str] | None = None,
        permission_mode: str = "ask",
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

    # -- what is configured ---------------------------------------------------------

    def _hooks(self, event: HookEvent, subject: str | None) -> list[HookCommand]:
        chosen: dict[str, HookCommand] = {}
        for hook in self.commands:
            if hook.event is event and hook.matcher.matches(subject):
                chosen.setdefault(hook.command, hook)
        return list(chosen.values())

    def matching(self, event: HookEvent, subject: str | None = None) -> list[HookRow]:
        return [_row(h) for h in self._hooks(event, subject)]

    def rows(self) -> list[HookRow]:
        return [_row(h) for h in self.commands]

    # -- the events -----------------------------------------------------------------

    async def pre_tool_use(
        self, base: HookBase, scope: CancelScope, *, tool_name: str, tool_input: dict[str, Any],
        tool_use_id: str,
    ) -> HookAnswer:
        return await self._run(E.PRE_TOOL_USE, tool_name, base, scope, {
            "tool_name": tool_name, "tool_input": self._input(tool_input),
            "tool_use_id": tool_use_id,
        })

    async def post_tool_use(
        self, base: HookBase, scope: CancelScope, *, tool_name: str, tool_input: dict[str, Any],
        tool_use_id: str, tool_response: dict[str, Any],
    ) -> HookAnswer:
        given = self._input(tool_input)
        response = dict(tool_response)
        if "command" in given:
            response.setdefault("stdout", response.get("content", ""))
        if "file_path" in given:
            response.setdefault("filePath", given["file_path"])
        return await self._run(E.POST_TOOL_USE, tool_name, base, scope, {
            "tool_name": tool_name, "tool_input": given, "tool_use_id": tool_use_id,
            "tool_response": response,
        })

    async def user_prompt_submit(
        self, base: HookBase, scope: CancelScope, *, prompt: str
    ) -> HookAnswer:
        return await self._run(E.USER_PROMPT_SUBMIT, None, base, scope, {"prompt": prompt})

    async def stop(
        self, base: HookBase, scope: CancelScope, *, stop_hook_active: bool
    ) -> HookAnswer:
        return await self._run(E.STOP, None, base, scope, {"stop_hook_active": stop_hook_active})

    async def session_start(self, base: HookBase, scope: CancelScope, *, source: str) -> HookAnswer:
        return await self._run(E.SESSION_START, source, base, scope, {"source": source})

    async def pre_compact(
        self, base: HookBase, scope: CancelScope, *, trigger: str, custom_instructions: str
    ) -> HookAnswer:
        return await self._run(E.PRE_COMPACT, trigger, base, scope, {
            "trigger": trigger, "custom_instructions": custom_instructions,
        })

    # -- running --------------------------------------------------------------------

    def _input(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        given = dict(tool_input)
        path = given.get("path")
        if isinstance(path, str) and "file_path" not in given and "\0" not in path:
            given["file_path"] = os.path.normpath(os.path.join(self.workspace, path))
        return given

    async def _run(
        self, event: HookEvent, subject: str | None, base: HookBase, scope: CancelScope,
        fields: dict[str, Any],
    ) -> HookAnswer:
        hooks = self._hooks(event, subject)
        if not hooks:
            return HookAnswer()
        payload = {
            **base.model_dump(), "permission_mode": self.permission_mode,
            "hook_event_name": str(event), **fields,
        }
        stdin = json.dumps(payload, ensure_ascii=False, default=str).encode()
        ran = await asyncio.gather(*(
            run_command(
                hook.command, stdin, cwd=self.workspace, env=self.env,
                timeout_s=hook.timeout_s, scope=scope, limits=self.limits,
            )
            for hook in hooks
        ))
        runs = [decide(event, hook, result) for hook, result in zip(hooks, ran)]
        return combine(runs, can_ask=self.interactive)


def _row(hook: HookCommand) -> HookRow:
    return HookRow(
        event=hook.event, matcher=hook.matcher.text, command=hook.command,
        timeout_s=hook.timeout_s, source=hook.source,
    )
