"""Cancel scopes: tree semantics, threads, idempotence, awaiting and linking."""

import asyncio
import threading
import time

import pytest

from agent_tui.cancel import Cancelled, CancelReason, CancelScope


def test_cancelling_parent_cancels_children_with_its_reason():
    root = CancelScope()
    turn = root.child("turn")
    tool = turn.child("tool")
    root.cancel(CancelReason.SHUTDOWN)
    assert turn.cancelled and tool.cancelled
    assert tool.reason is CancelReason.SHUTDOWN


def test_cancelling_child_leaves_parent_and_siblings_alone():
    turn = CancelScope()
    a, b = turn.child("a"), turn.child("b")
    a.cancel(CancelReason.TIMEOUT)
    assert a.cancelled
    assert not turn.cancelled and not b.cancelled


def test_child_of_cancelled_scope_is_born_cancelled():
    turn = CancelScope()
    turn.cancel(CancelReason.USER_INTERRUPT)
    kid = turn.child("late")
    assert kid.reason is CancelReason.USER_INTERRUPT


def test_cancel_twice_is_harmless_and_first_reason_wins():
    scope = CancelScope()
    calls = []
    scope.on_cancel(calls.append)
    assert scope.cancel(CancelReason.TIMEOUT) is True
    assert scope.cancel(CancelReason.USER_INTERRUPT) is False
    assert scope.reason is CancelReason.TIMEOUT
    assert calls == [CancelReason.TIMEOUT]


def test_callback_registered_after_cancel_runs_at_once():
    scope = CancelScope()
    scope.cancel()
    seen = []
    scope.on_cancel(seen.append)
    assert seen == [CancelReason.USER_INTERRUPT]


def test_removed_callback_is_not_called():
    scope = CancelScope()
    seen = []
    handle = scope.on_cancel(seen.append)
    handle.remove()
    scope.cancel()
    assert seen == []


def test_detached_child_no_longer_follows_parent():
    turn = CancelScope()
    kid = turn.child("done")
    kid.detach()
    turn.cancel()
    assert not kid.cancelled


def test_raise_if_cancelled_carries_reason():
    scope = CancelScope()
    scope.raise_if_cancelled()
    scope.cancel(CancelReason.DENIED)
    with pytest.raises(Cancelled) as info:
        scope.raise_if_cancelled()
    assert info.value.reason is CancelReason.DENIED


def test_concurrent_cancels_from_many_threads_fire_callbacks_once():
    scope = CancelScope()
    kids = [scope.child(str(i)) for i in range(50)]
    fired = []
    lock = threading.Lock()
    for kid in kids:
        kid.on_cancel(lambda r, lock=lock: (lock.acquire(), fired.append(r), lock.release()))
    barrier = threading.Barrier(8)

    def hammer():
        barrier.wait()
        scope.cancel()

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(fired) == 50


@pytest.mark.asyncio
async def test_wait_returns_when_cancelled_from_another_thread():
    scope = CancelScope()
    threading.Timer(0.05, scope.cancel, args=(CancelReason.USER_INTERRUPT,)).start()
    reason = await asyncio.wait_for(scope.wait(), timeout=5)
    assert reason is CancelReason.USER_INTERRUPT


@pytest.mark.asyncio
async def test_linked_interrupts_a_stalled_await():
    scope = CancelScope()
    finally_ran = asyncio.Event()

    async def stalled_read():
        try:
            await asyncio.sleep(3600)
        finally:
            finally_ran.set()

    threading.Timer(0.05, scope.cancel).start()
    with pytest.raises(Cancelled):
        async with scope.linked():
            await stalled_read()  # an hour, unless the cancel ends it
    assert finally_ran.is_set()


@pytest.mark.asyncio
async def test_linked_block_that_finishes_is_not_disturbed_by_a_late_cancel():
    scope = CancelScope()
    async with scope.linked():
        await asyncio.sleep(0)
    scope.cancel()
    await asyncio.sleep(0.01)  # a late cancel must not leak into unrelated awaits
    assert scope.cancelled


@pytest.mark.asyncio
async def test_linked_refuses_to_start_when_already_cancelled():
    scope = CancelScope()
    scope.cancel(CancelReason.TIMEOUT)
    with pytest.raises(Cancelled):
        async with scope.linked():
            raise AssertionError("the block must not run")


@pytest.mark.asyncio
async def test_outer_task_cancellation_is_not_mistaken_for_scope_cancel():
    scope = CancelScope()

    async def body():
        async with scope.linked():
            await asyncio.sleep(3600)

    task = asyncio.create_task(body())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not scope.cancelled


@pytest.mark.asyncio
async def test_deadline_cancels_with_timeout_reason():
    scope = CancelScope()
    scope.cancel_after(0.02)
    assert await asyncio.wait_for(scope.wait(), timeout=5) is CancelReason.TIMEOUT


def test_deadline_without_a_loop_uses_a_timer_thread():
    scope = CancelScope()
    scope.cancel_after(0.02)
    deadline = time.monotonic() + 5
    while not scope.cancelled and time.monotonic() < deadline:
        time.sleep(0.005)
    assert scope.reason is CancelReason.TIMEOUT
