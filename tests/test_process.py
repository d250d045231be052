"""The run unit against real process trees: every tree is cancelled mid-run and must
leave nothing behind, checked in the process table by a marker in each argv."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import psutil
import pytest

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.runtime.process import (
    OWNER_ENV,
    owner_id,
    Escalation,
    OutputCapture,
    ProcessRun,
    RunLimits,
    RunResult,
    kill_all_runs,
    strip_ansi,
)
from tests.trees.procs import marker, procs_with, rss, wait_for_procs  # noqa: F401


def _zombie_children() -> set[int]:
    return {
        k.pid for k in psutil.Process().children() if k.status() == psutil.STATUS_ZOMBIE
    }


# Zombies other test modules left (daemons they started were adopted by the test
# process, a subreaper once a run has started): this module answers only for its own.
_ZOMBIES_BEFORE: set[int] = set()


@pytest.fixture(scope="module", autouse=True)
def _zombies_before_this_module() -> None:
    _ZOMBIES_BEFORE.update(_zombie_children())

LIMITS = RunLimits(grace_s=0.3, drain_s=0.3, kill_confirm_s=1.0)


def tree(script: str, marker: str) -> list[str]:
    """``bash -c SCRIPT MARKER``: the marker is $0, so it is in the leader's argv."""
    return ["bash", "-c", script, marker]


async def run_and_cancel(
    argv: list[str],
    *,
    marker: str,
    expect: int = 1,
    from_thread: bool = False,
    reason: CancelReason = CancelReason.USER_INTERRUPT,
    tmp: str = "/tmp",
) -> RunResult:
    """Start, wait until ``expect`` marked processes exist, cancel the scope, stop."""
    run = ProcessRun(argv, cwd=tmp, limits=LIMITS)
    scope = CancelScope("test")
    await run.start()
    found = await asyncio.to_thread(wait_for_procs, marker, expect)
    assert len(found) >= expect, f"tree did not start: {[p.cmdline() for p in found]}"
    if from_thread:
        threading.Thread(target=scope.cancel, args=(reason,)).start()
    else:
        scope.cancel(reason)
    got = await run.wait(scope)
    assert got is reason
    return await run.stop(got)


def assert_nothing_left(result: RunResult, marker: str) -> None:
    assert result.residue == []
    assert procs_with(marker) == []
    assert result.cleanup.process_exited


@pytest.mark.asyncio
async def test_tree_that_exits_on_term_ends_within_grace(marker: str) -> None:
    script = f"(exec -a {marker}-a sleep 1000) & (exec -a {marker}-b sleep 1000) & wait"
    result = await run_and_cancel(tree(script, marker), marker=marker, expect=3)

    assert_nothing_left(result, marker)
    assert result.signal == "SIGTERM"
    assert result.ended_by is CancelReason.USER_INTERRUPT
    assert result.cleanup.escalation is Escalation.TERM
    assert result.cleanup.grace_s == LIMITS.grace_s
    assert result.cleanup.grace_used_s is not None and result.cleanup.grace_used_s < LIMITS.grace_s
    assert result.cleanup.output_complete and result.cleanup.descriptors_released


@pytest.mark.asyncio
async def test_tree_ignoring_term_is_killed_after_grace_cancelled_from_another_thread(
    marker: str,
) -> None:
    script = f"trap '' TERM; while :; do (exec -a {marker}-tick sleep 0.05); done"
    # Two marked: the shell and a tick, so its trap is set before the cancel.
    result = await run_and_cancel(tree(script, marker), marker=marker, expect=2, from_thread=True)

    assert_nothing_left(result, marker)
    assert result.signal == "SIGKILL"
    assert result.cleanup.escalation is Escalation.KILL
    assert result.cleanup.grace_used_s == LIMITS.grace_s


@pytest.mark.asyncio
async def test_setsid_grandchild_outside_the_group_is_found_by_tag(marker: str) -> None:
    script = f"setsid bash -c 'exec -a {marker}-gc sleep 1000' & wait"
    run = ProcessRun(tree(script, marker), cwd="/tmp", limits=LIMITS)
    scope = CancelScope("test")
    await run.start()
    found = await asyncio.to_thread(wait_for_procs, f"{marker}-gc", 1, exact=True)
    assert found and os.getsid(found[0].pid) != run.pid  # really left the session
    scope.cancel()
    result = await run.stop(await run.wait(scope))

    assert_nothing_left(result, marker)
    assert any(f"{marker}-gc" in r.cmdline for r in result.cleanup.ended)


