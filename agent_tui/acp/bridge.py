"""One ACP session: a core :class:`Session`, its run task, and the pump that turns its
Events into ``session/update`` notifications in order.

The core emits Events synchronously on the loop; the bridge queues them and one pump
task sends them, so the client sees them in the order they happened. A prompt's
response is sent only after the pump has sent every update of its turn (the pump
resolves the prompt when it reaches the turn's ``turn_ended``).

Permission (:mod:`.asking`): a ``permission_requested`` event becomes a
``session/request_permission`` request sent by a task of its own; a cancelled turn
withdraws it, and a late answer is never an allow.

Warnings and errors become agent text, marked as ours; those told while no prompt
runs (an MCP server that failed as the session started) are sent at the start of the
next prompt.

Slash commands (:mod:`.commands`): the list is sent through the pump after
``session/new`` / ``session/load`` answered; a command's prompt is answered once the
session is idle again and the pump has sent what it said (a refused ``!`` line ends
it with no turn at all).

Cancel: ``session/cancel`` interrupts the turn at once (``interrupt_now``). The prompt
then waits, as always, for the turn to end: by then every tool call has reached a
final state and its last update has been sent. A cancel with no prompt running does
nothing.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, assert_never

from acp import RequestError
from acp.helpers import update_agent_thought_text
from acp.schema import PromptResponse

from agent_tui.acp.asking import Asker, AsksPermission
from agent_tui.acp.commands import Say, event_text, start_command
from agent_tui.acp.usage import UsageTracker
from agent_tui.acp.models import ModelChoice
from agent_tui.acp.modes import mode_update
from agent_tui.acp.updates import UpdateMapper, plan_update
from agent_tui.core.session.session import Session
from agent_tui.protocol import (
    BackgroundJobChanged,
    Compaction,
    ContextReport,
    ConversationCleared,
    Event,
    HookStateChanged,
    ModelChanged,
    PermissionMode,
    PermissionModeChanged,
    Models,
    Notice,
    NoticeLevel,
    PermissionRequested,
    RetryScheduled,
    Rewound,
    RewindPlanned,
    RewindPoints,
    SessionClosed,
    SetPermissionMode,
    Shutdown,
    SteerState,
    TextDelta,
    ThinkingDelta,
    ToolOutput,
    ToolState,
    ToolStateChanged,
    TurnEnded,
    TurnStarted,
    TurnStateChanged,
    TurnStatus,
    ResponseStarted,
    Usage,
    UserMessage,
)
from agent_tui.protocol.tool_names import writes_plan

log = logging.getLogger("agent_tui.acp")

SHUTDOWN_BUDGET = 8.0  # seconds a session may take to stop its turn and tools


class ClientConnection(AsksPermission, Protocol):
    """What the bridge needs from the SDK's agent-side connection."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None: ...


class PromptBusy(RequestError):
    def __init__(self) -> None:
        super().__init__(
            -32600,
            "A prompt is already running in this session: wait for its response or send "
            "session/cancel first",
        )


@dataclass
class _ActivePrompt:
    done: asyncio.Future[TurnEnded]
    cancel_requested: bool = False
    command: bool = False  # a slash command's: its answers are told as text


@dataclass
class _Flush:
    """In the pump's queue: resolved once everything before it was sent."""
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future())


@dataclass
class _Send:
    """In the pump's queue: an update of ours (the command list), in order."""
    update: Any


