"""A custom command's own turn in the core (``core/commands/command_run.py``,
``command_task.py``, ``core/session/work.py``): sent while a turn runs it waits for that
turn, then its ``!`` line runs through the session's ``bash`` tool and its prompt starts a
turn on its model; when the turn it waited for is interrupted, it does not run, and says
so."""

from __future__ import annotations

import asyncio

import pytest

from agent_tui.core.commands.command_run import CommandRun, ShellStep
from agent_tui.protocol import Interrupt, UserMessage
from agent_tui.tools.bash import BashTool
from tests.fake_api import Reply
from tests.harness import SlowTool, start_session
from tests.harness import provider_for

pytestmark = pytest.mark.asyncio


def _run(marker: str) -> CommandRun:
    return CommandRun(
        name="mark", steps=[ShellStep(command=f"touch {marker} && echo made {marker}", where="mark.md:3")],
        compose=lambda outputs: f"the step said: {outputs[0]}", model="claude-haiku-4-5",
    )


async def test_a_command_sent_while_a_turn_runs_waits_then_runs_its_line_and_turn(fake_api, tmp_path):
    slow = SlowTool()
    fake_api.enqueue(Reply.tool_use("slow", {"note": "x"}), Reply.text("first done"),
                     Reply.text("command done"))
    run = start_session(provider_for(fake_api), [slow, BashTool(grace=0.5)], tmp_path)
    run.submit(UserMessage(text="start"))
    await asyncio.wait_for(slow.started.wait(), 10)
    run.session.run_command(_run("made-it"))
    await run.rec.wait_for(lambda: any("runs when this turn ends" in n.text for n in run.rec.of("notice")))
    assert not (tmp_path / "made-it").exists()  # not while the turn runs
    slow.release.set()
    await run.idle()
    assert (tmp_path / "made-it").exists()
    assert [e.text for e in run.rec.of("turn_started")] == ["start", "the step said: made made-it\n"]
    assert fake_api.requests[-1]["model"] == "claude-haiku-4-5"
    assert fake_api.requests[0]["model"] == "claude-test"  # the session's own, before
    await run.close()


async def test_a_waiting_command_is_not_run_when_the_turn_before_it_is_interrupted(fake_api, tmp_path):
    slow = SlowTool()
    fake_api.enqueue(Reply.tool_use("slow", {"note": "x"}))
    run = start_session(provider_for(fake_api), [slow, BashTool(grace=0.5)], tmp_path)
    run.submit(UserMessage(text="start"))
    await asyncio.wait_for(slow.started.wait(), 10)
    run.session.run_command(_run("never"))
    run.submit(Interrupt())
    await run.idle()
    assert not (tmp_path / "never").exists()
    assert any("/mark not run: the turn before it did not complete" in n.text for n in run.rec.of("notice"))
    assert len(fake_api.requests) == 1
    await run.close()
