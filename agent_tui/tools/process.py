"""The run unit for local commands: every local process starts, stops and is cleaned up here.

A :class:`ProcessRun` owns one command and everything it spawns:

- **Start.** The command runs in a new session (so its own process group, the agent
  never in it), stdin from /dev/null, stdout and stderr merged into one pipe we read.
  Every process of the run inherits a tag in its environment (``AGENT_TUI_RUN_ID``,
  ``AGENT_TUI_OWNER``), and the agent is made a child subreaper (Linux), so a
  descendant that leaves the group (setsid, double fork) still reparents to us and can
  be found by its tag.
- **Wait.** ``wait(scope)`` returns when the leader exits or the scope is cancelled.
  The leader's exit is confirmed by reaping it (pidfd), never assumed from a signal.
- **Stop.** ``stop(reason)``: SIGTERM to the group and to every tagged escapee, a
  bounded grace, SIGKILL to what is left, reaping confirms each end; then the pipe is
  drained for a bounded time (Go's ``WaitDelay``), a descendant still holding it is
  named, our end is closed, and a last sweep ends leftovers. What cannot be ended is
  *residue*, reported by PID and command line.
- **Finish.** ``finish()`` after a natural exit: the same drain and leftover sweep.
- **Output.** Bounded in memory whatever the command prints: head and tail are kept,
  the middle is counted; listeners see every chunk as it comes.

Reaping rule: we only ``waitpid`` PIDs we spawned (the leaders) or found tagged as
ours (orphans reparented to us by the subreaper). Never ``waitpid(-1)``: asyncio's
child watcher (3.11: ThreadedChildWatcher, which waits per PID) and anything else in
the agent keep their children's exit statuses.

``kill_all_runs()`` is the synchronous last resort for atexit and signal handlers.
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import fcntl
import os
import re
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path

import psutil
from pydantic import BaseModel, ConfigDict

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.core.tool import Residue

RUN_ID_ENV = "AGENT_TUI_RUN_ID"
OWNER_ENV = "AGENT_TUI_OWNER"
#: One value per agent process: every run of ours carries it, so ``kill_all_runs``
#: finds them all, even those whose ProcessRun object is gone.
OWNER_ID = uuid.uuid4().hex

DEFAULT_GRACE_S = 2.0
DEFAULT_DRAIN_S = 0.5

_READ_CHUNK = 1 << 20
_PIPE_SIZE = 1 << 20  # a bigger pipe means fewer wake-ups under a flood
_POLL_S = 0.02
_F_SETPIPE_SZ = 1031
_PR_SET_CHILD_SUBREAPER = 36


# ----------------------------------------------------------------------------- limits


class RunLimits(BaseModel):
    """The bounds of one run. grace + kill_confirm + drain must fit the core's budget."""

    model_config = ConfigDict(frozen=True)

    grace_s: float = DEFAULT_GRACE_S  # SIGTERM -> SIGKILL
    kill_confirm_s: float = 1.0  # after SIGKILL, how long before it is called residue
    drain_s: float = DEFAULT_DRAIN_S  # after the leader is gone, how long the pipe may stay open
    head_bytes: int = 32 * 1024
    tail_bytes: int = 32 * 1024
    emit_interval_s: float = 0.05  # at most one output event per interval
    emit_max_bytes: int = 16 * 1024  # at most this much text per output event


# ----------------------------------------------------------------------------- output


_ANSI = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC ... BEL/ST (titles, hyperlinks)
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI (colours, cursor moves)
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
)


def _collapse_overwrites(line: str) -> str:
    r"""Keep what a carriage return left visible: "10%\r50%\r100%" reads "100%"."""
    if "\r" not in line:
        return line
    ending = "\r" if line.endswith("\r") else ""  # the \r of a \r\n line ending
    return line[: len(line) - len(ending)].rsplit("\r", 1)[-1] + ending


