"""A custom command's ``!`` lines as the session's slot runs them, before its prompt.

The lines run under the command's own scope (Esc stops them; what is sent meanwhile
waits); its model is resolved and its ``UserPromptExpansion`` hooks judge the
prompt. When all went through, :attr:`CommandLinesTask.prompt` holds what the
command's turn is started with (by what follows the task in the slot); else the
user is told why nothing was sent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from pydantic import BaseModel

from agent_tui.cancel import CancelScope
from agent_tui.core.commands.command_run import CommandRun, CommandStopped, run_steps
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.hooks.work_points import prompt_expansion
from agent_tui.core.journal.records import HookRecord
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.services.model_control import resolve_model
from agent_tui.core.services.tasks import SessionTask, TaskContext, WorkKind
from agent_tui.protocol import Notice, NoticeLevel, TurnState, TurnStateChanged


@dataclass(frozen=True)
class CommandPrompt:
    """What the command's turn starts with: its prompt and the model it chose."""

    text: str
    model: str | None


class CommandLinesTask(SessionTask):
    """Runs ``command``'s lines and readies its prompt (``prompt``: None until then)."""

    kind: ClassVar[WorkKind] = WorkKind.COMMAND_LINES
    records: ClassVar[tuple[type[BaseModel], ...]] = (HookRecord,)

    def __init__(self, command: CommandRun) -> None:
        self.command = command
        self.prompt: CommandPrompt | None = None

    async def run(self, ctx: TaskContext, scope: CancelScope) -> None:
        run, deps = self.command, ctx.deps
        try:
            outputs = await run_steps(deps, run, scope, ctx.record)
            chosen = await resolve_model(deps, run.model, scope) if run.model else None
            text = run.compose(outputs)
            why = await prompt_expansion(
                HookPoints(deps, scope, ctx.record, run.turn_id), command_name=run.name,
                command_args=run.args, command_source=run.source, prompt=text)
            if why:
                raise CommandStopped(f"/{run.name} not sent: {why}")
            self.prompt = CommandPrompt(text, chosen)
        except CommandStopped as exc:
            self._stopped(ctx, scope, str(exc))

    async def aborted(self, ctx: TaskContext, scope: CancelScope) -> None:
        self._stopped(ctx, scope, f"/{self.command.name} stopped before its prompt: nothing was sent")

    def turn_deps(self, deps: SessionDeps) -> SessionDeps:
        """The session's ``deps`` as the command's turn runs under them: its policy,
        its model."""
        run, prompt = self.command, self.prompt
        if run.policy is not None:
            deps = replace(deps, policy=run.policy)
        if prompt is not None and prompt.model is not None:
            deps = replace(deps, config=replace(deps.config, model=prompt.model))
        return deps

    def _stopped(self, ctx: TaskContext, scope: CancelScope, why: str) -> None:
        ctx.emit(Notice(level=NoticeLevel.ERROR, text=why))
        if scope.cancelled:  # its lines ran: the front ends saw it running
            ctx.emit(TurnStateChanged(turn_id=self.command.turn_id, state=TurnState.CANCELLED,
                                      detail=why))