class SessionBridge:
    def __init__(self, session_id: str, conn: ClientConnection) -> None:
        self.id = session_id
        self.conn = conn
        self.session: Session | None = None
        self.mapper = UpdateMapper(Path.cwd())
        self._events: deque[Event | _Flush | _Send] = deque()
        self._arrived = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._prompt: _ActivePrompt | None = None
        self.asker = Asker(session_id, conn, cancelled=self._cancel_requested,
                           cancel=self.cancel, tell=self._push)
        self._run_task: asyncio.Task[None] | None = None
        self._pump_task: asyncio.Task[None] | None = None
        self._held: list[str] = []  # warnings told while no prompt ran (e.g. a server failed)
        self.models: ModelChoice | None = None  # the model option, once attached
        self.usage = UsageTracker()  # the context filled and the cost, after each request

    # -- wiring ------------------------------------------------------------------------

    @property
    def mode(self) -> PermissionMode:
        """The permission mode the session decides calls by now."""
        return self.session.permission_mode if self.session is not None else PermissionMode.ASK

    def set_mode(self, mode: PermissionMode) -> None:
        """``session/set_mode``: answered by a ``current_mode_update`` once it is so."""
        if self.session is not None:
            self.session.submit(SetPermissionMode(mode=mode))

    def emit(self, event: Event) -> None:
        """The core's emit callable: on this loop, or safely from any other thread."""
        if self._thread is not None and threading.get_ident() != self._thread:
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._push, event)
        else:
            self._push(event)

    def announce(self, update: Any) -> None:
        """Send ``update`` through the pump: after the response being written now."""
        self._push(_Send(update))

    def _push(self, event: Event | _Flush | _Send) -> None:
        self._events.append(event)
        self._arrived.set()

    def attach(self, session: Session) -> None:
        self.session = session
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self.mapper = UpdateMapper(session.workspace, session.tools)
        self.models = ModelChoice(session.submit, session.deps.config.model)
        self._run_task = asyncio.get_running_loop().create_task(
            session.run(), name=f"acp-session-{self.id}"
        )

    async def replay(self) -> None:
        """Send the saved conversation (session/load), before any live update."""
        assert self.session is not None
        for update in self.mapper.replay(self.session.records()):
            await self._send(update)

    def start_pump(self) -> None:
        self._pump_task = asyncio.get_running_loop().create_task(
            self._pump(), name=f"acp-pump-{self.id}"
        )

    @property
    def busy(self) -> bool:
        return self._prompt is not None or (self.session is not None and self.session.busy)

    # -- prompt and cancel ----------------------------------------------------------

    async def prompt(self, message: UserMessage, refused: list[str]) -> PromptResponse:
        """One turn for ``message``; ``refused`` names image files its text named that
        were not attached (told first, as the TUI does)."""
        session = self.session
        assert session is not None

        async def start() -> None:
            session.submit(message)

        return await self._run(start, refused)

    async def command(self, name: str, args: str,
                      run: Callable[[Say], Awaitable[None]] | None = None) -> PromptResponse:
        """A slash command (:mod:`.commands`), or a prompt ``run`` makes ready (:mod:`.mcp_offers`)."""
        session, models = self.session, self.models
        assert session is not None and models is not None

        def say(level: NoticeLevel, text: str) -> None:
            self._push(Notice(level=level, text=text))

        start = (lambda: run(say)) if run is not None else (lambda: start_command(session, models, name, args, say))
        return await self._run(start, [], command=True)

    async def _run(self, start: Callable[[], Awaitable[None]], refused: list[str], *,
                   command: bool = False) -> PromptResponse:
        session = self.session
        assert session is not None
        if self.busy:
            raise PromptBusy()
        active = _ActivePrompt(done=asyncio.get_running_loop().create_future(), command=command)
        self._prompt = active
        try:
            held, self._held = self._held, []
            held += [f"\n\n> agent-tui warning: image not attached: {r}\n\n" for r in refused]
            for notice in held:  # what went wrong meanwhile, before this turn's updates
                await self._send(self.mapper.text(notice))
            try:
                await start()
                ended = await (self._settled(active) if command else self._turn_end(active))
            except asyncio.CancelledError:
                # The connection is closing under us: stop the turn, do not leave it running.
                session.interrupt_now()
                raise
        finally:
            self._prompt = None
        if ended is None:  # a command that started no turn
            stop = "cancelled" if active.cancel_requested else "end_turn"
            return PromptResponse(stop_reason=stop)
        if ended.status is TurnStatus.CANCELLED:
            return PromptResponse(stop_reason="cancelled")
        if ended.status is TurnStatus.FAILED:
            raise RequestError(-32603, f"The turn failed: {ended.detail or 'see the agent log'}",
                               {"agent_tui": {"status": "failed", "detail": ended.detail}})
        return PromptResponse(stop_reason="end_turn")

    async def _settled(self, active: _ActivePrompt) -> TurnEnded | None:
        """A command's end: the session idle again and the pump caught up; its turn's
        end if it had one."""
        assert self.session is not None and self._run_task is not None
        idle = asyncio.ensure_future(self.session.wait_idle())
        try:
            waits: set[asyncio.Future[Any]] = {active.done, self._run_task, idle}
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            idle.cancel()
        if not active.done.done():
            if self._run_task.done():
                return await self._turn_end(active)  # says the session stopped
            flush = _Flush()
            self._push(flush)
            await flush.done
        return active.done.result() if active.done.done() else None

    async def _turn_end(self, active: _ActivePrompt) -> TurnEnded:
        """The turn's end, once its last update is sent; an error if the session died."""
        assert self._run_task is not None
        waiters: set[asyncio.Future[Any]] = {active.done, self._run_task}
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if active.done.done():
            return active.done.result()
        exc = None if self._run_task.cancelled() else self._run_task.exception()
        detail = repr(exc) if exc is not None else "it was shut down"
        log.error("session %s: the core stopped while a prompt ran: %s", self.id, detail)
        raise RequestError(-32603, f"The session stopped unexpectedly: {detail}")

    def cancel(self) -> None:
        """session/cancel: stop the running turn; harmless when nothing runs."""
        active = self._prompt
        if active is None or self.session is None:
            return
        active.cancel_requested = True
        # Cancel the scope first: an allow racing this cancel then finds the turn
        # cancelled and the call never starts.
        self.session.interrupt_now()
        self.asker.drop_all()

    def _cancel_requested(self) -> bool:
        return self._prompt is not None and self._prompt.cancel_requested

    # -- the pump ------------------------------------------------------------------------

    async def _pump(self) -> None:
        while True:
            if not self._events:
                self._arrived.clear()
                await self._arrived.wait()
                continue
            event = self._events.popleft()
            if isinstance(event, _Flush):
                event.done.set_result(None)
                continue
            try:
                if isinstance(event, _Send):
                    await self._send(event.update)
                    continue
                await self._forward(event)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("session %s: could not forward %s", self.id, type(event).__name__)

    async def _forward(self, event: Event) -> None:
        """One case per Event type (``assert_never``: a new type must be placed here)."""
        match event:
            case TextDelta():
                if event.parent_tool_use_id is not None:
                    # A sub-agent's words belong to its task call, not to the conversation.
                    update = self.mapper.tool_output(
                        ToolOutput(turn_id=event.turn_id, tool_use_id=event.parent_tool_use_id,
                                   text=event.text)
                    )
                    if update is not None:
                        await self._send(update)
                    return
                await self._send(self.mapper.text(event.text + self._more_text()))
            case ThinkingDelta():
                if event.parent_tool_use_id is None:  # a sub-agent's thinking stays its own
                    await self._send(update_agent_thought_text(event.text))
            case ToolStateChanged():
                await self._send(self.mapper.tool_state(event))
                if writes_plan(event.name) and event.state is ToolState.SUCCEEDED \
                        and event.parent_tool_use_id is None:
                    await self._send_plan()
                if event.state is not ToolState.AWAITING_APPROVAL:
                    self.asker.drop(event.tool_use_id)
            case ToolOutput():
                update = self.mapper.tool_output(event)
                if update is not None:
                    await self._send(update)
            case PermissionRequested():
                if self.session is not None:
                    self.asker.ask(self.session, self.mapper, event)
            case Notice():
                if event.level is NoticeLevel.ERROR and self.models is not None:
                    self.models.on_error(event)
                await self._notice(event)
            case Models():
                if self.models is not None:
                    self.models.on_models(event)
            case ModelChanged():
                if self.models is not None:
                    await self._send(self.models.on_model_changed(event))
            case RetryScheduled():
                log.warning("session %s: model call failed (%s); retry %d in %.1f s",
                            self.id, event.reason, event.attempt, event.delay)
            case TurnStateChanged():
                log.info("session %s: turn %s %s %s", self.id, event.turn_id, event.state,
                         event.detail)
            case TurnEnded():
                if event.status is TurnStatus.CANCELLED:
                    await self._send_plan()  # its in-progress item is interrupted now
                active = self._prompt
                if active is not None and not active.done.done():
                    active.done.set_result(event)
            case PermissionModeChanged():
                await self._send(mode_update(event.mode))
            case Compaction() | ConversationCleared() | ContextReport():
                if self._prompt is not None and self._prompt.command and event_text(event):
                    await self._send(self.mapper.text(event_text(event)))
            case Usage():
                await self._send(self.usage.update(event))
            case (TurnStarted() | SteerState() | HookStateChanged() | RewindPoints()
                  | RewindPlanned() | Rewound() | BackgroundJobChanged() | SessionClosed()
                  | ResponseStarted()):
                pass  # ACP has no update for these: the prompt and its response frame the turn
            case _:
                assert_never(event)

    async def _send_plan(self) -> None:
        update = plan_update(self.session.records()) if self.session is not None else None
        if update is not None:
            await self._send(update)

    def _more_text(self) -> str:
        """Coalesce text deltas already waiting in the queue into one chunk."""
        parts: list[str] = []
        while self._events:
            nxt = self._events[0]
            if not isinstance(nxt, TextDelta) or nxt.parent_tool_use_id is not None:
                break
            parts.append(nxt.text)
            self._events.popleft()
        return "".join(parts)

    async def _notice(self, event: Notice) -> None:
        log.log(
            {NoticeLevel.INFO: logging.INFO, NoticeLevel.WARNING: logging.WARNING}.get(
                event.level, logging.ERROR
            ),
            "session %s: %s", self.id, event.text,
        )
        if event.level is NoticeLevel.INFO:
            if self._prompt is not None and self._prompt.command:
                # A command's answer (ours end with a newline), or what the core said.
                said = event.text if event.text.endswith("\n") else \
                    f"\n\n> agent-tui: {event.text}\n\n"
                await self._send(self.mapper.text(said))
            return
        # Warnings and errors matter to the user (e.g. processes that could not be
        # ended, an MCP server that failed): show them in the conversation, clearly
        # marked as ours; told while no prompt runs, at the start of the next one.
        text = f"\n\n> agent-tui {event.level}: {event.text}\n\n"
        if self._prompt is not None:
            await self._send(self.mapper.text(text))
        else:
            self._held.append(text)

    async def _send(self, update: Any) -> None:
        try:
            await self.conn.session_update(session_id=self.id, update=update)
        except ConnectionError:
            log.info("session %s: client gone; update dropped", self.id)

    # -- shutdown --------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop the session: interrupt what runs, end its tools, flush updates."""
        session = self.session
        self.asker.drop_all()
        if session is not None and self._run_task is not None:
            session.submit(Shutdown())
            try:
                await asyncio.wait_for(asyncio.shield(self._run_task), SHUTDOWN_BUDGET)
            except (asyncio.TimeoutError, Exception) as exc:
                log.warning("session %s: did not stop cleanly: %r", self.id, exc)
        if self._pump_task is not None:
            self._pump_task.cancel()