def strip_ansi(text: str) -> str:
    """Terminal escapes out, carriage-return overwrites collapsed: what a reader sees.

    Linear in the text (no backtracking regex over long lines: floods are common here).
    """
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = "\n".join(_collapse_overwrites(line) for line in text.split("\n"))
    return text


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class OutputCapture:
    """Head and tail of a byte stream in bounded memory; the middle is only counted."""

    def __init__(self, head_bytes: int, tail_bytes: int) -> None:
        self._head_max = head_bytes
        self._tail_max = tail_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self.total_bytes = 0

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        room = self._head_max - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        if len(data) >= self._tail_max:
            self._tail = bytearray(data[-self._tail_max :])
        else:
            self._tail += data
            excess = len(self._tail) - self._tail_max
            if excess > 0:
                del self._tail[:excess]

    @property
    def dropped_bytes(self) -> int:
        return self.total_bytes - len(self._head) - len(self._tail)

    def text(self) -> str:
        """The model view: ANSI stripped, the dropped middle marked with its size."""
        head = strip_ansi(_decode(bytes(self._head)))
        if not self._tail:
            return head
        tail = strip_ansi(_decode(bytes(self._tail)))
        dropped = self.dropped_bytes
        if dropped:
            return f"{head}\n[... {dropped} bytes of output omitted ...]\n{tail}"
        return head + tail


class OutputThrottle:
    """Coalesces output for the UI: one call per interval at most, each bounded.

    Under a flood the UI sees the newest text of each interval and a note of how much
    was skipped, so it can never be drowned.
    """

    def __init__(self, emit: Callable[[str], None], interval_s: float, max_bytes: int) -> None:
        self._emit = emit
        self._interval = interval_s
        self._max = max_bytes
        self._pending = bytearray()
        self._skipped = 0
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def feed(self, data: bytes) -> None:
        self._pending += data
        excess = len(self._pending) - self._max
        if excess > 0:
            del self._pending[:excess]
            self._skipped += excess
        wait = self._last + self._interval - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending and not self._skipped:
            return
        text = strip_ansi(_decode(bytes(self._pending)))
        if self._skipped:
            text = f"[... {self._skipped} bytes not shown ...]\n{text}"
        self._pending.clear()
        self._skipped = 0
        self._last = time.monotonic()
        try:
            self._emit(text)
        except Exception:  # noqa: BLE001 - a broken sink must not break the run
            pass


# ----------------------------------------------------------------------------- records


class RunPhase(StrEnum):
    CREATED = "created"
    RUNNING = "running"
    STOPPING = "stopping"  # we asked it to end (TERM/KILL), cleanup under way
    FINISHING = "finishing"  # it ended by itself; draining and sweeping leftovers
    FINISHED = "finished"


class Escalation(StrEnum):
    """What we had to send to end the run's processes."""

    NONE = "none"  # nothing had to be signalled
    TERM = "term"  # everything ended within the grace after SIGTERM
    KILL = "kill"  # something outlived the grace and got SIGKILL


class Cleanup(BaseModel):
    """The facts of a run's cleanup. Exited, complete and released are separate facts."""

    grace_s: float
    grace_used_s: float | None = None  # SIGTERM until all ended, or until SIGKILL
    escalation: Escalation = Escalation.NONE
    process_exited: bool = False  # the leader was reaped: its exit status is known
    output_complete: bool = False  # end of file was read: nothing was cut off
    descriptors_released: bool = False  # no process still holds the output pipe
    drain_s: float
    drain_waited_s: float = 0.0
    pipe_holders: list[Residue] = []  # who kept the pipe open after the leader ended
    ended: list[Residue] = []  # processes besides the leader that we ended
    cleanup_s: float = 0.0


class RunResult(BaseModel):
    """How a run ended, in facts."""

    run_id: str
    pid: int
    exit_code: int | None = None
    signal: str | None = None  # the signal that ended the leader, e.g. "SIGKILL"
    ended_by: CancelReason | None = None  # who made us stop it; None: it ended by itself
    duration_s: float
    output: str  # model view: bounded, ANSI stripped
    output_bytes: int
    dropped_bytes: int
    cleanup: Cleanup
    residue: list[Residue] = []

    @property
    def killed(self) -> bool:
        return self.ended_by is not None


