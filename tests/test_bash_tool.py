"""The bash tool's contract: results worded from real endings, interrupt, timeout,
send-to-background, environment and workspace."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import psutil
import pytest

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.core.calls.tool import ToolContext, ToolResult
from agent_tui.tools.background import BackgroundJobs, BashOutputTool, JobState, KillShellTool
from agent_tui.tools.bash import BashInput, BashTool
from agent_tui.runtime.process import RunLimits
from tests.harness import told
from tests.trees.procs import marker, named, procs_with, wait_for_procs  # noqa: F401

LIMITS = RunLimits(grace_s=0.3, drain_s=0.3, kill_confirm_s=1.0)


def make_ctx(workspace: Path, scope: CancelScope | None = None, **kw) -> ToolContext:
    return ToolContext(
        scope=scope or CancelScope("tool"),
        workspace=workspace,
        tool_use_id="toolu_test",
        operation_id="op_test",
        **kw,
    )


async def bash(tool: BashTool, ctx: ToolContext, command: str, **kw) -> ToolResult:
    return await tool.run(tool.parse({"command": command, **kw}), ctx)


@pytest.mark.asyncio
async def test_success_returns_output(tmp_path: Path) -> None:
    result = await bash(BashTool(limits=LIMITS), make_ctx(tmp_path), "echo hello; echo oops >&2")
    assert result.outcome is ToolState.SUCCEEDED and not result.is_error
    assert result.content == "hello\noops\n"
    assert result.exit_code == 0
    assert result.details["cleanup"]["process_exited"] is True


@pytest.mark.asyncio
async def test_nonzero_exit_is_failed_with_the_code(tmp_path: Path) -> None:
    result = await bash(BashTool(limits=LIMITS), make_ctx(tmp_path), "echo partial; exit 4")
    assert result.outcome is ToolState.FAILED and result.is_error
    assert result.exit_code == 4
    assert "exit code 4" in result.content and "partial" in result.content


@pytest.mark.asyncio
async def test_runs_in_workspace_without_the_agent_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    ctx = make_ctx(tmp_path, env={"EXTRA_VAR": "given"})
    result = await bash(
        BashTool(limits=LIMITS), ctx, 'pwd; echo "${ANTHROPIC_API_KEY:-unset} $EXTRA_VAR"'
    )
    assert result.content == f"{tmp_path}\nunset given\n"


@pytest.mark.asyncio
async def test_interrupt_from_another_thread_reports_how_it_ended(
    tmp_path: Path, marker: str
) -> None:
    streamed: list[str] = []
    scope = CancelScope("tool")
    ctx = make_ctx(tmp_path, scope, emit_output=streamed.append)
    command = f"echo started; trap '' TERM; exec -a {marker} sleep 1000"  # TERM stays ignored
    task = asyncio.create_task(bash(BashTool(limits=LIMITS), ctx, command))
    await asyncio.to_thread(wait_for_procs, marker, 1, exact=True)
    threading.Thread(target=scope.cancel, args=(CancelReason.USER_INTERRUPT,)).start()
    result = await asyncio.wait_for(task, 5)

    assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING
    assert result.ended_by is CancelReason.USER_INTERRUPT
    assert result.side_effects is SideEffects.UNVERIFIED
    assert result.signal == "SIGKILL" and result.exit_code is None
    # The model is told of the interruption once (worded by the core), then the output.
    text = told(result, "bash")
    assert text.count("Interrupted") == 1 and text.count("Output so far") == 1, text
    assert "ended by SIGKILL" in text and text.endswith("started\n")
    assert "started" in result.content and "started" in "".join(streamed)
    cleanup = result.details["cleanup"]
    assert cleanup["grace_s"] == 0.3 and cleanup["escalation"] == "kill"
    assert cleanup["process_exited"] and cleanup["output_complete"]
    assert cleanup["descriptors_released"]
    assert result.residue == [] and procs_with(marker) == []


@pytest.mark.asyncio
async def test_a_second_esc_kills_at_once_without_the_rest_of_the_grace(
    tmp_path: Path, marker: str
) -> None:
    scope = CancelScope("turn")
    ctx = make_ctx(tmp_path, scope.child("tool"))
    command = f"echo started; trap '' TERM; exec -a {marker} sleep 1000"  # TERM stays ignored
    task = asyncio.create_task(bash(BashTool(limits=RunLimits(grace_s=60)), ctx, command))
    await asyncio.to_thread(wait_for_procs, marker, 1, exact=True)
    assert scope.cancel(CancelReason.USER_INTERRUPT)  # the first Esc: TERM, then the grace
    await asyncio.sleep(0.3)
    assert not task.done() and procs_with(marker)  # waiting out a 60 s grace
    threading.Thread(target=scope.hurry).start()  # the second Esc, from the UI's thread
    result = await asyncio.wait_for(task, 5)

    assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING
    assert result.signal == "SIGKILL"
    cleanup = result.details["cleanup"]
    assert cleanup["escalation"] == "kill" and cleanup["grace_used_s"] < 5
    assert result.residue == [] and procs_with(marker) == []


def test_hurry_reaches_every_child_once_and_only_after_a_cancel() -> None:
    root = CancelScope("root")
    early = root.child("early")
    heard: list[str] = []
    early.on_hurry(lambda: heard.append("early"))
    assert root.hurry() is False  # not cancelled yet: this cancels, it does not hurry
    assert root.cancelled and early.cancelled and not early.hurried
    late = root.child("late")  # made while the cancel's cleanup runs
    late.on_hurry(lambda: heard.append("late"))
    assert root.hurry() is True and root.hurry() is False
    assert sorted(heard) == ["early", "late"] and late.hurried
    after = root.child("after")
    assert after.cancelled and after.hurried
    after.on_hurry(lambda: heard.append("after"))  # already hurried: at once
    assert heard[-1] == "after"


@pytest.mark.asyncio
async def test_timeout_fails_says_so_and_leaves_the_turn_alone(
    tmp_path: Path, marker: str
) -> None:
    scope = CancelScope("tool")
    command = f"echo begun; exec -a {marker} sleep 1000"
    result = await bash(BashTool(limits=LIMITS), make_ctx(tmp_path, scope), command, timeout_ms=300)

    assert result.outcome is ToolState.FAILED and result.is_error
    assert result.ended_by is CancelReason.TIMEOUT
    assert result.content.startswith("Timed out after 300 ms")
    assert "begun" in result.content
    assert result.signal == "SIGTERM"
    assert result.side_effects is SideEffects.UNVERIFIED
    assert not scope.cancelled  # the timeout is the call's own, not the turn's
    assert procs_with(marker) == []


@pytest.mark.asyncio
async def test_leftover_processes_of_a_finished_command_are_ended_and_named(
    tmp_path: Path, marker: str
) -> None:
    command = f"(exec -a {marker} sleep 1000 >/dev/null 2>&1 &); echo done"
    result = await bash(BashTool(limits=LIMITS), make_ctx(tmp_path), command)
    assert result.outcome is ToolState.SUCCEEDED
    assert "ended 1 process(es)" in result.content and marker in result.content
    assert result.side_effects is SideEffects.UNVERIFIED
    assert procs_with(marker) == []


@pytest.mark.asyncio
async def test_send_to_background_keeps_the_process_running(tmp_path: Path, marker: str) -> None:
    jobs = BackgroundJobs(limits=LIMITS)
    scope = CancelScope("tool")
    ctx = make_ctx(tmp_path, scope)
    command = f"echo before; exec -a {marker} bash -c 'sleep 0.5; echo after; sleep 1000'"
    task = asyncio.create_task(bash(BashTool(jobs, limits=LIMITS), ctx, command))
    found = await asyncio.to_thread(wait_for_procs, marker, 1, exact=True)
    scope.cancel(CancelReason.SEND_TO_BACKGROUND)
    result = await asyncio.wait_for(task, 5)

    assert result.outcome is ToolState.SUCCEEDED
    shell_id = result.details["shell_id"]
    assert shell_id in result.content and "before" in result.content
    assert "still running" in result.content
    assert found[0].is_running() and named(marker)  # not killed
    assert jobs.info(shell_id).state is JobState.RUNNING
    assert jobs.info(shell_id).tool_use_id == ctx.tool_use_id  # the call it came from

    await asyncio.sleep(0.7)
    out = await BashOutputTool(jobs).run(BashOutputTool.Input(shell_id=shell_id), ctx)
    state_line, new_output = out.content.split("\n", 1)
    assert new_output == "after\n"  # only what came since it moved
    assert state_line.endswith(f"running, pid {found[0].pid}")

    killed = await KillShellTool(jobs).run(KillShellTool.Input(shell_id=shell_id), ctx)
    assert "killed" in killed.content
    assert jobs.info(shell_id).state is JobState.KILLED
    assert procs_with(marker) == []
    await jobs.shutdown()


@pytest.mark.asyncio
async def test_send_to_background_without_a_registry_stops_the_command(
    tmp_path: Path, marker: str
) -> None:
    scope = CancelScope("tool")
    task = asyncio.create_task(
        bash(BashTool(limits=LIMITS), make_ctx(tmp_path, scope), f"exec -a {marker} sleep 1000")
    )
    await asyncio.to_thread(wait_for_procs, marker, 1, exact=True)
    scope.cancel(CancelReason.SEND_TO_BACKGROUND)
    result = await asyncio.wait_for(task, 5)
    assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING
    assert procs_with(marker) == []


@pytest.mark.asyncio
async def test_cancelled_before_start_runs_nothing(tmp_path: Path) -> None:
    scope = CancelScope("tool")
    scope.cancel()
    result = await bash(BashTool(limits=LIMITS), make_ctx(tmp_path, scope), f"touch {tmp_path}/x")
    assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING
    assert result.side_effects is SideEffects.NONE
    assert not (tmp_path / "x").exists()


@pytest.mark.asyncio
async def test_core_giving_up_on_the_call_still_kills_the_tree(tmp_path: Path, marker: str) -> None:
    # The core cancels the task itself when the cleanup budget is spent.
    task = asyncio.create_task(
        bash(BashTool(limits=LIMITS), make_ctx(tmp_path), f"exec -a {marker} sleep 1000")
    )
    await asyncio.to_thread(wait_for_procs, marker, 1, exact=True)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    gone = await asyncio.to_thread(lambda: psutil.wait_procs(named(marker), timeout=2))
    assert procs_with(marker) == [] and not gone[1]


def test_schema_and_flags() -> None:
    tool = BashTool()
    schema = tool.input_schema()
    assert set(schema["properties"]) == {"command", "timeout_ms", "run_in_background", "description"}
    assert schema["required"] == ["command"]
    assert tool.name == "bash" and tool.read_only is False
    assert isinstance(tool.parse({"command": "ls"}), BashInput)
