"""Background commands: outside the turn, read by bash_output, ended by kill_shell and
by shutdown, with the run unit's escalation."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.protocol import ToolState
from agent_tui.core.calls.tool import ToolContext
from agent_tui.tools.background import (
    BackgroundJobs,
    BashOutputTool,
    JobInfo,
    JobState,
    KillShellTool,
)
from agent_tui.tools.bash import BashTool, bash_argv
from agent_tui.runtime.process import Escalation, RunLimits
from tests.trees.procs import marker, named, procs_with, wait_for_procs  # noqa: F401

LIMITS = RunLimits(grace_s=0.3, drain_s=0.3, kill_confirm_s=1.0)


def make_ctx(workspace: Path, scope: CancelScope) -> ToolContext:
    return ToolContext(scope=scope, workspace=workspace, tool_use_id="t", operation_id="o")


async def start_in_background(
    jobs: BackgroundJobs, tmp_path: Path, command: str, turn: CancelScope | None = None, **kw
) -> str:
    turn = turn or CancelScope("turn")
    tool = BashTool(jobs, limits=LIMITS)
    args = tool.parse({"command": command, "run_in_background": True, **kw})
    result = await tool.run(args, make_ctx(tmp_path, turn.child("tool")))
    assert result.outcome is ToolState.SUCCEEDED, result.content
    return result.details["shell_id"]


async def wait_state(jobs: BackgroundJobs, shell_id: str, state: JobState) -> JobInfo:
    for _ in range(250):
        info = jobs.info(shell_id)
        if info.state is state:
            return info
        await asyncio.sleep(0.02)
    raise AssertionError(f"{shell_id} never became {state}: {jobs.info(shell_id)}")


@pytest.mark.asyncio
async def test_background_job_survives_a_cancel_of_the_turn(tmp_path: Path, marker: str) -> None:
    jobs = BackgroundJobs(limits=LIMITS)
    turn = CancelScope("turn")
    shell_id = await start_in_background(jobs, tmp_path, f"exec -a {marker} sleep 1000", turn)
    await asyncio.to_thread(wait_for_procs, marker, 1, exact=True)

    turn.cancel(CancelReason.USER_INTERRUPT)  # Esc
    await asyncio.sleep(0.3)

    assert jobs.info(shell_id).state is JobState.RUNNING
    assert len(named(marker)) == 1
    await jobs.shutdown()
    assert procs_with(marker) == []


@pytest.mark.asyncio
async def test_kill_shell_ends_the_job_and_its_escapees(tmp_path: Path, marker: str) -> None:
    jobs = BackgroundJobs(limits=LIMITS)
    command = f"setsid bash -c 'exec -a {marker}-gc sleep 1000' & exec -a {marker} sleep 1000"
    shell_id = await start_in_background(jobs, tmp_path, command)
    await asyncio.to_thread(wait_for_procs, f"{marker}-gc", 1, exact=True)

    ctx = make_ctx(tmp_path, CancelScope("turn"))
    result = await KillShellTool(jobs).run(KillShellTool.Input(shell_id=shell_id), ctx)

    assert result.outcome is ToolState.SUCCEEDED
    assert "killed on request" in result.content and "SIGTERM" in result.content
    info = jobs.info(shell_id)
    assert info.state is JobState.KILLED and info.ended_by is CancelReason.USER_INTERRUPT
    assert info.result is not None and info.result.cleanup.escalation is Escalation.TERM
    assert info.residue == [] and procs_with(marker) == []
    out = await BashOutputTool(jobs).run(BashOutputTool.Input(shell_id=shell_id), ctx)
    assert "killed" in out.content
    await jobs.shutdown()


@pytest.mark.asyncio
async def test_shutdown_ends_every_job_with_escalation(tmp_path: Path, marker: str) -> None:
    changes: list[JobInfo] = []
    jobs = BackgroundJobs(limits=LIMITS, on_change=changes.append)
    ids = [
        await start_in_background(jobs, tmp_path, f"exec -a {marker}-plain sleep 1000"),
        await start_in_background(
            jobs, tmp_path, f"trap '' TERM; exec -a {marker}-stubborn sleep 1000"
        ),
        await start_in_background(
            jobs,
            tmp_path,
            f"(setsid bash -c 'exec -a {marker}-daemon sleep 1000' &); exec -a {marker}-m sleep 1000",
        ),
    ]
    await asyncio.to_thread(wait_for_procs, marker, 4)

    await jobs.shutdown()

    infos = [jobs.info(i) for i in ids]
    assert all(i.state is JobState.KILLED for i in infos)
    assert all(i.ended_by is CancelReason.SHUTDOWN for i in infos)
    assert infos[1].signal == "SIGKILL"
    assert infos[1].result is not None
    assert infos[1].result.cleanup.escalation is Escalation.KILL
    assert procs_with(marker) == []
    assert [c.state for c in changes].count(JobState.KILLED) == 3
    # No new job after shutdown.
    tool = BashTool(jobs, limits=LIMITS)
    args = tool.parse({"command": "true", "run_in_background": True})
    refused = await tool.run(args, make_ctx(tmp_path, CancelScope("turn")))
    assert refused.is_error and "shutting down" in refused.content


@pytest.mark.asyncio
async def test_bash_output_returns_only_new_output_and_the_exit(tmp_path: Path) -> None:
    jobs = BackgroundJobs(limits=LIMITS)
    shell_id = await jobs.start(
        bash_argv("echo one; sleep 0.4; echo two; exit 5"), command="demo", cwd=tmp_path
    )
    tool = BashOutputTool(jobs)
    ctx = make_ctx(tmp_path, CancelScope("turn"))
    await asyncio.sleep(0.2)
    first = await tool.run(tool.Input(shell_id=shell_id), ctx)
    assert first.content.endswith("running, pid %d\none\n" % jobs.info(shell_id).pid)

    info = await wait_state(jobs, shell_id, JobState.EXITED)
    assert info.exit_code == 5 and info.ended_by is None
    second = await tool.run(tool.Input(shell_id=shell_id), ctx)
    assert second.content == "demo: exited with code 5\ntwo\n".replace("demo", f"{shell_id} (demo)")
    third = await tool.run(tool.Input(shell_id=shell_id), ctx)
    assert "(no new output)" in third.content
    assert jobs.peek(shell_id) == "one\ntwo\n"
    await jobs.shutdown()


@pytest.mark.asyncio
async def test_background_timeout_kills_the_job(tmp_path: Path, marker: str) -> None:
    jobs = BackgroundJobs(limits=LIMITS)
    shell_id = await start_in_background(
        jobs, tmp_path, f"exec -a {marker} sleep 1000", timeout_ms=300
    )
    info = await wait_state(jobs, shell_id, JobState.KILLED)
    assert info.ended_by is CancelReason.TIMEOUT and info.signal == "SIGTERM"
    assert procs_with(marker) == []
    await jobs.shutdown()


@pytest.mark.asyncio
async def test_unknown_shell_id_is_an_error(tmp_path: Path) -> None:
    jobs = BackgroundJobs(limits=LIMITS)
    ctx = make_ctx(tmp_path, CancelScope("turn"))
    out = await BashOutputTool(jobs).run(BashOutputTool.Input(shell_id="shell_99"), ctx)
    kill = await KillShellTool(jobs).run(KillShellTool.Input(shell_id="shell_99"), ctx)
    assert out.is_error and kill.is_error and "shell_99" in out.content
    assert BashOutputTool(jobs).read_only and not KillShellTool(jobs).read_only


@pytest.mark.asyncio
async def test_kill_of_a_finished_job_reports_its_real_end(tmp_path: Path) -> None:
    jobs = BackgroundJobs(limits=LIMITS)
    shell_id = await jobs.start(bash_argv("exit 0"), command="quick", cwd=tmp_path)
    await wait_state(jobs, shell_id, JobState.EXITED)
    info = await jobs.kill(shell_id)
    assert info.state is JobState.EXITED and info.exit_code == 0
    await jobs.shutdown()