@pytest.mark.asyncio
async def test_double_forked_daemon_holding_stdout_is_named_and_ended(marker: str) -> None:
    # The leader exits at once; its daemon (setsid, parent gone) keeps our pipe open.
    script = f"(setsid bash -c 'exec -a {marker}-d sleep 1000' &); echo started"
    run = ProcessRun(tree(script, marker), cwd="/tmp", limits=LIMITS)
    await run.start()
    assert await run.wait(CancelScope("test")) is None  # not held by the daemon's pipe
    result = await run.finish()

    assert result.exit_code == 0 and result.ended_by is None
    assert "started" in result.output
    cleanup = result.cleanup
    assert cleanup.process_exited
    assert not cleanup.output_complete  # the drain bound cut it off
    assert [h.cmdline for h in cleanup.pipe_holders] == [f"{marker}-d 1000"]
    assert cleanup.descriptors_released  # after the leftover was ended
    assert any(r.cmdline == f"{marker}-d 1000" for r in cleanup.ended)
    assert_nothing_left(result, marker)


@pytest.mark.asyncio
async def test_daemon_ignoring_term_that_holds_stdout_is_killed(marker: str) -> None:
    script = f"(setsid bash -c \"trap '' TERM; exec -a {marker}-d sleep 1000\" &); echo started"
    run = ProcessRun(tree(script, marker), cwd="/tmp", limits=LIMITS)
    await run.start()
    await run.wait()
    result = await run.finish()

    assert [h.cmdline for h in result.cleanup.pipe_holders] == [f"{marker}-d 1000"]
    assert result.cleanup.escalation is Escalation.KILL
    assert result.cleanup.descriptors_released
    assert_nothing_left(result, marker)


@pytest.mark.asyncio
async def test_cancel_with_a_daemon_holding_stdout_ends_both(marker: str) -> None:
    script = f"(setsid bash -c 'exec -a {marker}-d sleep 1000' &); exec -a {marker}-main sleep 1000"
    result = await run_and_cancel(tree(script, marker), marker=marker, expect=2)

    assert_nothing_left(result, marker)
    assert result.signal == "SIGTERM"
    assert result.cleanup.output_complete and result.cleanup.descriptors_released


@pytest.mark.asyncio
async def test_fifty_children_are_all_ended(marker: str) -> None:
    script = f"for i in $(seq 50); do (exec -a {marker}-$i sleep 1000) & done; wait"
    result = await run_and_cancel(tree(script, marker), marker=marker, expect=51)

    assert_nothing_left(result, marker)
    assert result.cleanup.escalation is Escalation.TERM


@pytest.mark.asyncio
async def test_a_gigabyte_of_output_keeps_memory_flat(marker: str) -> None:
    script = "head -c 1G /dev/zero | tr '\\0' x"
    before = rss()
    peak = [before]
    chunks = [0]

    def sample(_data: bytes) -> None:
        chunks[0] += 1
        if chunks[0] % 16 == 0:
            peak[0] = max(peak[0], rss())

    emitted: list[str] = []
    run = ProcessRun(tree(script, marker), cwd="/tmp", limits=LIMITS, on_output=emitted.append)
    run.add_listener(sample)
    await run.start()
    await run.wait()
    result = await run.finish()

    assert result.exit_code == 0
    assert result.output_bytes == 1 << 30
    assert result.dropped_bytes == (1 << 30) - LIMITS.head_bytes - LIMITS.tail_bytes
    assert "bytes of output omitted" in result.output
    assert len(result.output) < LIMITS.head_bytes + LIMITS.tail_bytes + 200
    assert peak[0] - before < 100 * 1024 * 1024
    # The UI got coalesced, bounded events, not one per chunk.
    assert all(len(text) <= LIMITS.emit_max_bytes + 100 for text in emitted)
    assert len(emitted) < chunks[0]
    assert_nothing_left(result, marker)


@pytest.mark.asyncio
async def test_a_flood_is_read_in_large_pieces_and_a_trickle_at_once(marker: str) -> None:
    sizes: list[int] = []
    run = ProcessRun(tree("head -c 50000000 /dev/zero", marker), cwd="/tmp", limits=LIMITS)
    run.add_listener(lambda data: sizes.append(len(data)))
    await run.start()
    await run.wait()
    result = await run.finish()
    assert result.output_bytes == 50_000_000 == sum(sizes)
    # 8 KB pieces would be 6,000 wake-ups; the reader waits for the pipe to fill.
    assert len(sizes) < 1000, len(sizes)

    seen: list[float] = []
    run = ProcessRun(tree("for i in 1 2 3 4 5; do echo $i; sleep 0.2; done", marker),
                     cwd="/tmp", limits=LIMITS)
    run.add_listener(lambda data: seen.append(time.monotonic()))
    started = time.monotonic()
    await run.start()
    await run.wait()
    await run.finish()
    # Lines show as they are printed (the pause is milliseconds), not all at the end.
    assert len(seen) >= 3 and seen[-1] - seen[0] > 0.5 and seen[0] - started < 0.8


