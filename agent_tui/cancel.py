"""Cancel scopes: the ground floor every layer stands on.

A cancel scope is a node in a tree. Cancelling a scope cancels every scope derived
from it (its children), never its parent. Cancelling is thread-safe (the UI cancels
from its own thread, a signal handler from the main thread), idempotent (the first
reason wins; later calls are harmless) and observable three ways:

- polled: ``scope.cancelled`` / ``scope.raise_if_cancelled()`` at a cancel point;
- awaited: ``await scope.wait()``;
- linked: ``async with scope.linked():`` interrupts whatever the block is awaiting
  (a stalled network read, a sleep) and raises :class:`Cancelled` out of the block.

A scope may also carry a deadline (``cancel_after``), which cancels it with
``CancelReason.TIMEOUT``.

A cancelled scope can be *hurried* (``hurry()``: the user pressed Esc again while the
first Esc's cleanup ran): what is still being stopped under it stops now, without its
grace. Observed through ``on_hurry`` (and ``hurried``), on the scope and every child.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from enum import StrEnum
from typing import AsyncIterator, TypeVar

T = TypeVar("T")


class CancelReason(StrEnum):
    USER_INTERRUPT = "user_interrupt"
    DENIED = "denied"
    TIMEOUT = "timeout"
    SHUTDOWN = "shutdown"
    SEND_TO_BACKGROUND = "send_to_background"
    BUDGET = "budget"  # --max-budget-usd: the spending cap ended the turn
    # Not a scope's cancel: why calls that never started were closed out with the turn
    # (``tool_state.ended_by`` of a ``cancelled_before_start`` call).
    STREAM_FAILED = "stream_failed"  # the model's reply stream failed after they were complete
    TURN_FAILED = "turn_failed"  # the turn ended on an error before they started


class Cancelled(Exception):
    """Raised at a cancel point of a cancelled scope."""

    def __init__(self, reason: CancelReason) -> None:
        super().__init__(f"cancelled: {reason}")
        self.reason = reason


class _Callback:
    __slots__ = ("fn", "scope")

    def __init__(self, scope: CancelScope, fn: Callable[[CancelReason], None]) -> None:
        self.scope = scope
        self.fn = fn

    def remove(self) -> None:
        self.scope._remove_callback(self)


class CancelScope:
    """One node of the cancel tree."""

    def __init__(self, name: str = "root", parent: CancelScope | None = None) -> None:
        self.name = name
        self.parent = parent
        self._lock = threading.Lock()
        self._reason: CancelReason | None = None
        self._children: list[CancelScope] = []
        self._callbacks: list[_Callback] = []
        self._timer: asyncio.TimerHandle | threading.Timer | None = None
        self._hurried = False
        self._hurry_callbacks: list[Callable[[], None]] = []

    # -- tree -----------------------------------------------------------------

    def child(self, name: str) -> CancelScope:
        """Derive a scope that is cancelled with this one (but not the reverse)."""
        kid = CancelScope(name, parent=self)
        with self._lock:
            inherited = self._reason
            if inherited is None or not self._hurried:
                self._children.append(kid)
            hurried = self._hurried
        if inherited is not None:
            kid.cancel(inherited)
        if hurried:
            kid.hurry(inherited or CancelReason.USER_INTERRUPT)
        return kid

    def detach(self) -> None:
        """Leave the parent (when the work this scope guarded is over)."""
        parent = self.parent
        if parent is None:
            return
        with parent._lock:
            if self in parent._children:
                parent._children.remove(self)
        self._stop_timer()

    # -- cancelling -------------------------------------------------------------

    def cancel(self, reason: CancelReason = CancelReason.USER_INTERRUPT) -> bool:
        """Cancel this scope and its children. True if this call did it."""
        with self._lock:
            if self._reason is not None:
                return False
            self._reason = reason
            children = list(self._children)
            callbacks = list(self._callbacks)
            self._callbacks.clear()
        self._stop_timer()
        for kid in children:
            kid.cancel(reason)
        for cb in callbacks:
            cb.fn(reason)
        return True

    def hurry(self, reason: CancelReason = CancelReason.USER_INTERRUPT) -> bool:
        """Cancel the scope if it is not yet, else hurry it and its children: what is
        being stopped under it is stopped now, without its grace. True if this call
        hurried (the scope was already cancelled and not yet hurried)."""
        if self.cancel(reason):
            return False
        with self._lock:
            if self._hurried:
                return False
            self._hurried = True
            children = list(self._children)
            callbacks, self._hurry_callbacks = self._hurry_callbacks, []
        for kid in children:
            kid.hurry(reason)
        for fn in callbacks:
            fn()
        return True

    @property
    def hurried(self) -> bool:
        return self._hurried

    def on_hurry(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` once when the scope is hurried (at once if it is already);
        it runs on whichever thread hurries: keep it short and thread-safe."""
        with self._lock:
            hurried = self._hurried
            if not hurried:
                self._hurry_callbacks.append(fn)
        if hurried:
            fn()

    def cancel_after(self, seconds: float, reason: CancelReason = CancelReason.TIMEOUT) -> None:
        """Give the scope a deadline: it cancels itself after ``seconds``."""
        self._stop_timer()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            timer = threading.Timer(seconds, self.cancel, args=(reason,))
            timer.daemon = True
            timer.start()
            self._timer = timer
        else:
            self._timer = loop.call_later(seconds, self.cancel, reason)

    def _stop_timer(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    @property
    def cancelled(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> CancelReason | None:
        return self._reason

    def raise_if_cancelled(self) -> None:
        """A cancel point: raise :class:`Cancelled` if the scope is cancelled."""
        reason = self._reason
        if reason is not None:
            raise Cancelled(reason)

    # -- observing ------------------------------------------------------------

    def on_cancel(self, fn: Callable[[CancelReason], None]) -> _Callback:
        """Call ``fn(reason)`` once when cancelled (at once if already cancelled).

        ``fn`` runs on whichever thread cancels: keep it short and thread-safe.
        """
        cb = _Callback(self, fn)
        with self._lock:
            reason = self._reason
            if reason is None:
                self._callbacks.append(cb)
        if reason is not None:
            fn(reason)
        return cb

    def _remove_callback(self, cb: _Callback) -> None:
        with self._lock:
            if cb in self._callbacks:
                self._callbacks.remove(cb)

    async def wait(self) -> CancelReason:
        """Wait until the scope is cancelled; returns the reason."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[CancelReason] = loop.create_future()

        def fire(reason: CancelReason) -> None:
            def settle() -> None:
                if not fut.done():
                    fut.set_result(reason)

            _call_soon(loop, settle)

        cb = self.on_cancel(fire)
        try:
            return await fut
        finally:
            cb.remove()

    @asynccontextmanager
    async def linked(self) -> AsyncIterator[None]:
        """Interrupt the awaits inside the block when the scope is cancelled.

        The block sees the usual ``asyncio.CancelledError`` at the await it was
        blocked in (so ``finally`` clauses and async context exits run, closing
        connections), and the block as a whole raises :class:`Cancelled`.
        """
        self.raise_if_cancelled()
        loop = asyncio.get_running_loop()
        timeout = asyncio.timeout(None)
        inside = True

        def expire() -> None:
            if inside and not timeout.expired():
                timeout.reschedule(loop.time())

        cb = self.on_cancel(lambda _reason: _call_soon(loop, expire))
        try:
            async with timeout:
                yield
        except TimeoutError:
            if self._reason is not None and timeout.expired():
                raise Cancelled(self._reason) from None
            raise
        finally:
            inside = False
            cb.remove()

    async def guard(self, aw: Awaitable[T]) -> T:
        """Await ``aw`` unless the scope is cancelled first (then raise Cancelled)."""
        async with self.linked():
            return await aw


def _call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[[], None]) -> None:
    try:
        loop.call_soon_threadsafe(fn)
    except RuntimeError:
        pass  # the loop is closed: nobody is waiting any more

