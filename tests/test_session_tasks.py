"""A kind of work is one task type (``core/services/tasks.py``): a task defined here, in
the test, runs through a real session's slot as the built-in ones do. It starts under the
scope made where it starts, Esc cancels it through that scope (its ``aborted`` says what
it must), the slot is free after, and what arrives meanwhile waits for it or is refused
as the slot decides (a real session, the fake API over HTTP, a real child process)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import ClassVar

import pytest

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.core.journal.records import NoticeRecord
from agent_tui.core.modes.bash_mode import UserCommandTask
from agent_tui.core.services.tasks import SessionTask, TaskContext, WorkKind
from agent_tui.protocol import Interrupt, Notice, NoticeLevel, RestoreWhat, Rewind, UserMessage
from tests.harness import Running
from tests.harness import handled, idle_session

pytestmark = pytest.mark.asyncio


class Sleeper(SessionTask):
    """A kind of work the core does not have: a child process that runs until it ends
    or the task's scope is cancelled, and a journal record of how it ended."""

    kind: ClassVar[WorkKind] = WorkKind.USER_COMMAND  # it holds the slot as a ! command does
    records = (NoticeRecord,)

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.started = asyncio.Event()
        self.aborted_by: CancelReason | None = None

    async def run(self, ctx: TaskContext, scope: CancelScope) -> None:
        self.process = await asyncio.create_subprocess_exec("sleep", "60")
        self.started.set()
        async with scope.linked():
            await self.process.wait()
        ctx.record(NoticeRecord(level=NoticeLevel.INFO, text="the sleeper ended by itself"))

    async def aborted(self, ctx: TaskContext, scope: CancelScope) -> None:
        assert self.process is not None
        self.process.kill()
        await self.process.wait()
        self.aborted_by = scope.reason
        ctx.record(NoticeRecord(level=NoticeLevel.INFO, text="the sleeper was stopped"))
        ctx.emit(Notice(level=NoticeLevel.INFO, text="the sleeper was stopped"))


class Broken(SessionTask):
    """A kind of work with a bug in it."""

    kind: ClassVar[WorkKind] = WorkKind.COMPACTION

    async def run(self, ctx: TaskContext, scope: CancelScope) -> None:
        raise ValueError("a bug")


def notices(run: Running, level: str) -> list[str]:
    return [n.text for n in run.rec.of("notice") if n.level == level]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_task_kind_added_in_a_test_runs_in_the_slot_and_esc_cancels_it_through_its_scope(
    fake_api, tmp_path: Path
) -> None:
    run = await idle_session(fake_api, tmp_path)
    session = run.session
    sleeper = Sleeper()
    scope = session.root.child("sleeper")
    session.slot.start(sleeper, scope)
    await asyncio.wait_for(sleeper.started.wait(), 10)
    assert session.slot.kind is WorkKind.USER_COMMAND and not session.busy
    with pytest.raises(RuntimeError):  # one task at a time, however it is asked
        session.slot.start(UserCommandTask("echo no"), session.root.child("second"))

    run.submit(UserMessage(text="sent meanwhile"))  # waits whole for the slot
    run.submit(Rewind(checkpoint_id="t1", restore=RestoreWhat.CONVERSATION))  # refused
    await handled(run, "after the ops")
    assert run.rec.of("turn_started") == [] and fake_api.requests == []
    assert notices(run, "warning") == ["a ! command is running: rewind once it is done"]

    run.submit(Interrupt())
    await run.idle()
    assert sleeper.aborted_by is CancelReason.USER_INTERRUPT
    assert sleeper.process is not None and not alive(sleeper.process.pid)
    assert "the sleeper was stopped" in notices(run, "info")
    assert [r.text for r in run.journal.records if isinstance(r, NoticeRecord)] == [
        "the sleeper was stopped"]  # what it declares it records
    # The slot is free, its scope detached, and what waited ran after it.
    assert session.slot.running is None and scope not in session.root._children
    assert [e.text for e in run.rec.of("turn_started")] == ["sent meanwhile"]
    await run.close()


async def test_a_task_that_fails_is_said_and_frees_the_slot(fake_api, tmp_path: Path) -> None:
    run = await idle_session(fake_api, tmp_path)
    run.session.slot.start(Broken(), run.session.root.child("broken"))
    run.submit(UserMessage(text="sent after"))
    await run.idle()
    assert notices(run, "error") == ["compaction failed: ValueError('a bug')"]
    assert run.session.slot.running is None
    assert [e.text for e in run.rec.of("turn_started")] == ["sent after"]
    await run.close()