@pytest.mark.asyncio
async def test_endless_flood_is_cancelled_mid_run(marker: str) -> None:
    before = rss()
    run = ProcessRun(["bash", "-c", "exec -a \"$0\" yes", marker], cwd="/tmp", limits=LIMITS)
    scope = CancelScope("test")
    await run.start()
    scope.cancel_after(0.5)
    reason = await run.wait(scope)
    assert reason is CancelReason.TIMEOUT
    result = await run.stop(reason)

    assert result.ended_by is CancelReason.TIMEOUT
    assert result.signal == "SIGTERM"
    assert result.output_bytes > 1024 * 1024
    assert rss() - before < 100 * 1024 * 1024
    assert_nothing_left(result, marker)


@pytest.mark.asyncio
async def test_exit_code_and_facts_of_a_command_that_ends_by_itself(marker: str) -> None:
    run = ProcessRun(tree("echo out; echo err >&2; exit 3", marker), cwd="/tmp", limits=LIMITS)
    await run.start()
    assert await run.wait(CancelScope("test")) is None
    result = await run.finish()

    assert result.exit_code == 3 and result.signal is None and result.ended_by is None
    assert result.output == "out\nerr\n"
    c = result.cleanup
    assert c.process_exited and c.output_complete and c.descriptors_released
    assert c.escalation is Escalation.NONE and c.ended == [] and c.pipe_holders == []


@pytest.mark.asyncio
async def test_an_exit_that_wins_the_race_with_cancel_is_recorded_as_exit(marker: str) -> None:
    run = ProcessRun(tree("exit 0", marker), cwd="/tmp", limits=LIMITS)
    scope = CancelScope("test")
    await run.start()
    await run.wait()
    scope.cancel()
    assert await run.wait(scope) is None
    result = await run.stop(CancelReason.USER_INTERRUPT)  # too late: it already ended
    assert result.exit_code == 0 and result.ended_by is None


@pytest.mark.asyncio
async def test_output_streams_coalesced_and_ansi_is_stripped(marker: str) -> None:
    emitted: list[str] = []
    script = "printf '\\033[31mred\\033[0m\\n'; for i in $(seq 3000); do echo line $i; done"
    run = ProcessRun(tree(script, marker), cwd="/tmp", limits=LIMITS, on_output=emitted.append)
    await run.start()
    await run.wait()
    result = await run.finish()

    assert result.output.startswith("red\nline 1\n")
    assert "\x1b" not in "".join(emitted)
    assert "".join(emitted).endswith("line 3000\n")
    assert len(emitted) < 100


@pytest.mark.asyncio
async def test_asyncio_subprocess_exit_status_is_not_stolen(marker: str) -> None:
    # Orphans reparent to us (subreaper) and get reaped; asyncio's own children must not.
    other = await asyncio.create_subprocess_exec("sh", "-c", "sleep 0.6; exit 7")
    script = f"(setsid bash -c 'exec -a {marker}-d sleep 1000' &); exec -a {marker}-m sleep 1000"
    result = await run_and_cancel(tree(script, marker), marker=marker, expect=2)
    assert_nothing_left(result, marker)
    assert await other.wait() == 7


@pytest.mark.asyncio
async def test_kill_all_runs_ends_every_run_and_escapee(marker: str) -> None:
    script = f"setsid bash -c 'exec -a {marker}-gc sleep 1000' & exec -a {marker}-m sleep 1000"
    run = ProcessRun(tree(script, marker), cwd="/tmp", limits=LIMITS)
    await run.start()
    await asyncio.to_thread(wait_for_procs, marker, 2)

    residue = await asyncio.to_thread(kill_all_runs, 0.2)

    assert residue == []
    assert procs_with(marker) == []
    await run.wait()
    result = await run.finish()
    assert result.signal in {"SIGTERM", "SIGKILL"}


@pytest.mark.asyncio
async def test_spawn_failure_raises_and_leaves_nothing(tmp_path) -> None:
    run = ProcessRun(["/nonexistent/agent-tui-binary"], cwd=tmp_path, limits=LIMITS)
    with pytest.raises(OSError):
        await run.start()


