"""The run unit: :class:`ProcessRun`, one local command and everything it spawns.

It starts the command in its own session, reads its output pipe, waits for the leader
(reaped via pidfd), and ends the run: TERM, grace, KILL, bounded drain, leftover sweep.
The lifecycle is described in the package docstring (:mod:`agent_tui.tools.process`).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import psutil
from pydantic import BaseModel

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.core.tool import Residue
from agent_tui.tools.process.discovery import (
    _POLL_S,
    _alive,
    _cmdline,
    _Found,
    _gone,
    _scan,
    _send,
)
from agent_tui.tools.process.limits import RunLimits
from agent_tui.tools.process.output import OutputCapture, OutputThrottle
from agent_tui.tools.process.pipe_holders import _holds, _pipe_holders
from agent_tui.tools.process.records import Cleanup, Escalation, RunPhase, RunResult
from agent_tui.tools.process.registry import _LIVE, _LIVE_LOCK, _install_atexit, live_runs
from agent_tui.tools.process.subreaper import enable_subreaper
from agent_tui.tools.process.tags import OWNER_ENV, OWNER_ID, RUN_ID_ENV

_READ_CHUNK = 1 << 20
# After a wake-up the reader waits before reading again, so the pipe fills meanwhile:
# a flood is read in a few large pieces, not thousands of 8 KB ones (each wake-up is
# Python code competing with the UI for the interpreter). The wait is the time the
# writer, at the rate just seen, takes to half-fill the pipe, at most _READ_PAUSE: a
# fast writer is never blocked on a full pipe, and output shows at most that late.
_READ_PAUSE = 0.005
_MIN_PAUSE = 0.0002
_F_GETPIPE_SZ = 1032
_PIPE_SIZE = 1 << 20  # a bigger pipe means fewer wake-ups under a flood
_F_SETPIPE_SZ = 1031


class _Termination(BaseModel):
    escalation: Escalation = Escalation.NONE
    grace_used_s: float | None = None
    ended: list[Residue] = []
    residue: list[Residue] = []


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
        self._env[OWNER_ENV] = OWNER_ID
        self.capture = OutputCapture(self.limits.head_bytes, self.limits.tail_bytes)
        self.phase = RunPhase.CREATED
        self.pid: int | None = None
        self.ended_by: CancelReason | None = None
        self._listeners: list[Callable[[bytes], None]] = []
        self._throttle: OutputThrottle | None = None
        if on_output is not None:
            self.set_output_sink(on_output)
        self._popen: subprocess.Popen[bytes] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._read_fd: int | None = None
        self._read_resume: asyncio.TimerHandle | None = None
        self._pipe_size = 1 << 16
        self._last_wake = 0.0
        self._pipe_inode: int | None = None
        self._pidfd: int | None = None
        self._status: int | None = None  # raw wait status of the leader
        self._exited: asyncio.Future[None] | None = None
        self._eof: asyncio.Future[None] | None = None
        self._output_complete = False
        self._ending: asyncio.Task[RunResult] | None = None
        self._started = 0.0
        self._leader_ended = 0.0
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
        return self._exited is not None and self._exited.done()

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
        loop = self._loop = asyncio.get_running_loop()
        enable_subreaper()
        _install_atexit()
        read_fd, write_fd = os.pipe()
        try:
            try:
                fcntl.fcntl(write_fd, _F_SETPIPE_SZ, _PIPE_SIZE)
            except OSError:
                pass  # the default size works, only slower under a flood
            self._popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                cwd=self.cwd,
                env=self._env,
                start_new_session=True,  # its own session and group; the agent is never in it
                close_fds=True,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)  # only the child's copies remain: EOF means they all closed
        self.pid = self._popen.pid
        self._started = time.monotonic()
        self._started_wall = time.time() - 1.0  # create_time granularity is coarse
        self._sessions.add(self.pid)
        self.phase = RunPhase.RUNNING
        with _LIVE_LOCK:
            _LIVE[self.run_id] = self
        self._exited = loop.create_future()
        self._eof = loop.create_future()
        self._read_fd = read_fd
        self._pipe_inode = os.fstat(read_fd).st_ino
        try:
            self._pipe_size = fcntl.fcntl(read_fd, _F_GETPIPE_SZ)
        except OSError:
            pass
        self._last_wake = time.monotonic()
        os.set_blocking(read_fd, False)
        loop.add_reader(read_fd, self._on_readable)
        self._watch_exit(loop)

    def _watch_exit(self, loop: asyncio.AbstractEventLoop) -> None:
        assert self.pid is not None
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            # No pidfd: a thread waits for the exit *without* reaping (WNOWAIT), so the
            # loop stays the only place that reaps, and killpg stays safe until then.
            threading.Thread(target=self._wait_thread, daemon=True).start()
        else:
            loop.add_reader(self._pidfd, self._on_leader_exit)

    def _wait_thread(self) -> None:
        assert self.pid is not None and self._loop is not None
        try:
            os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            pass
        try:
            self._loop.call_soon_threadsafe(self._on_leader_exit)
        except RuntimeError:
            pass  # loop closed

    def _on_leader_exit(self) -> None:
        assert self.pid is not None and self._exited is not None
        if self._exited.done():
            return
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, None  # someone else reaped it: the status is lost
        if pid == 0:
            return  # spurious wake-up
        if self._pidfd is not None:
            assert self._loop is not None
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        self._status = status
        if self._popen is not None:
            # Tell Popen it is reaped, or it would waitpid a possibly reused PID later.
            self._popen.returncode = os.waitstatus_to_exitcode(status) if status is not None else -1
        self._leader_ended = time.monotonic()
        self._exited.set_result(None)

    # -- reading ------------------------------------------------------------------

    def _on_readable(self) -> None:
        fd = self._read_fd
        assert fd is not None and self._loop is not None
        got = 0
        for _ in range(4):  # a few reads per wake-up, then let others run
            try:
                data = os.read(fd, _READ_CHUNK)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                self._close_pipe(eof=True)
                return
            got += len(data)
            self.capture.feed(data)
            for fn in list(self._listeners):
                try:
                    fn(data)
                except Exception:  # noqa: BLE001 - a listener must not stop the reading
                    pass
        now = time.monotonic()
        elapsed, self._last_wake = now - self._last_wake, now
        pause = _READ_PAUSE if got * _READ_PAUSE <= elapsed * self._pipe_size / 2 \
            else self._pipe_size / 2 * elapsed / got
        if pause >= _MIN_PAUSE:
            self._loop.remove_reader(fd)
            self._read_resume = self._loop.call_later(pause, self._resume_reading)

    def _resume_reading(self) -> None:
        self._read_resume = None
        if self._read_fd is not None and self._loop is not None:
            self._loop.add_reader(self._read_fd, self._on_readable)

    def _close_pipe(self, *, eof: bool) -> None:
        fd, self._read_fd = self._read_fd, None
        if fd is None:
            return
        if self._read_resume is not None:
            self._read_resume.cancel()
            self._read_resume = None
        assert self._loop is not None and self._eof is not None
        self._loop.remove_reader(fd)
        os.close(fd)
        self._output_complete = eof
        if self._throttle is not None:
            self._throttle.flush()
        if not self._eof.done():
            self._eof.set_result(None)

    # -- waiting ------------------------------------------------------------------

    async def wait(self, scope: CancelScope | None = None) -> CancelReason | None:
        """Wait for the leader to exit (None) or for ``scope`` to be cancelled (its reason).

        An exit that races the cancel and wins is returned as the exit it is.
        """
        assert self._exited is not None, "start() first"
        if self._exited.done():
            return None
        if scope is None:
            await asyncio.shield(self._exited)
            return None
        if scope.cancelled:  # cancel point: before we wait at all
            return scope.reason
        stop = asyncio.ensure_future(scope.wait())
        try:
            await asyncio.wait({self._exited, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        return None if self._exited.done() else scope.reason

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
        assert self._exited is not None
        await asyncio.shield(self._exited)
        if self._ending is None:
            self._ending = asyncio.ensure_future(self._end(stopping=False))
        return await asyncio.shield(self._ending)

    async def _end(self, *, stopping: bool) -> RunResult:
        """The cleanup: stop the tree (if asked), drain the pipe, sweep, record."""
        assert self.pid is not None
        t0 = time.monotonic()
        cleanup = Cleanup(grace_s=self.limits.grace_s, drain_s=self.limits.drain_s)
        terms: list[_Termination] = []
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
            self._close_pipe(eof=False)
            with _LIVE_LOCK:
                _LIVE.pop(self.run_id, None)
        self.phase = RunPhase.FINISHED
        return self._record(cleanup, terms, t0)

    async def _drain(self, cleanup: Cleanup) -> None:
        """Give output in flight ``drain_s`` to arrive; then name who holds the pipe."""
        assert self._eof is not None and self._pipe_inode is not None
        start = time.monotonic()
        if not self._eof.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._eof), self.limits.drain_s)
            except TimeoutError:
                cleanup.pipe_holders = await asyncio.to_thread(_pipe_holders, self._pipe_inode)
                self._close_pipe(eof=False)
        cleanup.drain_waited_s = round(time.monotonic() - start, 3)

    async def _sweep_late_orphans(self) -> list[Residue]:
        """Late forks that slipped past the last scan: reaped, or killed and reaped."""
        deadline = time.monotonic() + self.limits.kill_confirm_s
        late = self._reap_session_orphans()
        while late and time.monotonic() < deadline:
            await asyncio.sleep(_POLL_S)
            late = self._reap_session_orphans()
        return [f.residue() for f in late]

    def _record(self, cleanup: Cleanup, terms: list[_Termination], t0: float) -> RunResult:
        assert self.pid is not None
        residue: list[Residue] = []
        for term in terms:
            residue += [r for r in term.residue if r not in residue and _alive(r.pid)]
            if term.escalation is not Escalation.NONE:
                if cleanup.escalation is not Escalation.KILL:
                    cleanup.escalation = term.escalation
                if cleanup.grace_used_s is None:
                    cleanup.grace_used_s = term.grace_used_s
            cleanup.ended += [r for r in term.ended if r not in cleanup.ended]
        if not self.leader_exited:
            residue.insert(0, Residue(pid=self.pid, cmdline=" ".join(self.argv)))
        cleanup.process_exited = self.leader_exited and self._status is not None
        cleanup.output_complete = self._output_complete
        inode = self._pipe_inode or 0
        cleanup.descriptors_released = self._output_complete or not any(
            _holds(h.pid, inode) for h in cleanup.pipe_holders
        )
        cleanup.cleanup_s = round(time.monotonic() - t0, 3)
        exit_code, sig = _decode_status(self._status)
        end = self._leader_ended or time.monotonic()
        return RunResult(
            run_id=self.run_id,
            pid=self.pid,
            exit_code=exit_code,
            signal=sig,
            ended_by=self.ended_by,
            duration_s=round(end - self._started, 3),
            output=self.capture.text(),
            output_bytes=self.capture.total_bytes,
            dropped_bytes=self.capture.dropped_bytes,
            cleanup=cleanup,
            residue=residue,
        )

    async def _scan(self) -> list[_Found]:
        assert self.pid is not None
        leader_alive = not self.leader_exited
        found = await asyncio.to_thread(
            _scan,
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

    def _reap_session_orphans(self) -> list[_Found]:
        """Our children left in the run's sessions: reap the dead, SIGKILL the living.

        Catches what forked between the last scan and the KILL and then reparented to
        us. Runs on the loop thread, so no new run can register a reused PID meanwhile.
        """
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
                if os.getsid(kid.pid) not in self._sessions:
                    continue
            except (OSError, psutil.Error):
                continue
            found = _Found(kid, _cmdline(kid))
            if not _gone(found):  # _gone reaps a zombie child
                _send(found, signal.SIGKILL)
                living.append(found)
        return living

    def _signal(self, targets: list[_Found], sig: int, *, group_done: bool) -> None:
        """Signal each target, skipping group members that already had it."""
        for found in targets:
            if group_done:
                try:
                    if os.getpgid(found.pid) == self.pid:
                        continue
                except OSError:
                    pass
            _send(found, sig)

    async def _wait_gone(self, targets: list[_Found], deadline: float) -> list[_Found]:
        """Wait until the leader is reaped and all targets are gone; return the rest."""
        while True:
            alive = [f for f in targets if not _gone(f)]
            if not alive and self.leader_exited:
                return []
            if time.monotonic() >= deadline:
                return alive
            await asyncio.sleep(_POLL_S)

    async def _terminate(self) -> _Termination:
        """SIGTERM everything of the run, wait the grace, SIGKILL the rest, confirm."""
        term = _Termination()
        t0 = time.monotonic()
        # The group first, before any scan: cancel is a signal, not a wait.
        group_termed = self.signal_group(signal.SIGTERM)
        targets = await self._scan()
        if not targets and not group_termed:
            return term  # nothing of the run was left
        self._signal(targets, signal.SIGTERM, group_done=group_termed)
        term.escalation = Escalation.TERM
        alive = await self._wait_gone(targets, t0 + self.limits.grace_s)
        if not alive and self.leader_exited:
            term.grace_used_s = round(time.monotonic() - t0, 3)
            term.ended = [f.residue() for f in targets]
            return term
        # Grace is over. Rescan: the tree may have forked while it was "stopping".
        term.escalation = Escalation.KILL
        term.grace_used_s = self.limits.grace_s
        seen = {f.pid for f in targets}
        targets += [f for f in await self._scan() if f.pid not in seen]
        group_killed = self.signal_group(signal.SIGKILL)
        self._signal(targets, signal.SIGKILL, group_done=group_killed)
        alive = await self._wait_gone(targets, time.monotonic() + self.limits.kill_confirm_s)
        alive_pids = {f.pid for f in alive}
        term.ended = [f.residue() for f in targets if f.pid not in alive_pids]
        term.residue = [f.residue() for f in alive]
        return term

    # -- last resort --------------------------------------------------------------

    def kill_now(self) -> None:
        """SIGKILL the run's group at once, from any thread (no waiting, no reaping)."""
        self.signal_group(signal.SIGKILL)

    def signal_group(self, sig: int) -> bool:
        """Signal the run's process group, only while the leader is unreaped (so the
        group id is still ours). Thread-safe. True if the signal was sent."""
        if self.pid is None or self.leader_exited:
            return False
        try:
            os.killpg(self.pid, sig)
            if sig == signal.SIGTERM:
                os.killpg(self.pid, signal.SIGCONT)  # a stopped process cannot act on TERM
        except OSError:
            return False
        return True


def _decode_status(status: int | None) -> tuple[int | None, str | None]:
    if status is None:
        return None, None
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            return None, signal.Signals(sig).name
        except ValueError:
            return None, f"signal {sig}"
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status), None
    return None, None
