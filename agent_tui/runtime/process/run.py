"""The run unit: :class:`ProcessRun`, one local command and everything it spawns.

It starts the command in its own session, reads its output pipe (:mod:`.pipe_reader`),
waits for the leader (:mod:`.leader`, reaped via pidfd), and ends the run through the
one escalation (:mod:`.terminate`): TERM, grace, KILL, bounded drain, leftover sweep.
The lifecycle is described in the package docstring (:mod:`agent_tui.runtime.process`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a process is first looked at (about 10 ms)
    import psutil

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.core.calls.tool import Residue
from agent_tui.runtime.process.cgroup import RunCgroup
from agent_tui.runtime.process.cgroup_tree import tree as cgroup_tree
from agent_tui.runtime.process.discovery import (
    POLL_S,
    Found,
    cmdline_of,
    found_pid,
    is_gone,
    scan,
    send,
)
from agent_tui.runtime.process.leader import Leader
from agent_tui.runtime.process.limits import RunLimits
from agent_tui.runtime.process.output import OutputCapture, OutputThrottle
from agent_tui.runtime.process.pipe_holders import _holds, _pipe_holders
from agent_tui.runtime.process.pipe_reader import PipeReader, open_pipe
from agent_tui.runtime.process.records import (
    Cleanup,
    Escalation,
    LimitHit,
    RunPhase,
    RunResult,
)
from agent_tui.runtime.process.registry import live_runs, register, unregister
from agent_tui.runtime.process.subreaper import enable_subreaper
from agent_tui.runtime.process.tags import OWNER_ENV, RUN_ID_ENV, owner_id
from agent_tui.runtime.process.terminate import Termination, terminate


class ProcessRun:
    """One local command and everything it spawns. See the package docstring."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
        limits: RunLimits | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> None:
        self.run_id = uuid.uuid4().hex
        self.argv = list(argv)
        self.cwd = Path(cwd)
        self.limits = limits or RunLimits()
        self._env = dict(os.environ if env is None else env)
        self._env[RUN_ID_ENV] = self.run_id
        self._env[OWNER_ENV] = owner_id()
        self.capture = OutputCapture(self.limits.head_bytes, self.limits.tail_bytes)
        self.phase = RunPhase.CREATED
        self.pid: int | None = None
        self.ended_by: CancelReason | None = None
        self._hurried = False  # a second Esc: no more grace
        self._listeners: list[Callable[[bytes], None]] = []
        self._throttle: OutputThrottle | None = None
        if on_output is not None:
            self.set_output_sink(on_output)
        self._leader: Leader | None = None
        self._pipe: PipeReader | None = None
        self._cgroup: RunCgroup | None = None
        self._signalled: dict[int, Found] = {}  # members the last whole-run signal reached
        self._in_cgroup_at_kill: int | None = None
        self._limit_hits: list[LimitHit] = []
        self._ending: asyncio.Task[RunResult] | None = None
        self._started_wall = 0.0
        self._sessions: set[int] = set()  # the run's session and those its escapees made

    # -- output listeners ---------------------------------------------------------

    def add_listener(self, fn: Callable[[bytes], None]) -> None:
        """Call ``fn(chunk)`` for every chunk of output from now on (on the loop)."""
        self._listeners.append(fn)

    def remove_listener(self, fn: Callable[[bytes], None]) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def set_output_sink(self, emit: Callable[[str], None] | None) -> None:
        """Stream output as text to ``emit``, coalesced (or stop streaming with None)."""
        if self._throttle is not None:
            self._throttle.flush()
            self.remove_listener(self._throttle.feed)
            self._throttle = None
        if emit is not None:
            limits = self.limits
            self._throttle = OutputThrottle(emit, limits.emit_interval_s, limits.emit_max_bytes)
            self.add_listener(self._throttle.feed)

    # -- state --------------------------------------------------------------------

    @property
    def leader_exited(self) -> bool:
        return self._leader is not None and self._leader.reaped

    @property
    def finished(self) -> bool:
        return self.phase is RunPhase.FINISHED

    @property
    def result(self) -> RunResult | None:
        task = self._ending
        if task is not None and task.done() and not task.cancelled() and not task.exception():
            return task.result()
        return None

    # -- start --------------------------------------------------------------------

    async def start(self) -> None:
        """Spawn the command. Raises OSError if it cannot be started."""
        if self.phase is not RunPhase.CREATED:
            raise RuntimeError("a ProcessRun starts once")
        loop = asyncio.get_running_loop()
        enable_subreaper()
        argv, env = self.argv, self._env
        tree = cgroup_tree()
        if tree is not None:
            # Its own cgroup, entered before its program runs: nothing it spawns is
            # born outside. OSError (no cgroup could be made) fails the start.
            self._cgroup = RunCgroup(tree, f"run-{self.run_id}", pids=self.limits.pids,
                                     memory=self.limits.memory)
            env = dict(env)
            try:
                argv = self._cgroup.wrap(argv, env, self.cwd)
            except OSError:
                self._cgroup.remove()
                raise
        read_fd, write_fd = open_pipe()
        try:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                cwd=self.cwd,
                env=env,
                start_new_session=True,  # its own session and group; the agent is never in it
                close_fds=True,
            )
        except BaseException:
            os.close(read_fd)
            if self._cgroup is not None:
                self._cgroup.remove()
            raise
        finally:
            os.close(write_fd)  # only the child's copies remain: EOF means they all closed
        self._leader = Leader(popen, loop)
        self.pid = popen.pid
        self._started_wall = time.time() - 1.0  # create_time granularity is coarse
        self._sessions.add(self.pid)
        self.phase = RunPhase.RUNNING
        register(self.run_id, self)
        self._pipe = PipeReader(read_fd, loop, self._on_data, self._on_pipe_closed)

    def _on_data(self, data: bytes) -> None:
        self.capture.feed(data)
        for fn in list(self._listeners):
            try:
                fn(data)
            except Exception:  # noqa: BLE001 - a listener must not stop the reading
                pass

    def _on_pipe_closed(self) -> None:
        if self._throttle is not None:
            self._throttle.flush()

    # -- waiting ------------------------------------------------------------------

    async def wait(self, scope: CancelScope | None = None) -> CancelReason | None:
        """Wait for the leader to exit (None) or for ``scope`` to be cancelled (its reason).

        An exit that races the cancel and wins is returned as the exit it is.
        """
        assert self._leader is not None, "start() first"
        exited = self._leader.exited
        if exited.done():
            return None
        if scope is None:
            await asyncio.shield(exited)
            return None
        if scope.cancelled:  # cancel point: before we wait at all
            return scope.reason
        stop = asyncio.ensure_future(scope.wait())
        try:
            waits: set[asyncio.Future[Any]] = {exited, stop}
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        return None if exited.done() else scope.reason

    # -- ending -------------------------------------------------------------------

    async def stop(self, reason: CancelReason) -> RunResult:
        """End the run: TERM, grace, KILL, drain, sweep. Idempotent; always returns."""
        if self._ending is None:
            if not self.leader_exited:
                self.ended_by = reason
            self._ending = asyncio.ensure_future(self._end(stopping=not self.leader_exited))
        return await asyncio.shield(self._ending)

    async def finish(self) -> RunResult:
        """After a natural exit: drain the pipe, end leftovers, return the result."""
        assert self._leader is not None
        await asyncio.shield(self._leader.exited)
        if self._ending is None:
            self._ending = asyncio.ensure_future(self._end(stopping=False))
        return await asyncio.shield(self._ending)

    async def _end(self, *, stopping: bool) -> RunResult:
        """The cleanup: stop the tree (if asked), drain the pipe, sweep, record."""
        assert self._pipe is not None
        t0 = time.monotonic()
        cleanup = Cleanup(grace_s=self.limits.grace_s, drain_s=self.limits.drain_s)
        terms: list[Termination] = []
        try:
            if stopping:
                self.phase = RunPhase.STOPPING
                terms.append(await self._terminate())
            else:
                self.phase = RunPhase.FINISHING
            await self._drain(cleanup)
            # Leftovers: whatever of the run still exists now that the leader is gone.
            terms.append(await self._terminate())
            terms[-1].residue += await self._sweep_late_orphans()
        except BaseException:
            self.kill_now()  # cleanup itself failed or was cut short: leave nothing running
            raise
        finally:
            self._pipe.close(eof=False)
            unregister(self.run_id)
            if self._cgroup is not None:
                self._limit_hits = self._cgroup.limit_hits()
                self._cgroup.remove()
        self.phase = RunPhase.FINISHED
        return self._record(cleanup, terms, t0)

    async def _terminate(self) -> Termination:
        return await terminate(self, self.limits.grace_s, self.limits.kill_confirm_s,
                               lambda: self._hurried)

    def hurry(self) -> None:
        """The grace is over now (a second Esc): a stop that waits in it sends SIGKILL
        at its next look (every poll), from any thread."""
        self._hurried = True

    async def _drain(self, cleanup: Cleanup) -> None:
        """Give output in flight ``drain_s`` to arrive; then name who holds the pipe."""
        assert self._pipe is not None
        start = time.monotonic()
        if not self._pipe.eof.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._pipe.eof), self.limits.drain_s)
            except TimeoutError:
                cleanup.pipe_holders = await asyncio.to_thread(_pipe_holders, self._pipe.inode)
                self._pipe.close(eof=False)
        cleanup.drain_waited_s = round(time.monotonic() - start, 3)

    async def _sweep_late_orphans(self) -> list[Found]:
        """Late forks that slipped past the last scan: reaped, or killed and reaped."""
        deadline = time.monotonic() + self.limits.kill_confirm_s
        late = self._reap_session_orphans()
        while late and time.monotonic() < deadline:
            await asyncio.sleep(POLL_S)
            late = self._reap_session_orphans()
        return late

    def _record(self, cleanup: Cleanup, terms: list[Termination], t0: float) -> RunResult:
        assert self._leader is not None and self._pipe is not None
        leader = self._leader
        residue: list[Residue] = []
        for term in terms:
            residue += [f.residue() for f in term.residue
                        if f.residue() not in residue and not is_gone(f.proc, reap=False)]
            if term.escalation is not Escalation.NONE:
                if cleanup.escalation is not Escalation.KILL:
                    cleanup.escalation = term.escalation
                if cleanup.grace_used_s is None:
                    cleanup.grace_used_s = term.grace_used_s
            cleanup.ended += [f.residue() for f in term.ended if f.residue() not in cleanup.ended]
        if not leader.reaped:
            residue.insert(0, Residue(pid=leader.pid, cmdline=" ".join(self.argv)))
        cleanup.process_exited = leader.reaped and leader.status is not None
        cleanup.output_complete = self._pipe.complete
        inode = self._pipe.inode
        cleanup.descriptors_released = self._pipe.complete or not any(
            _holds(h.pid, inode) for h in cleanup.pipe_holders
        )
        cleanup.cleanup_s = round(time.monotonic() - t0, 3)
        if self._cgroup is not None:
            cleanup.cgroup = str(self._cgroup.v2)
            cleanup.in_cgroup_at_kill = self._in_cgroup_at_kill
        exit_code, sig = leader.decode()
        end = leader.ended or time.monotonic()
        return RunResult(
            run_id=self.run_id,
            pid=leader.pid,
            exit_code=exit_code,
            signal=sig,
            ended_by=self.ended_by,
            duration_s=round(end - leader.started, 3),
            output=self.capture.text(),
            output_bytes=self.capture.total_bytes,
            dropped_bytes=self.capture.dropped_bytes,
            cleanup=cleanup,
            residue=residue,
            limit_hits=self._limit_hits,
        )

    # -- the run as a terminate.Target ------------------------------------------

    def members(self) -> list[Found]:
        """Every process of the run besides the leader: its cgroup's, or else those
        tagged, in its group, or below. Called in a worker thread by the escalation."""
        assert self.pid is not None
        if self._cgroup is not None:
            # Those the whole-run signal reached count too, though they may be gone.
            found_by_pid = dict(self._signalled)
            for pid in self._cgroup.pids():
                if pid not in found_by_pid and (f := found_pid(pid)) is not None:
                    found_by_pid[pid] = f
            found = [f for pid, f in sorted(found_by_pid.items()) if pid != self.pid]
        else:
            leader_alive = not self.leader_exited
            found = scan(
                RUN_ID_ENV,
                self.run_id,
                leader=self.pid,
                leader_alive=leader_alive,
                # While the leader is unreaped its PID (= the group id) cannot be reused.
                group=self.pid if leader_alive else None,
            )
        for f in found:
            try:
                self._sessions.add(os.getsid(f.pid))
            except OSError:
                pass
        return found

    def signal_whole(self, sig: int) -> bool:
        """The group; and in a cgroup, every process in it (TERM) or ``cgroup.kill``."""
        sent = self.signal_group(sig)
        cell = self._cgroup
        if cell is None:
            return sent
        found = [f for f in map(found_pid, cell.pids()) if f is not None]
        self._signalled = {f.pid: f for f in found}
        if sig == signal.SIGKILL:
            if found:
                self._in_cgroup_at_kill = len(found)
                self._progress(f"[{len(found)} process(es) still in the command's cgroup: "
                               "cgroup.kill]")
            return cell.kill() or sent
        for f in found:
            send(f, sig)
        return sent or bool(found)

    def covered(self, found: Found) -> bool:
        """A member the whole-run signal reached: in the cgroup's list when it was
        sent, or in the leader's group (signalled only while the leader is unreaped,
        so the group is still the run's)."""
        if found.pid in self._signalled:
            return True
        try:
            return os.getpgid(found.pid) == self.pid
        except OSError:
            return False

    def whole_gone(self) -> bool:
        """The leader reaped, and (in a cgroup) the kernel says nothing of it runs."""
        return self.leader_exited and (self._cgroup is None or not self._cgroup.populated())

    def member_gone(self, found: Found) -> bool:
        return is_gone(found.proc)

    def _reap_session_orphans(self) -> list[Found]:
        """Our children left in the run's cgroup or sessions: reap the dead, SIGKILL
        the living.

        Catches what forked between the last scan and the KILL and then reparented to
        us. Runs on the loop thread, so no new run can register a reused PID meanwhile.
        """
        import psutil
        me = os.getpid()
        others = {run.pid for run in live_runs() if run is not self}
        living = []
        try:
            kids = psutil.Process(me).children()
        except psutil.Error:
            return []
        for kid in kids:
            try:
                if kid.pid in others or kid.create_time() < self._started_wall:
                    continue
                if self._cgroup is not None and self._cgroup.holds(kid.pid):
                    pass
                elif os.getsid(kid.pid) not in self._sessions:
                    continue
            except (OSError, psutil.Error):
                continue
            found = Found(kid, cmdline_of(kid))
            if not is_gone(kid):  # is_gone reaps a zombie child
                send(found, signal.SIGKILL)
                living.append(found)
        return living

    def _progress(self, text: str) -> None:
        """A line for whoever watches the output (not part of the captured output)."""
        if self._throttle is not None:
            self._throttle.note(text + "\n")

    # -- last resort --------------------------------------------------------------

    def kill_now(self) -> None:
        """SIGKILL the run's group at once, from any thread (no waiting, no reaping)."""
        self.signal_group(signal.SIGKILL)

    def signal_group(self, sig: int) -> bool:
        """Signal the run's process group, only while the leader is unreaped (so the
        group id is still ours). Thread-safe. True if the signal was sent."""
        return self._leader is not None and self._leader.signal_group(sig)

