"""Hosting the core: its session runs on a thread worker with its own asyncio loop.

``make_session(emit)`` builds the core's Session with the inbox's emit callback, on
the core's thread: building it may import the model SDK and MCP (about a second), and
the first frame must not wait for that. The session runs there
(``asyncio.run(session.run())``) and its Events reach the UI through
:mod:`agent_tui.ui.link.bridge`. UI and core share no mutable state: the UI only calls
``session.submit(op)`` and ``session.interrupt_now()``, both thread-safe. Ops sent
before the session exists are kept and handed over once it does.

One host serves one session; another session (``/resume``) gets a host of its own
once this one has stopped.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_tui.protocol.states import PermissionMode
from agent_tui.ui.link.bridge import EventInbox

if TYPE_CHECKING:
    from agent_tui.protocol import Event, Op


class SessionLike(Protocol):
    """What the UI needs of the core's Session."""

    @property
    def workspace(self) -> Path: ...
    @property
    def session_id(self) -> str: ...
    @property
    def policy(self) -> Any:  # lists its rules when it is agent_tui.permissions.Permissions
        ...
    badges: list[str]  # shown in the status line ("sandbox")
    background: list[Any]  # background work, the MCP manager among it

    def submit(self, op: Op) -> None: ...
    def interrupt_now(self) -> None: ...
    def past_records(self) -> list[Any]: ...
    async def run(self) -> None: ...


MakeSession = Callable[[Callable[["Event"], None]], SessionLike]


class SavedSession(Protocol):
    """A saved session as the session store lists it."""

    id: str
    updated: float
    workspace: str
    first_message: str
    last_status: str
    name: str  # "" unless /rename named it


class SessionDirectory(Protocol):
    """Where ``/resume`` finds saved sessions and how it opens one (the wiring's)."""

    def saved_sessions(self) -> list[SavedSession]: ...
    def session_maker(self, session_id: str) -> MakeSession: ...


class CoreState(StrEnum):
    """Where the hosted core is in its life."""

    NOT_STARTED = "not_started"  # before the first frame
    STARTING = "starting"  # the session is being built on the core's thread
    RUNNING = "running"
    START_FAILED = "start_failed"  # the session could not be built
    STOPPING = "stopping"  # asked to shut down; waiting for what runs to end
    CLOSED = "closed"  # the session said it closed
    CRASHED = "crashed"  # the core's thread ended without being asked to


class CoreHost:
    """One session on the core's thread. ``on_past(records)`` runs on the core's
    thread with what a resumed session's journal held; ``on_start_error(text)`` there
    too when the session cannot be built."""

    def __init__(self, make_session: MakeSession, nudge: Callable[[], object]) -> None:
        self._make_session = make_session
        self.inbox = EventInbox(nudge)
        self.session: SessionLike | None = None
        self.state = CoreState.NOT_STARTED
        self.error: str | None = None  # why the core failed, once it did
        self._done = threading.Event()  # the core's thread has ended
        self._lock = threading.Lock()  # guards session, state and the ops kept
        self._pending: list[Op] = []

    # -- the core's thread ---------------------------------------------------------

    def run(self, on_past: Callable[[list[Any]], None], on_start_error: Callable[[str], None],
            on_started: Callable[[list[str], PermissionMode], None] | None = None) -> None:
        """The body of the core's thread worker: build the session, then run it."""
        try:
            with self._lock:
                if self.state is CoreState.NOT_STARTED:  # (quit early: STOPPING stays)
                    self.state = CoreState.STARTING
            try:
                session = self._make_session(self.inbox.emit)
            except Exception as exc:  # e.g. a session to resume that cannot be read
                self.error = str(exc) or repr(exc)
                with self._lock:
                    self.state = CoreState.START_FAILED
                    self._pending.clear()
                on_start_error(self.error)
                return
            records = session.past_records()
            if records:
                on_past(records)
            with self._lock:
                self.session = session
                if self.state is CoreState.STARTING:
                    self.state = CoreState.RUNNING
                pending, self._pending = self._pending, []
            if on_started is not None:  # the session is there for the UI to reach
                mode = getattr(session, "permission_mode", None)
                on_started(list(session.badges), mode if isinstance(mode, PermissionMode)
                           else PermissionMode.ASK)
            for op in pending:  # typed (or quit) before the session existed
                session.submit(op)
            asyncio.run(session.run())
        finally:
            self._done.set()

    # -- the UI's side ---------------------------------------------------------------

    def send(self, op: Op) -> None:
        """To the session, or kept until it exists."""
        with self._lock:
            session = self.session
            if session is None:
                if self.state is not CoreState.START_FAILED:
                    self._pending.append(op)
                return
        session.submit(op)

    def submit(self, op: Op) -> None:
        """An op from the user: dropped once the core is stopping."""
        if self.accepts_ops:
            self.send(op)

    def interrupt_now(self) -> None:
        session = self.session
        if session is not None:
            session.interrupt_now()

    @property
    def accepts_ops(self) -> bool:
        return self.state in (CoreState.NOT_STARTED, CoreState.STARTING, CoreState.RUNNING)

    @property
    def done(self) -> bool:
        """The core's thread has ended."""
        return self._done.is_set()

    def closed(self) -> None:
        """The session said ``session_closed``."""
        with self._lock:
            self.state = CoreState.CLOSED

    def ended(self, error: str | None) -> CoreState:
        """The core's thread ended (``error``: it raised); the state that follows."""
        with self._lock:
            if error is not None:
                self.error = error
                self.state = CoreState.CRASHED
            elif self.state in (CoreState.STARTING, CoreState.RUNNING):
                self.state = CoreState.CRASHED
            return self.state

    def stop(self) -> bool:
        """Ask the session to shut down (once); False if it was asked before."""
        from agent_tui.protocol import SessionEndReason, Shutdown

        with self._lock:
            if self.state in (CoreState.STOPPING, CoreState.CLOSED):
                return False
            failed = self.state in (CoreState.START_FAILED, CoreState.CRASHED)
            if not failed:
                self.state = CoreState.STOPPING
        if not failed:
            self.send(Shutdown(reason=SessionEndReason.PROMPT_INPUT_EXIT))  # the user quit
        return True

    async def wait_stopped(self, timeout: float, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> bool:
        """Wait (at most ``timeout`` seconds) for the core's thread to end."""
        deadline = time.monotonic() + timeout
        while not self._done.is_set() and time.monotonic() < deadline:
            await sleep(0.02)
        return self._done.is_set()
