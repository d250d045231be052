"""The session's side of custom commands with a turn of their own (a part of ``Session``).

A :class:`~agent_tui.core.commands.command_run.CommandRun` sent while idle runs at once: its
``!`` lines in the session's slot (as a compaction: an ``interrupt`` stops
them, and what was sent meanwhile waits), then its prompt as a turn under the
command's policy and model. Sent while a turn runs, it waits for that turn to end
and starts after the steers (before the follow-ups); when that turn does not
complete, it is not run, and said so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from agent_tui.cancel import Cancelled, CancelScope
from agent_tui.core.commands.command_run import CommandRun, CommandStopped, run_steps
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.hooks.work_points import prompt_expansion
from agent_tui.core.journal.records import Record
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.services.model_control import resolve_model
from agent_tui.core.session.slot import Slot, Work, WorkKind
from agent_tui.protocol import Event, Notice, NoticeLevel, TurnState, TurnStateChanged


class CommandTurns:
    """Mixed into ``Session``, whose state (``deps``, ``root``, ``slot``) and helpers
    (``_emit``, ``_start_turn``) it uses."""

    deps: SessionDeps
    root: CancelScope
    slot: Slot
    _emit: Callable[[Event], None]
    _record: Callable[[Record], None]
    _start_turn: Callable[..., None]

    def _command(self, run: CommandRun) -> None:
        if self.slot.turn is None:
            self._start_command(run)
            return
        self.slot.after_turn.commands.append(run)
        self._emit(Notice(level=NoticeLevel.INFO, text=f"/{run.name} runs when this turn ends"))

    def _next_command(self) -> bool:
        """After a completed turn: start the command that waited for it, if any."""
        waiting = self.slot.after_turn.commands
        if not waiting:
            return False
        self._start_command(waiting.pop(0))
        return True

    def _drop_commands(self) -> None:
        """The turn they waited for did not complete: they are not run."""
        waiting = self.slot.after_turn.commands
        for run in waiting:
            self._emit(Notice(level=NoticeLevel.WARNING,
                              text=f"/{run.name} not run: the turn before it did not complete"))
        waiting.clear()

    def _stopped(self, run: CommandRun, scope: CancelScope, why: str) -> None:
        self._emit(Notice(level=NoticeLevel.ERROR, text=why))
        if scope.cancelled:  # its lines ran: the front ends saw it running
            self._emit(TurnStateChanged(turn_id=run.turn_id, state=TurnState.CANCELLED, detail=why))

    def _start_command(self, run: CommandRun) -> None:
        ready: list[tuple[str, str | None]] = []
        scope = self.root.child(f"command {run.name}")

        async def steps() -> None:
            try:
                outputs = await run_steps(self.deps, run, scope, self._record)
                chosen = await resolve_model(self.deps, run.model, scope) if run.model else None
                text = run.compose(outputs)
                why = await prompt_expansion(
                    HookPoints(self.deps, scope, self._record, run.turn_id), command_name=run.name,
                    command_args=run.args, command_source=run.source, prompt=text)
                if why:
                    raise CommandStopped(f"/{run.name} not sent: {why}")
                ready.append((text, chosen))
            except CommandStopped as exc:
                self._stopped(run, scope, str(exc))
            except Cancelled:
                self._stopped(run, scope, f"/{run.name} stopped before its prompt: nothing was sent")

        def then() -> None:
            if not ready:
                return
            text, chosen = ready[0]
            deps = self.deps if run.policy is None else replace(self.deps, policy=run.policy)
            if chosen is not None:
                deps = replace(deps, config=replace(deps.config, model=chosen))
            self._start_turn(text, deps=deps)

        self.slot.start(Work(kind=WorkKind.COMMAND_LINES, scope=scope, command=run),
                        steps(), then=then)
