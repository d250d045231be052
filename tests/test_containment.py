"""A cgroup per command: escapees that leave every other trace still end with the run,
a fork bomb stops at limits.pids, the cgroup is gone after. Real processes, real
cgroups; skipped with the reason where this machine gives the agent no cgroup."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.tools.bash import to_tool_result
from agent_tui.runtime.process import (
    ContainmentMode,
    Escalation,
    LimitHit,
    ProcessRun,
    RunLimits,
    containment,
)
from tests.trees.procs import kill_marked, procs_with, wait_for_procs

pytestmark = pytest.mark.skipif(
    containment().mode is not ContainmentMode.CGROUP,
    reason=f"no writable cgroup v2 for the agent here: {containment().detail}",
)

LIMITS = RunLimits(grace_s=0.3, drain_s=0.3, kill_confirm_s=1.0)


@pytest.fixture
def marker(request: pytest.FixtureRequest) -> str:
    from tests.trees.procs import new_marker

    value = new_marker()
    request.addfinalizer(lambda: kill_marked(value))
    return value


def _escapee(marker: str, *, wait_first: float) -> str:
    """A process that clears its environment (env -i), detaches at once (setsid, a
    double fork), ignores TERM and closes its descriptors; started after
    ``wait_first`` seconds."""
    inner = (f"trap '' TERM; exec 0<&- 1>&- 2>&-; "
             f"exec -a {marker}-esc sleep 1000")
    return (f"sleep {wait_first}; "
            f"env -i /usr/bin/setsid -f /bin/bash -c \"( {inner} ) &\" ; "
            f"exec -a {marker}-lead sleep 1000")


async def _cancelled(run: ProcessRun) -> object:
    scope = CancelScope("test")
    scope.cancel(CancelReason.USER_INTERRUPT)
    reason = await run.wait(scope)
    return await run.stop(reason or CancelReason.USER_INTERRUPT)


@pytest.mark.asyncio
async def test_escapee_cancelled_in_its_first_milliseconds_leaves_nothing(marker: str) -> None:
    run = ProcessRun(["bash", "-c", _escapee(marker, wait_first=0)], cwd="/tmp", limits=LIMITS)
    await run.start()
    result = await _cancelled(run)  # at once: the escapee may be half born
    await asyncio.sleep(0.3)  # a late birth would show by now

    assert procs_with(marker) == []
    assert result.residue == []
    assert not Path(result.cleanup.cgroup or "/nonexistent").exists()


@pytest.mark.asyncio
async def test_escapee_one_second_in_that_ignores_term_is_ended_by_cgroup_kill(
    marker: str,
) -> None:
    shown: list[str] = []
    run = ProcessRun(["bash", "-c", _escapee(marker, wait_first=1.0)], cwd="/tmp", limits=LIMITS,
                     on_output=shown.append)
    await run.start()
    found = await asyncio.to_thread(wait_for_procs, f"{marker}-esc", 1, exact=True)
    assert found and os.getsid(found[0].pid) != run.pid  # really detached
    assert "AGENT_TUI_RUN_ID" not in found[0].environ()  # and carries no tag
    result = await _cancelled(run)

    assert procs_with(marker) == []  # 0 left, by the process table
    assert result.residue == []
    assert result.cleanup.escalation is Escalation.KILL  # it ignored TERM
    assert result.cleanup.in_cgroup_at_kill and result.cleanup.in_cgroup_at_kill >= 1
    assert not Path(result.cleanup.cgroup or "/nonexistent").exists()  # removed after
    # The cleanup progress line says how many were still in the cgroup at the kill.
    line = f"[{result.cleanup.in_cgroup_at_kill} process(es) still in the command's cgroup"
    assert line in "".join(shown)


@pytest.mark.asyncio
async def test_natural_exit_with_a_detached_escapee_ends_it_and_removes_the_cgroup(
    marker: str,
) -> None:
    script = (f"env -i /usr/bin/setsid -f /bin/bash -c "
              f"\"trap '' TERM; exec -a {marker}-esc sleep 1000\"; echo started")
    run = ProcessRun(["bash", "-c", script], cwd="/tmp", limits=LIMITS)
    await run.start()
    result = await run.finish()

    assert result.exit_code == 0 and "started" in result.output
    assert procs_with(marker) == []
    assert any(f"{marker}-esc" in r.cmdline for r in result.cleanup.ended)
    assert not Path(result.cleanup.cgroup or "/nonexistent").exists()


@pytest.mark.asyncio
async def test_fork_bomb_stops_at_limits_pids_and_says_so(tmp_path: Path) -> None:
    limits = LIMITS.model_copy(update={"pids": 40})
    if "pids" not in containment().limits:
        pytest.skip("no pids controller for the agent's cgroups here")
    # A bounded bomb: every process forks two more until forks fail; then all wait.
    script = "b() { b & b & wait; }; b"
    run = ProcessRun(["bash", "-c", script], cwd=tmp_path, limits=limits)
    await run.start()
    scope = CancelScope("test")
    scope.cancel_after(1.5)
    reason = await run.wait(scope)
    result = await run.stop(reason or CancelReason.TIMEOUT)

    assert LimitHit.PIDS in result.limit_hits
    assert result.residue == []
    tool_result = to_tool_result(result, timeout_ms=1500, grace_s=limits.grace_s)
    assert "limits.pids" in tool_result.content


@pytest.mark.asyncio
async def test_a_command_over_limits_memory_is_killed_and_says_so(tmp_path: Path) -> None:
    import sys

    if "memory" not in containment().limits:
        pytest.skip("no memory controller for the agent's cgroups here")
    limits = LIMITS.model_copy(update={"memory": 64 << 20})
    # 256 MiB, every page written: far over the limit, so the kernel's OOM killer acts.
    script = "data = b'x' * (256 << 20); print('allocated')"
    run = ProcessRun([sys.executable, "-c", script], cwd=tmp_path, limits=limits)
    await run.start()
    result = await run.finish()

    assert LimitHit.MEMORY in result.limit_hits
    assert "allocated" not in result.output and result.signal == "SIGKILL"
    tool_result = to_tool_result(result, timeout_ms=10_000, grace_s=limits.grace_s)
    assert "limits.memory" in tool_result.content


@pytest.mark.asyncio
async def test_a_command_that_cannot_be_found_fails_to_start_and_leaves_no_cgroup(
    tmp_path: Path,
) -> None:
    from agent_tui.runtime.process.cgroup_tree import tree

    run = ProcessRun(["/nonexistent/agent-tui-binary"], cwd=tmp_path, limits=LIMITS)
    with pytest.raises(FileNotFoundError):
        await run.start()
    found = tree()
    assert found is not None and not (found.v2 / f"run-{run.run_id}").exists()


@pytest.mark.asyncio
async def test_leftovers_of_a_crashed_agent_are_listed_and_ended_by_their_cgroup(
    marker: str,
) -> None:
    """An earlier agent (another owner) left a command's cgroup holding a process that
    cleared its environment and detached: found by the cgroup, ended by it."""
    import subprocess
    import uuid

    from agent_tui.runtime.leftovers import Leftovers, find_leftovers
    from agent_tui.runtime.process.cgroup_tree import AGENT_PREFIX, tree

    found_tree = tree()
    assert found_tree is not None
    owner = uuid.uuid4().hex
    folder = found_tree.v2.parent / f"{AGENT_PREFIX}{owner}" / "run-earlier"
    folder.mkdir(parents=True)
    script = (f"echo $$ > {folder}/cgroup.procs; "
              f"env -i /usr/bin/setsid -f /bin/bash -c \"trap '' TERM; "
              f"exec -a {marker}-left sleep 1000\"")
    subprocess.run(["/bin/sh", "-c", script], check=True)
    assert await asyncio.to_thread(wait_for_procs, f"{marker}-left", 1, exact=True)

    left = find_leftovers({owner})
    assert [x.folder for x in left] == [folder]
    assert f"{marker}-left" in left[0].cmdline
    events: list = []
    leftovers = Leftovers(left, events.append)
    assert leftovers.request_stop(f"left_{left[0].pid}")
    await leftovers.shutdown()

    assert procs_with(marker) == []
    assert events[-1].state == "killed"
    assert not folder.parent.exists()  # the earlier agent's cgroups are removed


def test_another_agent_s_fresh_empty_cgroup_is_left_alone_and_an_old_one_is_tidied() -> None:
    """Two agents starting at once: one's tidying must not take the folder the other has
    just made (it probes cgroup.kill there next), only one abandoned long enough ago."""
    import time
    import uuid

    from agent_tui.runtime.process.cgroup_tree import _STALE_S, AGENT_PREFIX, _tidy, tree

    found_tree = tree()
    assert found_tree is not None
    found_tree.ensure()
    fresh = found_tree.v2.parent / f"{AGENT_PREFIX}{uuid.uuid4().hex}"
    old = found_tree.v2.parent / f"{AGENT_PREFIX}{uuid.uuid4().hex}"
    fresh.mkdir()
    old.mkdir()
    try:
        then = time.time() - _STALE_S - 5
        os.utime(old, (then, then))
        if old.stat().st_mtime > then + 1:
            pytest.skip("this cgroup file system keeps no mtime that is set")
        _tidy(found_tree)
        assert fresh.exists()
        assert not old.exists()
    finally:
        for folder in (fresh, old):
            if folder.exists():
                folder.rmdir()


@pytest.mark.asyncio
async def test_an_mcp_stdio_server_launched_through_procs_runs_and_ends_in_its_cgroup(
    tmp_path: Path,
) -> None:
    import sys
    import uuid

    from mcp.client.stdio import StdioServerParameters, stdio_client

    from agent_tui.mcp import procs

    tag = uuid.uuid4().hex
    command, args, env = procs.launch(tag, sys.executable, [SDK_SERVER, str(tmp_path / "r")],
                                      {}, str(tmp_path))
    cell = procs.cgroup_of(tag)
    assert cell is not None and cell.name.startswith(f"mcp-{tag}-")
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(tmp_path))
    async with stdio_client(params):
        for _ in range(200):
            found = procs.find_tagged(tag, children_only=True)
            if found and "sdk_server" in " ".join(found[0].cmdline()):
                break
            await asyncio.sleep(0.02)
        assert found, "the server did not start"
        assert _cgroup_line(found[0].pid) == _v2_path(cell)
        assert await asyncio.to_thread(procs.end_tagged, [tag], 0.5) == []
        assert not found[0].is_running() or found[0].status() == "zombie"
    assert not cell.exists() and procs.cgroup_of(tag) is None


# ----------------------------------------------------------------------------- MCP servers

SDK_SERVER = str(Path(__file__).parent / "mcp_servers" / "sdk_server.py")


def _cgroup_line(pid: int) -> str:
    """The cgroup v2 path of ``pid``, as the kernel says."""
    lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    return next(line.removeprefix("0::") for line in lines if line.startswith("0::"))


def _v2_path(folder: Path) -> str:
    from agent_tui.runtime.process.cgroup_tree import tree

    found = tree()
    assert found is not None
    return "/" + str(folder.relative_to(found.v2_mount))


def _mcp_cgroups(tag: str) -> list[Path]:
    from agent_tui.runtime.process.cgroup_tree import tree

    found = tree()
    assert found is not None
    return sorted(found.v2.glob(f"mcp-{tag}-*")) if found.v2.exists() else []


async def _escaping_server(tmp_path: Path, marker: str):  # noqa: ANN202 - a test helper
    import sys

    from agent_tui.mcp import McpManager, ServerConfig
    from agent_tui.settings.mcp_servers import Transport

    config = ServerConfig(name="esc", transport=Transport.STDIO, source=Path("test"),
                          command=sys.executable,
                          args=[SDK_SERVER, str(tmp_path / "rec.jsonl"), "--escapee", marker])
    manager = McpManager([config], workspace=tmp_path, log_dir=tmp_path / "logs",
                         start_timeout_s=15.0)
    manager.start()
    await manager.wait_started(15.0)
    return manager, manager.connections["esc"]


async def _escapee_of(marker: str):  # noqa: ANN202 - a test helper
    [esc] = await asyncio.to_thread(wait_for_procs, f"{marker}-esc", 1, exact=True)
    return esc


@pytest.mark.asyncio
async def test_an_mcp_server_runs_in_its_own_cgroup_and_its_escaped_child_ends_at_shutdown(
    tmp_path: Path, marker: str,
) -> None:
    from agent_tui.mcp import ServerState, procs

    manager, conn = await _escaping_server(tmp_path, marker)
    try:
        assert conn.state is ServerState.READY and conn.pid is not None
        cell = procs.cgroup_of(conn.tag)
        assert cell is not None and _mcp_cgroups(conn.tag) == [cell]
        assert _cgroup_line(conn.pid) == _v2_path(cell)  # the server's own cgroup
        esc = await _escapee_of(marker)
        assert os.getsid(esc.pid) not in (os.getsid(conn.pid), os.getsid(0))  # detached
        assert "AGENT_TUI_MCP_SERVER" not in esc.environ()  # untagged (env -i)
        assert _cgroup_line(esc.pid) == _v2_path(cell)  # but born inside
    finally:
        residue = await manager.shutdown()

    assert residue == []
    assert procs_with(marker) == []  # 0 left, by the process table
    assert _mcp_cgroups(conn.tag) == [] and procs.cgroup_of(conn.tag) is None


@pytest.mark.asyncio
async def test_a_restarted_mcp_server_gets_a_new_cgroup_and_its_first_start_leaves_nothing(
    tmp_path: Path, marker: str,
) -> None:
    import time

    from agent_tui.cancel import CancelScope as Scope
    from agent_tui.protocol import ToolState
    from agent_tui.core.calls.tool import ToolContext, ToolSet
    from agent_tui.mcp import ServerState, procs

    manager, conn = await _escaping_server(tmp_path, marker)
    tools = ToolSet()
    manager.attach(tools)

    async def call(name: str, args: dict) -> ToolState:
        tool = tools.get(name)
        assert tool is not None
        ctx = ToolContext(scope=Scope(), workspace=tmp_path, tool_use_id=f"tu-{name}",
                          operation_id=f"op-{name}")
        return (await tool.run(tool.parse(args), ctx)).outcome

    try:
        first = procs.cgroup_of(conn.tag)
        first_esc = await _escapee_of(marker)
        assert await call("mcp__esc__crash", {}) is ToolState.UNKNOWN
        deadline = time.monotonic() + 5
        while conn.state is not ServerState.FAILED and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert conn.state is ServerState.FAILED
        # The dead start's cgroup was ended with everything in it, and removed.
        assert not first_esc.is_running() or first_esc.status() == "zombie"
        assert first is not None and not first.exists()

        assert await call("mcp__esc__echo", {"text": "back"}) is ToolState.SUCCEEDED
        second = procs.cgroup_of(conn.tag)
        assert conn.restarts == 1 and second is not None and second != first
        assert _mcp_cgroups(conn.tag) == [second]
        assert conn.pid is not None and _cgroup_line(conn.pid) == _v2_path(second)
        second_esc = await _escapee_of(marker)
        assert _cgroup_line(second_esc.pid) == _v2_path(second)
    finally:
        assert await manager.shutdown() == []

    assert procs_with(marker) == []
    assert _mcp_cgroups(conn.tag) == []


@pytest.mark.asyncio
async def test_an_mcp_server_that_hangs_at_start_leaves_no_process_and_no_cgroup(
    tmp_path: Path,
) -> None:
    import sys

    from agent_tui.mcp import McpManager, ServerConfig, ServerState, procs
    from agent_tui.settings.mcp_servers import Transport

    config = ServerConfig(name="hang", transport=Transport.STDIO, source=Path("test"),
                          command=sys.executable,
                          args=[SDK_SERVER, str(tmp_path / "rec.jsonl"), "--hang-start"])
    manager = McpManager([config], workspace=tmp_path, log_dir=tmp_path / "logs",
                         start_timeout_s=1.0)
    conn = manager.connections["hang"]
    manager.start()
    try:
        await asyncio.sleep(0.3)
        cell = procs.cgroup_of(conn.tag)
        assert cell is not None and procs.find_tagged(conn.tag)  # it runs, in its cgroup
        await manager.wait_started(5.0)
        assert conn.state is ServerState.FAILED
        assert conn.task is not None
        await asyncio.wait_for(asyncio.shield(conn.task), 10)  # the start's end
        assert procs.find_tagged(conn.tag) == []
        assert not cell.exists() and procs.cgroup_of(conn.tag) is None
    finally:
        await manager.shutdown()
