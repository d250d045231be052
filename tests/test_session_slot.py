"""The session's one slot (``core/session/slot.py``): while a piece of work runs (a
turn, a compaction, a rewind, ``/clear``, a ``!`` command, a command's lines), a second
one does not start beside it. It joins the turn, waits whole for the slot and starts
after it, or is refused with a reason, the same way for every kind (a real session,
the fake API over HTTP, real shell commands)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_tui.cancel import Cancelled, CancelScope
from agent_tui.core.commands.command_run import CommandRun, ShellStep
from agent_tui.core.services.tasks import SessionTask, TaskContext
from agent_tui.core.session.slot import WorkKind
from agent_tui.protocol import (
    ClearConversation,
    Compact,
    Interrupt,
    RenameSession,
    RestoreWhat,
    Rewind,
    RunShell,
    UserMessage,
)
from agent_tui.tools.bash import BashTool
from tests.fake_api import FakeAnthropicServer, Reply
from tests.harness import Running, SlowTool, handled, idle_session, provider_for, start_session

pytestmark = pytest.mark.asyncio

HOLDING = [k for k in WorkKind if k is not WorkKind.TURN]


class Held(SessionTask):
    """Work of one kind in a session's slot, running until released or cancelled."""

    kind = WorkKind.COMPACTION  # each instance says its own

    def __init__(self, run: Running, kind: WorkKind) -> None:
        self.kind = kind
        self.scope = run.session.root.child(f"test {kind}")
        self.release = asyncio.Event()
        self.stopped = asyncio.Event()  # set when Esc cancelled it
        run.session.slot.start(self, self.scope)

    async def run(self, ctx: TaskContext, scope: CancelScope) -> None:
        async with scope.linked():
            await self.release.wait()

    async def aborted(self, ctx: TaskContext, scope: CancelScope) -> None:
        self.stopped.set()


def refusals(run: Running) -> list[str]:
    return [n.text for n in run.rec.of("notice") if n.level == "warning"]


@pytest.mark.parametrize("kind", HOLDING)
async def test_while_work_holds_the_slot_new_work_waits_for_it_and_a_rewind_is_refused(
    fake_api, tmp_path: Path, kind: WorkKind
) -> None:
    run = await idle_session(fake_api, tmp_path)
    session = run.session
    held = Held(run, kind)
    assert session.busy is (kind is WorkKind.COMMAND_LINES)  # only a command's lines lead a turn
    with pytest.raises(RuntimeError):  # one piece of work at a time, however it is asked
        Held(run, WorkKind.COMPACTION)

    run.submit(UserMessage(text="sent meanwhile"))
    run.submit(Rewind(checkpoint_id="t1", restore=RestoreWhat.CONVERSATION))
    await handled(run, "after the ops")
    assert run.rec.of("turn_started") == [] and fake_api.requests == []
    (refused,) = refusals(run)
    assert "is running" in refused or "already running" in refused
    assert session.slot.kind is kind

    held.release.set()
    await run.idle()
    assert [e.text for e in run.rec.of("turn_started")] == ["sent meanwhile"]
    assert session.slot.running is None and not held.stopped.is_set()
    await run.close()


@pytest.mark.parametrize("kind", [k for k in HOLDING if k is not WorkKind.REWIND])
async def test_esc_cancels_the_work_in_the_slot_and_what_waited_still_runs(
    fake_api, tmp_path: Path, kind: WorkKind
) -> None:
    run = await idle_session(fake_api, tmp_path)
    held = Held(run, kind)
    run.submit(UserMessage(text="sent meanwhile"))
    run.submit(Interrupt())
    await asyncio.wait_for(held.stopped.wait(), 10)
    await run.idle()
    assert [e.text for e in run.rec.of("turn_started")] == ["sent meanwhile"]
    await run.close()


async def test_while_a_turn_runs_messages_join_it_and_clear_rewind_and_commands_are_refused(
    fake_api, tmp_path: Path
) -> None:
    slow = SlowTool()
    fake_api.enqueue(Reply.tool_use("slow", {"note": "x"}), Reply.text("done"))
    run = start_session(provider_for(fake_api), [slow], tmp_path)
    run.submit(UserMessage(text="start"))
    await asyncio.wait_for(slow.started.wait(), 10)
    assert run.session.slot.kind is WorkKind.TURN and run.session.busy
    run.submit(ClearConversation())
    run.submit(RunShell(command="echo no"))
    run.submit(Rewind(checkpoint_id="t1", restore=RestoreWhat.CONVERSATION))
    run.submit(UserMessage(text="a steer"))
    run.submit(Compact(instructions="keep names"))
    await handled(run, "after the ops")
    assert refusals(run) == [
        "a turn is running: stop it (Esc) before /clear",
        "a turn is running: ! commands run when the agent is idle (stop it with Esc first)",
        "a turn is running: stop it (Esc) before rewinding",
    ]
    assert [(e.state, e.text) for e in run.rec.of("steer_state")] == [("queued", "a steer")]
    assert any("compaction will run when this turn ends" in n.text for n in run.rec.of("notice"))
    assert run.session.slot.after_turn.compact == "keep names"
    assert [e.text for e in run.rec.of("turn_started")] == ["start"]
    await run.close()


def _gate(tmp_path: Path) -> tuple[str, Path, Path]:
    """A shell line that runs until the test creates a file, and the file it makes
    when it starts."""
    gate, started = tmp_path / "gate", tmp_path / "started"
    line = f"touch {started}; while [ ! -e {gate} ]; do sleep 0.05; done; echo through"
    return line, gate, started


@pytest.mark.parametrize("kind", [WorkKind.USER_COMMAND, WorkKind.COMMAND_LINES])
async def test_a_real_command_in_the_slot_holds_a_message_until_it_ends(
    fake_api, tmp_path: Path, kind: WorkKind
) -> None:
    fake_api.enqueue(Reply.text("the command's turn"), Reply.text("after it"))
    run = start_session(provider_for(fake_api), [BashTool(grace=0.5)], tmp_path)
    line, gate, started_file = _gate(tmp_path)
    if kind is WorkKind.USER_COMMAND:
        run.submit(RunShell(command=line))
    else:
        run.session.run_command(CommandRun(
            name="gated", steps=[ShellStep(command=line, where="gated.md:1")],
            compose=lambda outputs: f"the lines said: {outputs[0].split()[-1]}",
        ))
    await run.rec.wait_for(started_file.exists)
    assert run.session.slot.kind is kind
    run.submit(UserMessage(text="sent meanwhile"))
    run.submit(RunShell(command="echo second"))
    await handled(run, "after the ops")
    assert run.rec.of("turn_started") == [] and fake_api.requests == []
    gate.touch()
    await run.idle()
    started = [e.text for e in run.rec.of("turn_started")]
    if kind is WorkKind.USER_COMMAND:
        # The message waited, then the second command: it arrived while the turn ran.
        assert started == ["sent meanwhile"]
        assert "a turn is running: ! commands" in refusals(run)[-1]
    else:  # the command's own turn first; the message joined it as a steer, then ran
        assert started == ["the lines said: through", "sent meanwhile"]
    assert run.session.slot.running is None
    await run.close()
