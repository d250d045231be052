"""A conversation: takes Ops, runs its work one piece at a time, emits Events.

The session runs on its own asyncio loop (a thread of its own under the TUI; the
main thread in print and ACP modes). ``submit`` is the one thread-safe way in.
A user message while a turn runs becomes a steer; a follow-up waits for the agent
to stop on its own; an interrupt cancels the scope of what runs and returns whatever
is still queued to the user.

``Session`` owns the loop, the slot and what is set up once; it hands each op to one
collaborator: :class:`~agent_tui.core.session.work.SessionWork` for the ops that
start work in the slot, :class:`~agent_tui.core.session.session_controls.SessionControls`
for the rest.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import assert_never

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.protocol import (
    CancelTool,
    ClearConversation,
    Compact,
    Decide,
    EditQueued,
    Event,
    FollowUp,
    Interrupt,
    ListModels,
    ListRewindPoints,
    Notice,
    NoticeLevel,
    Op,
    PermissionMode,
    PlanRewind,
    RemoveQueued,
    RenameSession,
    Rewind,
    RunShell,
    SendNow,
    SessionClosed,
    SessionEndReason,
    SetModel,
    SetPermissionMode,
    SetThinking,
    ShowContext,
    Shutdown,
    SteerState,
    SteerStatus,
    StopBackground,
    TurnStatus,
    UserMessage,
)
from agent_tui.core.journal.claude_transcript import ClaudeTranscript
from agent_tui.core.commands.command_run import CommandRun
from agent_tui.core.journal.records import Record
from agent_tui.core.memory.memory import MemoryFile, MemoryProblem
from agent_tui.core.memory.memory_loader import load_memory_with_problems, read_refusal
from agent_tui.core.services.model_control import ModelControl
from agent_tui.core.memory.output_styles import style_in_force
from agent_tui.core.memory.prompt import build_system_prompt
from agent_tui.core.hooks.session_end import SessionEnding, starting
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.hooks.idle import IdleReminder
from agent_tui.core.hooks.work_points import ModelSwitchHooks
from agent_tui.core.services.hooks_port import HookRow
from agent_tui.core.compaction.context_report import context_report
from agent_tui.core.session.rewind import Rewinder
from agent_tui.core.subagents.resumed import mode_to_tell, settle_journal
from agent_tui.core.commands.op_dispatch import OP_TYPES, SessionOp, dispatch, unknown_op
from agent_tui.core.session.session_controls import BackgroundWork, SessionControls
from agent_tui.core.session.slot import SLOT_OPS, Arrival, Slot, arrival, counts_as_busy, refusal
from agent_tui.core.session.work import Ready, SessionWork
from agent_tui.core.subagents.subagent import SubAgents
from agent_tui.core.services.deps import SessionDeps, SubAgentsPort
from agent_tui.core.services.emit_guard import guarded
from agent_tui.core.services.tasks import TaskContext
from agent_tui.core.calls.permission import PermissionPolicy
from agent_tui.core.calls.tool import ToolSet


class Session:
    """One conversation: the loop that takes ops, the slot, and the collaborators each
    op is handed to (``work``, ``controls``)."""

    def __init__(
        self,
        deps: SessionDeps,
        *,
        background: list[BackgroundWork] | None = None,
        on_start: list[Callable[[], None]] | None = None,
        ready: list[Callable[[], Awaitable[None]]] | None = None,
    ) -> None:
        deps = replace(deps, emit=guarded(deps.emit))  # a broken front end loses events only
        self.deps = deps
        self.root = CancelScope("session")
        self.background = list(background or [])
        self.on_start = list(on_start or [])
        # Waited for (bounded by each) before the first model request: e.g. MCP
        # servers starting, so their tools are offered from the first turn on.
        self.ready = list(ready or [])
        self._ready_task: Ready | None = None
        deps.journal.on_recovered = deps.emit  # the user hears when writes work again
        settled = settle_journal(self.deps.journal.records, self.tools, self._record)
        self._offered_back = settled.offered_back
        self._opened_with = len(deps.journal.records)  # records, once settled
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ops: asyncio.Queue[SessionOp] | None = None
        self._early: list[SessionOp] = []
        self._closing: SessionEndReason | None = None  # a Shutdown was handled: the loop ends
        self._lock = threading.Lock()
        self._unhandled = 0  # ops submitted and not yet handled
        subagents: SubAgentsPort
        if deps.subagents is None:
            subagents = SubAgents(deps.journal, deps.emit)
            deps = replace(deps, subagents=subagents)
        else:  # a background sub-agent's news goes through the guard too
            subagents = deps.subagents
            subagents.emit = guarded(subagents.emit)
        if deps.hooks is not None and deps.transcript is None:  # what hooks read
            deps = replace(deps, transcript=ClaudeTranscript.beside(
                deps.journal, session_id=deps.config.session_id,
                cwd=str(deps.config.workspace), emit=deps.emit))
        self.memory_files: list[MemoryFile] = []
        self.memory_problems: list[MemoryProblem] = []
        if not deps.config.system:
            deps = self._with_system_prompt(deps)
        self.deps = deps
        self.models = ModelControl(deps)
        self.models.restore()
        # Facts for /context the wiring knows (how commands are contained, ...).
        self.context_notes: list[str] = []
        # Short words a front end shows beside the session's state ("sandbox"); the
        # wiring sets them, the core never reads them.
        self.badges: list[str] = []
        self.subagents = subagents
        self.rewinder = Rewinder(deps)
        if isinstance(self.subagents, SubAgents):
            self.background.append(self.subagents)
        self.ending = SessionEnding()  # SessionEnd, when it ends
        # Notification idle_prompt, once the work ended and the user has not written
        self.idle = IdleReminder(lambda: HookPoints(deps, self.root, self._record),
                                 deps.config.idle_notify_s if deps.hooks is not None else None)
        ctx = TaskContext(deps, self._emit)
        # What runs now (a turn, a compaction, a rewind, ...), what waits for it, and
        # what runs after the turn: one slot.
        self.slot = Slot(replay=self._handle, ctx=ctx)
        self.work = SessionWork(ctx, root=self.root, slot=self.slot, rewinder=self.rewinder,
                                idle=self.idle, ready=lambda: self._ready_task,
                                first_turn=settled.turns + 1)
        self.controls = SessionControls(
            ctx, root=self.root, slot=self.slot, models=self.models, rewinder=self.rewinder,
            subagents=subagents, background=self.background, interrupt=self.on_interrupt,
            loop=lambda: self._loop)
        if deps.hooks is not None:  # SessionStart: its context is in the first request
            self.ready.append(starting(deps, self.root, self._record, self.memory_files))
            self.models.switch_hooks = ModelSwitchHooks(HookPoints(deps, self.root, self._record))

    def _with_system_prompt(self, deps: SessionDeps) -> SessionDeps:
        """``deps`` with the coding-agent prompt, built once from the memory files and
        the output style: byte-identical for every request of the session (the cache)."""
        workspace = deps.config.workspace
        loaded = load_memory_with_problems(workspace, refuse=read_refusal(deps.policy, deps.tools))
        self.memory_files, self.memory_problems = loaded.files, loaded.problems
        for problem in self.memory_problems:
            deps.emit(Notice(level=NoticeLevel.WARNING, text=str(problem)))
        cfg = deps.config
        style, warnings = style_in_force(workspace, cfg.output_style)
        for warning in warnings:
            deps.emit(Notice(level=NoticeLevel.WARNING, text=warning))
        return replace(deps, config=replace(cfg, system=build_system_prompt(
            workspace, self.memory_files, replaced_by=cfg.system_replaced_by,
            appended=cfg.system_appended, style=style),
            output_style=style.name if style is not None else None))

    def past_records(self) -> list[Record]:
        """What the journal held when the session opened (a resumed session's
        conversation so far; empty for a new one), for a front end to show."""
        return self.deps.journal.records[: self._opened_with]

    def records(self) -> list[Record]:
        """Every journal record so far (a copy), e.g. to replay a loaded session."""
        return self.deps.journal.records

    def memory(self) -> list[MemoryFile]:
        """The memory files in the system prompt (``/memory``)."""
        return list(self.memory_files)

    @property
    def workspace(self) -> Path:
        return self.deps.config.workspace

    @property
    def session_id(self) -> str:
        """The saved session's id (its folder under the state home)."""
        return self.deps.config.session_id

    @property
    def tools(self) -> ToolSet:
        return self.deps.tools

    @property
    def added_dirs(self) -> list[Path]:
        """The folders added to the workspace; ``/add-dir`` appends (resolved ones)."""
        return self.deps.config.added_dirs

    def hooks(self) -> list[HookRow]:
        """The hooks in force and where each came from (``/hooks``)."""
        return self.deps.hooks.rows() if self.deps.hooks is not None else []

    def hooked(self, event: str) -> bool:
        """Whether any hook is configured for ``event`` (Claude Code's name), from any thread."""
        return self.controls.hooked(event)

    def directory_added(self, folder: Path) -> None:
        """``DirectoryAdded`` hooks for a folder ``/add-dir`` added (from any thread)."""
        self.controls.directory_added(folder)

    @property
    def last_status(self) -> TurnStatus | None:
        """How the last turn ended (None before the first)."""
        return self.work.last_status

    @property
    def permission_mode(self) -> PermissionMode:
        """The mode calls are decided by now (``SetPermissionMode`` changes it)."""
        return self.deps.policy.mode

    @property
    def policy(self) -> PermissionPolicy:
        """Who may run what (front ends list its rules)."""
        return self.deps.policy

    # -- the way in (any thread) ---------------------------------------------------

    def submit(self, op: Op) -> None:
        """The one way in for every op. An interrupt also cancels what runs at once,
        here, from the caller's thread (Esc stops at once, however busy the loop
        is); its handler on the loop then returns what was queued."""
        if isinstance(op, Interrupt):
            self._stop_now(hurry=True)
        self._put(op)

    def run_command(self, run: CommandRun) -> None:
        """A custom command with its own turn (``core/commands/command_run.py``), from any thread:
        its ``!`` lines run first, then its prompt; sent while a turn runs, it waits
        for that turn to end, as a follow-up does."""
        self._put(run)

    def _put(self, op: SessionOp) -> None:
        with self._lock:
            self._unhandled += 1
            if self._loop is None or self._ops is None:
                self._early.append(op)
                return
            loop, ops = self._loop, self._ops
        try:
            loop.call_soon_threadsafe(ops.put_nowait, op)
        except RuntimeError:
            pass  # the session has stopped

    def interrupt_now(self) -> None:
        """``submit(Interrupt())``: cancel at once, from any thread (e.g. a signal handler)."""
        self.submit(Interrupt())

    def _stop_now(self, *, hurry: bool = False) -> bool:
        """Cancel what runs in the slot (a turn, a compaction, a ``!`` command, a
        command's lines). True when something was cancelled now. ``hurry``: when it
        was cancelled already (a second Esc), what is still being stopped is stopped
        now, without its grace."""
        self.ending.interrupt()  # SessionEnd hooks running as the session ends
        if hurry and self._loop is not None:  # calls an ended turn left stopping
            self._loop.call_soon_threadsafe(self.deps.stopping.hurry)
        return self.slot.stop(hurry=hurry)

    @property
    def busy(self) -> bool:
        """A turn runs, or a command's ``!`` lines do (``core/commands/command_task.py``)."""
        kind = self.slot.kind
        return kind is not None and counts_as_busy(kind)

    # -- the loop ---------------------------------------------------------------------

    async def run(self) -> None:
        """Process ops until a Shutdown op arrives."""
        ops: asyncio.Queue[SessionOp] = asyncio.Queue()
        with self._lock:
            self._loop = asyncio.get_running_loop()
            self._ops = ops
            early, self._early = self._early, []
        for op in early:
            ops.put_nowait(op)
        for steer in self._offered_back:
            self._emit(SteerState(id=steer.id, state=SteerStatus.RETURNED,
                                  kind=steer.steer_kind, text=steer.text))
        told = mode_to_tell(self.deps.journal.records, self.deps.policy.mode)
        if told is not None:
            self._record(told)
        for begin in self.on_start:  # work that must begin on the core's loop
            try:
                begin()
            except Exception as exc:
                self._emit(Notice(level=NoticeLevel.ERROR, text=f"could not start: {exc!r}"))
        # The model's window and capabilities, in the background: no turn waits.
        self.controls.side.start(self.controls.check_model())
        if self.ready:
            self._ready_task = asyncio.ensure_future(
                asyncio.gather(*(wait() for wait in self.ready), return_exceptions=True)
            )
        while self._closing is None:
            op = await ops.get()
            try:
                self._handle(op)
            except Exception as exc:  # a bug: say so, keep the session alive
                self._emit(Notice(level=NoticeLevel.ERROR, text=f"internal error: {exc!r}"))
            finally:
                if self._closing is None:
                    with self._lock:
                        self._unhandled -= 1
        await self._shutdown(self._closing)

    async def wait_ready(self) -> None:
        """Wait until what the session waits for before its first request (SessionStart
        hooks, MCP servers starting) has ended; at once when nothing is."""
        while self._ready_task is None and self.ready and self._closing is None:
            await asyncio.sleep(0.005)  # run() has not started it yet
        if self._ready_task is not None:
            await asyncio.shield(self._ready_task)

    async def wait_idle(self) -> None:
        """Wait until no turn runs and nothing is queued to start one."""
        while True:
            with self._lock:
                if self._ops is not None and self.slot.running is None and self._unhandled == 0:
                    return
            await asyncio.sleep(0.005)

    def _emit(self, event: Event) -> None:
        self.deps.emit(event)

    def _record(self, record: Record) -> None:
        """Append to the journal as every task does (a failed write is shown)."""
        TaskContext(self.deps, self._emit).record(record)

    def _handle(self, op: SessionOp) -> None:
        self.idle.disarm()  # the user is here: no "waiting for your input" for this wait
        if not isinstance(op, OP_TYPES):
            self._emit(unknown_op(op))
            return
        if isinstance(op, SLOT_OPS) and (running := self.slot.kind) is not None:
            verdict = arrival(running, op)
            match verdict:
                case Arrival.WAIT:
                    self.slot.wait(op)  # handled again once the slot is free
                    return
                case Arrival.REFUSE:
                    self._emit(Notice(level=NoticeLevel.WARNING, text=refusal(running, op)))
                    return
                case Arrival.JOIN | Arrival.START:
                    pass  # its handler starts its work, or joins the running turn
                case _:
                    assert_never(verdict)
        dispatch(self, op)

    # -- the handlers of core/commands/op_dispatch.py: the session's own, then the ones
    # its collaborators hold -------------------------------------------------------------

    def on_interrupt(self, op: Interrupt) -> None:
        """``submit`` cancelled what ran then; cancel what has started since (from an
        op queued before this one), and give back what was queued."""
        self._stop_now()
        if self.slot.turn is not None:
            self.work.return_queued()

    def on_shutdown(self, op: Shutdown) -> None:
        self._closing = op.reason  # the loop ends, then ``_shutdown`` runs

    def on_show_context(self, op: ShowContext) -> None:
        self._emit(context_report(self.deps, self.memory_files, self.context_notes))

    def on_message(self, op: UserMessage | SendNow | FollowUp) -> None:
        self.work.on_message(op)

    def on_compact(self, op: Compact) -> None:
        self.work.on_compact(op)

    def on_clear_conversation(self, op: ClearConversation) -> None:
        self.work.on_clear_conversation(op)

    def on_run_shell(self, op: RunShell) -> None:
        self.work.on_run_shell(op)

    def on_rewind(self, op: Rewind) -> None:
        self.work.on_rewind(op)

    def on_command(self, op: CommandRun) -> None:
        self.work.on_command(op)

    def on_set_model(self, op: SetModel) -> None:
        self.controls.on_set_model(op)

    def on_set_thinking(self, op: SetThinking) -> None:
        self.controls.on_set_thinking(op)

    def on_rename_session(self, op: RenameSession) -> None:
        self.controls.on_rename_session(op)

    def on_list_models(self, op: ListModels) -> None:
        self.controls.on_list_models(op)

    def on_set_permission_mode(self, op: SetPermissionMode) -> None:
        self.controls.on_set_permission_mode(op)

    def on_edit_queued(self, op: EditQueued) -> None:
        self.controls.on_edit_queued(op)

    def on_remove_queued(self, op: RemoveQueued) -> None:
        self.controls.on_remove_queued(op)

    def on_decide(self, op: Decide) -> None:
        self.controls.on_decide(op)

    def on_cancel_tool(self, op: CancelTool) -> None:
        self.controls.on_cancel_tool(op)

    def on_stop_background(self, op: StopBackground) -> None:
        self.controls.on_stop_background(op)

    def on_list_rewind_points(self, op: ListRewindPoints) -> None:
        self.controls.on_list_rewind_points(op)

    def on_plan_rewind(self, op: PlanRewind) -> None:
        self.controls.on_plan_rewind(op)

    async def _shutdown(self, reason: SessionEndReason) -> None:
        self.root.cancel(CancelReason.SHUTDOWN)
        self.idle.disarm()
        self.work.return_queued()
        await self.slot.settle()  # what runs ends at once: the root is cancelled
        await self.rewinder.settle()
        self.deps.stopping.hurry()  # calls an ended turn left stopping: no more grace
        await self.deps.stopping.settled()
        for work in self.background:
            try:
                await work.shutdown()
            except Exception as exc:
                self._emit(Notice(level=NoticeLevel.ERROR, text=f"shutdown: {exc!r}"))
        await self.ending.run(self.deps, self._record, reason)
        try:
            await self.deps.provider.aclose()
        except Exception:
            pass
        self.deps.journal.close()
        self._emit(SessionClosed())