# ----------------------------------------------------------------------------- subreaper


_subreaper_state: bool | None = None


def enable_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux). Idempotent."""
    global _subreaper_state
    if _subreaper_state is None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _subreaper_state = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            _subreaper_state = False
    return _subreaper_state


# ----------------------------------------------------------------------------- discovery


class _Found:
    """A process of the run, with its command line captured while it was alive."""

    __slots__ = ("proc", "cmdline")

    def __init__(self, proc: psutil.Process, cmdline: str) -> None:
        self.proc = proc
        self.cmdline = cmdline

    @property
    def pid(self) -> int:
        return self.proc.pid

    def residue(self) -> Residue:
        return Residue(pid=self.proc.pid, cmdline=self.cmdline)


def _cmdline(proc: psutil.Process) -> str:
    try:
        return " ".join(proc.cmdline()) or f"[{proc.name()}]"
    except psutil.Error:
        return "?"


def _tag_matches(proc: psutil.Process, key: str, value: str) -> bool:
    try:
        return proc.environ().get(key) == value
    except psutil.Error:
        return False  # gone, a zombie, or not ours to read


def _scan(
    key: str, value: str, *, leader: int | None, leader_alive: bool, group: int | None
) -> list[_Found]:
    """Every process of a run: tagged, in its process group, or descended from either.

    ``group`` is only given while the leader is unreaped: then the group id cannot
    have been reused by someone else. The leader itself is never returned.
    """
    me = os.getpid()
    procs: dict[int, psutil.Process] = {}
    children: dict[int, list[int]] = {}
    roots: set[int] = set()
    for pid in psutil.pids():
        if pid == me or pid == leader:
            if pid == leader and leader_alive:
                roots.add(pid)
            continue
        try:
            proc = psutil.Process(pid)
            ppid = proc.ppid()
        except psutil.Error:
            continue
        procs[pid] = proc
        children.setdefault(ppid, []).append(pid)
        if _tag_matches(proc, key, value):
            roots.add(pid)
        elif group is not None:
            try:
                if os.getpgid(pid) == group:
                    roots.add(pid)
            except OSError:
                pass
    # Descendants that dropped the tag (env -i) still belong to whoever spawned them.
    ours: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in ours:
            continue
        ours.add(pid)
        todo.extend(children.get(pid, ()))
    ours.discard(leader if leader is not None else -1)
    ours.discard(me)
    return [_Found(procs[pid], _cmdline(procs[pid])) for pid in sorted(ours) if pid in procs]


def _gone(found: _Found, *, reap: bool = True) -> bool:
    """True once the process no longer runs. Reaps it if it was reparented to us.

    ``reap=False`` for a run's leader: its status belongs to the run's own watcher.
    """
    proc = found.proc
    try:
        if not proc.is_running():
            return True
        if proc.status() != psutil.STATUS_ZOMBIE:
            return False
        if not reap or proc.ppid() != os.getpid():
            return True  # not running; whoever owns its status collects it
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False
    # A tagged orphan that reparented to us (subreaper): its status is ours to collect.
    try:
        os.waitpid(proc.pid, os.WNOHANG)
    except ChildProcessError:
        pass
    return True


def _send(found: _Found, sig: int) -> None:
    try:
        found.proc.send_signal(sig)  # psutil checks the PID was not reused
        if sig == signal.SIGTERM:
            found.proc.send_signal(signal.SIGCONT)  # a stopped process cannot act on TERM
    except psutil.Error:
        pass


def _pipe_holders(inode: int) -> list[Residue]:
    """Processes (other than us) with a descriptor on the pipe ``inode``."""
    me = os.getpid()
    holders: list[Residue] = []
    for pid in psutil.pids():
        if pid != me and _holds(pid, inode):
            try:
                holders.append(Residue(pid=pid, cmdline=_cmdline(psutil.Process(pid))))
            except psutil.Error:
                pass
    return holders


# ----------------------------------------------------------------------------- the run


class _Termination(BaseModel):
    escalation: Escalation = Escalation.NONE
    grace_used_s: float | None = None
    ended: list[Residue] = []
    residue: list[Residue] = []


_LIVE: dict[str, ProcessRun] = {}
_LIVE_LOCK = threading.Lock()
_atexit_installed = False


class ProcessRun:
    """One local command and everything it spawns. See the module docstring."""

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
        assert self._read_fd is not None
        for _ in range(4):  # a few reads per wake-up, then let others run
            try:
                data = os.read(self._read_fd, _READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._close_pipe(eof=True)
                return
            self.capture.feed(data)
            for fn in list(self._listeners):
                try:
                    fn(data)
                except Exception:  # noqa: BLE001 - a listener must not stop the reading
                    pass

    def _close_pipe(self, *, eof: bool) -> None:
        fd, self._read_fd = self._read_fd, None
        if fd is None:
            return
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


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _holds(pid: int, inode: int) -> bool:
    """Whether ``pid`` has a descriptor on the pipe ``inode``."""
    target = f"pipe:[{inode}]"
    fd_dir = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"{fd_dir}/{fd}") == target:
                return True
        except OSError:
            continue
    return False


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


def processes_of_owner(owner_id: str) -> list[Residue]:
    """Processes tagged by another agent process (``owner_id``) and their descendants:
    what an agent that crashed or was killed left running."""
    return [f.residue() for f in _scan(OWNER_ENV, owner_id, leader=None, leader_alive=False,
                                       group=None)]


def live_runs() -> list[ProcessRun]:
    """Runs started and not yet cleaned up."""
    with _LIVE_LOCK:
        return list(_LIVE.values())


def kill_all_runs(grace_s: float = 0.0) -> list[Residue]:
    """End every process of ours now, synchronously: for atexit and signal handlers.

    SIGTERM first when ``grace_s`` > 0, then SIGKILL. Runs are found by the owner tag,
    so escapees of runs whose objects are gone are ended too. Returns the residue.
    """

    def sweep(sig: int) -> list[_Found]:
        for run in live_runs():
            run.signal_group(sig)
        found = _scan(OWNER_ENV, OWNER_ID, leader=None, leader_alive=False, group=None)
        for f in found:
            _send(f, sig)
        return found

    def wait_gone(procs: list[_Found], seconds: float) -> list[_Found]:
        leaders = {run.pid for run in live_runs()}  # their runs reap them, not us
        deadline = time.monotonic() + seconds
        while True:
            procs = [f for f in procs if not _gone(f, reap=f.pid not in leaders)]
            if not procs or time.monotonic() >= deadline:
                return procs
            time.sleep(_POLL_S)

    alive: list[_Found] = []
    if grace_s > 0:
        alive = wait_gone(sweep(signal.SIGTERM), grace_s)
    seen = {f.pid for f in alive}
    alive += [f for f in sweep(signal.SIGKILL) if f.pid not in seen]  # a rescan: late forks too
    return [f.residue() for f in wait_gone(alive, 1.0)]


def _install_atexit() -> None:
    global _atexit_installed
    if not _atexit_installed:
        _atexit_installed = True
        atexit.register(kill_all_runs)


__all__ = [
    "processes_of_owner",
    "DEFAULT_DRAIN_S",
    "DEFAULT_GRACE_S",
    "OWNER_ENV",
    "RUN_ID_ENV",
    "Cleanup",
    "Escalation",
    "OutputCapture",
    "OutputThrottle",
    "ProcessRun",
    "RunLimits",
    "RunPhase",
    "RunResult",
    "enable_subreaper",
    "kill_all_runs",
    "live_runs",
    "strip_ansi",
]