def test_output_capture_keeps_head_and_tail_and_counts_the_middle() -> None:
    cap = OutputCapture(head_bytes=4, tail_bytes=4)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qr"):
        cap.feed(chunk)
    assert cap.total_bytes == 18
    assert cap.dropped_bytes == 10
    assert cap.text() == "abcd\n[... 10 bytes of output omitted ...]\nopqr"


def test_strip_ansi_removes_escapes_and_overwritten_progress() -> None:
    assert strip_ansi("\x1b[1;32mok\x1b[0m \x1b]0;title\x07done") == "ok done"
    assert strip_ansi("10%\r50%\r100%\nnext\r\n") == "100%\nnext\r\n"


def test_a_forked_agent_has_an_owner_tag_of_its_own_and_its_parents_commands_are_leftovers(
        tmp_path) -> None:
    """An agent forked from a process that imported the process layer (a fork server)
    takes a new owner tag at the fork, and so finds what its parent left running."""
    import json
    import subprocess

    from agent_tui.runtime.leftovers import find_leftovers
    from agent_tui.mcp.procs import tag_env
    from agent_tui.runtime.process import registry
    from agent_tui.runtime.process.cgroup_tree import tree

    parent = owner_id()
    parents_tree = tree()  # found before the fork: the child must not keep it
    left = subprocess.Popen(["sleep", "60"], env={**os.environ, OWNER_ENV: parent})
    registry.register("parents-run", left)  # a run of the parent's (pid, signal_group)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the forked agent: report and leave at once, whatever happens
        try:
            os.close(read)
            own = tag_env("t")[OWNER_ENV]  # what its commands are tagged with
            cgroups = tree()
            report = {
                "owner": owner_id(), "tagged": own,
                "folder": cgroups.v2.name if cgroups is not None else None,
                "leftovers": [f.pid for f in find_leftovers({parent, own} - {own})],
                "live_runs": len(registry.live_runs()),  # the parent's are not its to end
            }
        except BaseException as exc:  # noqa: BLE001 - told to the parent, which fails
            report = {"error": repr(exc)}
        finally:
            try:
                os.write(write, json.dumps(report).encode())
            finally:
                os._exit(0)
    os.close(write)
    try:
        with os.fdopen(read, "rb") as pipe:
            report = json.loads(pipe.read() or b"{}")
        os.waitpid(pid, 0)
    finally:
        registry.unregister("parents-run")
        left.kill()
        left.wait()
    assert "error" not in report, report
    assert report["live_runs"] == 0
    assert report["owner"] != parent and report["tagged"] == report["owner"]
    assert report["leftovers"] == [left.pid]
    assert owner_id() == parent  # the parent keeps its own
    if parents_tree is not None:
        assert report["folder"] == f"agent-tui-{report['owner']}"


def test_no_zombie_or_process_of_ours_survives_the_module() -> None:
    # By our owner tag, not by marker prefix: other test runs may share the machine.
    me = psutil.Process()
    zombies = sorted(_zombie_children() - _ZOMBIES_BEFORE)
    ours = []
    for proc in psutil.process_iter():
        try:
            if proc.pid != me.pid and proc.environ().get(OWNER_ENV) == owner_id():
                ours.append(" ".join(proc.cmdline()))
        except psutil.Error:
            continue
    assert ours == []
    assert zombies == []


def test_an_adopted_orphan_no_one_waits_for_is_reaped_on_the_second_scan() -> None:
    import subprocess

    from agent_tui.runtime.process.orphans import OrphanReaper
    from agent_tui.runtime.process.subreaper import enable_subreaper

    assert enable_subreaper()
    # bash exits at once; its background sleep is orphaned and adopted by this process.
    out = subprocess.run(["bash", "-c", "sleep 0.2 & echo $!"], capture_output=True, text=True)
    orphan = int(out.stdout)
    ours = subprocess.Popen(["sh", "-c", "exit 3"])  # a child someone waits for (a run's leader)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not all(
            psutil.Process(p).status() == psutil.STATUS_ZOMBIE for p in (orphan, ours.pid)):
        time.sleep(0.02)
    assert psutil.Process(orphan).ppid() == os.getpid()

    reaper = OrphanReaper(owned=lambda: {ours.pid})
    assert reaper.scan() == []  # a first sighting is never reaped
    assert psutil.Process(orphan).status() == psutil.STATUS_ZOMBIE
    second = reaper.scan()  # (other orphans of earlier tests may be reaped with it)
    assert orphan in second and ours.pid not in second
    assert not psutil.pid_exists(orphan) or psutil.Process(orphan).ppid() != os.getpid()
    assert ours.wait(timeout=5) == 3  # left to its waiter: its real status, not ECHILD's 0
