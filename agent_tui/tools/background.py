"""Background commands: the registry of jobs and the tools that read and end them.

A background job is a :class:`~agent_tui.runtime.process.ProcessRun` under the registry's
own cancel scope, not under any turn: Esc does not stop it. The model reads its new
output with ``bash_output`` and ends it with ``kill_shell``; the UI uses the same
registry (``jobs()``, ``peek()``, ``kill()``, ``on_change``). ``shutdown()`` ends every
job with the run unit's usual escalation when the app quits.

A foreground command can be moved here while it runs (``adopt``): the process keeps
running, only its owner changes.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import asyncio
import itertools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum

from pydantic import Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.core.calls.tool import Residue, Tool, ToolContext, ToolResult
from agent_tui.runtime.process import OutputCapture, ProcessRun, RunLimits, RunResult

_UNREAD_BYTES = 16 * 1024  # head and tail each of the output not yet read by the model


class JobState(StrEnum):
    RUNNING = "running"
    EXITED = "exited"  # ended by itself (any exit code or signal not ours)
    KILLED = "killed"  # we ended it: kill_shell, a timeout or shutdown


class RegistryState(StrEnum):
    OPEN = "open"
    SHUTTING_DOWN = "shutting_down"
    CLOSED = "closed"


class JobInfo(DeferredModel):
    """What the UI and the model may know about a background job."""

    shell_id: str
    command: str
    state: JobState
    pid: int | None
    started_at: float  # wall clock, seconds
    exit_code: int | None = None
    signal: str | None = None
    ended_by: CancelReason | None = None
    residue: list[Residue] = []
    result: RunResult | None = None  # the run's full record once it ended
    tool_use_id: str | None = None  # the call that started it


class JobOutput(DeferredModel):
    """Output since the last read, and the job's state at the time of reading."""

    info: JobInfo
    text: str
    new_bytes: int
    dropped_bytes: int


class UnknownShell(KeyError):
    def __str__(self) -> str:
        return f"no background shell with id {self.args[0]!r}"


class _Job:
    def __init__(self, shell_id: str, command: str, run: ProcessRun, scope: CancelScope) -> None:
        self.shell_id = shell_id
        self.command = command
        self.run = run
        self.scope = scope
        self.state = JobState.RUNNING
        self.started_at = time.time()
        self.result: RunResult | None = None
        self.unread = OutputCapture(_UNREAD_BYTES, _UNREAD_BYTES)
        self.supervisor: asyncio.Task[None] | None = None
        self.on_end: Callable[[str], None] | None = None  # told the shell id once it ended
        self.tool_use_id: str | None = None

    def feed(self, data: bytes) -> None:
        self.unread.feed(data)

    def info(self) -> JobInfo:
        result = self.result
        return JobInfo(
            shell_id=self.shell_id,
            command=self.command,
            state=self.state,
            pid=self.run.pid,
            started_at=self.started_at,
            exit_code=result.exit_code if result else None,
            signal=result.signal if result else None,
            ended_by=result.ended_by if result else None,
            residue=result.residue if result else [],
            result=result,
            tool_use_id=self.tool_use_id,
        )


class BackgroundJobs:
    """The background jobs of a session, by shell id."""

    def __init__(
        self,
        limits: RunLimits | None = None,
        on_change: Callable[[JobInfo], None] | None = None,
    ) -> None:
        self.limits = limits or RunLimits()
        self.on_change = on_change
        self.state = RegistryState.OPEN
        self._root = CancelScope("background")  # not under any turn: Esc does not reach it
        self._jobs: dict[str, _Job] = {}
        self._ids = itertools.count(1)

    # -- starting -----------------------------------------------------------------

    async def start(
        self,
        argv: Sequence[str],
        *,
        command: str,
        cwd: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
        on_end: Callable[[str], None] | None = None,
        tool_use_id: str | None = None,
    ) -> str:
        """Start ``argv`` as a background job; returns its shell id at once. ``on_end``
        is called with it when the job has ended."""
        self._check_open()
        run = ProcessRun(argv, cwd=cwd, env=env, limits=self.limits)
        job = self._register(run, command, timeout_s, on_end)
        job.tool_use_id = tool_use_id
        run.add_listener(job.feed)  # before start: not a byte is missed
        try:
            await run.start()
        except BaseException:
            self._jobs.pop(job.shell_id, None)
            job.scope.detach()
            raise
        job.started_at = time.time()
        job.supervisor = asyncio.ensure_future(self._supervise(job))
        self._notify(job)
        return job.shell_id

    def adopt(
        self, run: ProcessRun, command: str, timeout_s: float | None = None,
        on_end: Callable[[str], None] | None = None, tool_use_id: str | None = None,
    ) -> str:
        """Take over a running foreground run (send-now). Returns its shell id.

        The run keeps running; output from now on is unread for the model.
        """
        self._check_open()
        job = self._register(run, command, timeout_s, on_end)
        job.tool_use_id = tool_use_id
        run.add_listener(job.feed)
        job.supervisor = asyncio.ensure_future(self._supervise(job))
        self._notify(job)
        return job.shell_id

    def _register(
        self, run: ProcessRun, command: str, timeout_s: float | None,
        on_end: Callable[[str], None] | None,
    ) -> _Job:
        shell_id = f"shell_{next(self._ids)}"
        job = _Job(shell_id, command, run, self._root.child(shell_id))
        job.on_end = on_end
        if timeout_s is not None:
            job.scope.cancel_after(timeout_s)
        self._jobs[shell_id] = job
        return job

    def _check_open(self) -> None:
        if self.state is not RegistryState.OPEN:
            raise RuntimeError("background jobs are shutting down: no new job can start")

    async def _supervise(self, job: _Job) -> None:
        try:
            reason = await job.run.wait(job.scope)  # cancel point: kill, timeout, shutdown
            if reason is None:
                job.result = await job.run.finish()
            else:
                job.result = await job.run.stop(reason)
        except BaseException:
            job.run.kill_now()  # the loop is going away, or cleanup broke: leave nothing running
            job.state = JobState.KILLED
            self._notify(job)
            raise
        finally:
            job.scope.detach()
            if job.on_end is not None:
                try:
                    job.on_end(job.shell_id)
                except Exception:  # noqa: BLE001 - the caller's trouble must not break a job
                    pass
        job.state = JobState.KILLED if job.result.ended_by is not None else JobState.EXITED
        self._notify(job)

    def _notify(self, job: _Job) -> None:
        if self.on_change is not None:
            try:
                self.on_change(job.info())
            except Exception:  # noqa: BLE001 - the UI's trouble must not break a job
                pass

    # -- reading ------------------------------------------------------------------

    def _job(self, shell_id: str) -> _Job:
        try:
            return self._jobs[shell_id]
        except KeyError:
            raise UnknownShell(shell_id) from None

    def jobs(self) -> list[JobInfo]:
        return [job.info() for job in self._jobs.values()]

    def info(self, shell_id: str) -> JobInfo:
        return self._job(shell_id).info()

    def read_new(self, shell_id: str) -> JobOutput:
        """Output since the last read (bounded: head and tail), and the state now."""
        job = self._job(shell_id)
        unread, job.unread = job.unread, OutputCapture(_UNREAD_BYTES, _UNREAD_BYTES)
        return JobOutput(
            info=job.info(),
            text=unread.text(),
            new_bytes=unread.total_bytes,
            dropped_bytes=unread.dropped_bytes,
        )

    def peek(self, shell_id: str) -> str:
        """The job's whole output so far (head and tail), without moving the model's cursor."""
        return self._job(shell_id).run.capture.text()

    # -- ending -------------------------------------------------------------------

    def request_kill(
        self, shell_id: str, reason: CancelReason = CancelReason.USER_INTERRUPT
    ) -> None:
        """Ask a job to end, from any thread (the UI's); ``on_change`` tells when it has."""
        self._job(shell_id).scope.cancel(reason)

    def request_stop(self, job_id: str) -> bool:
        """The session's way to stop a job by id (the UI's kill): False if not ours."""
        if job_id not in self._jobs:
            return False
        self.request_kill(job_id, CancelReason.USER_INTERRUPT)
        return True

    async def kill(
        self, shell_id: str, reason: CancelReason = CancelReason.USER_INTERRUPT
    ) -> JobInfo:
        """End one job (TERM, grace, KILL) and return how it ended."""
        job = self._job(shell_id)
        job.scope.cancel(reason)
        if job.supervisor is not None:
            await asyncio.shield(job.supervisor)
        return job.info()

    async def shutdown(self) -> None:
        """End every job, with the same escalation, and accept no new ones."""
        if self.state is RegistryState.CLOSED:
            return
        self.state = RegistryState.SHUTTING_DOWN
        self._root.cancel(CancelReason.SHUTDOWN)
        supervisors = [j.supervisor for j in self._jobs.values() if j.supervisor is not None]
        if supervisors:
            await asyncio.gather(*(asyncio.shield(s) for s in supervisors), return_exceptions=True)
        self.state = RegistryState.CLOSED


# ----------------------------------------------------------------------------- tools


def describe_job(info: JobInfo) -> str:
    """One line: the job's state in words."""
    head = f"{info.shell_id} ({info.command})"
    if info.state is JobState.RUNNING:
        return f"{head}: running, pid {info.pid}"
    if info.state is JobState.KILLED:
        how = info.signal or (f"exit code {info.exit_code}" if info.exit_code is not None else "")
        why = {
            CancelReason.TIMEOUT: "by its timeout",
            CancelReason.SHUTDOWN: "at shutdown",
        }.get(info.ended_by or CancelReason.USER_INTERRUPT, "on request")
        return f"{head}: killed {why}" + (f" ({how})" if how else "")
    if info.signal:
        return f"{head}: exited on signal {info.signal}"
    return f"{head}: exited with code {info.exit_code}"


class ShellIdInput(DeferredModel):
    shell_id: str = Field(description="The id a background bash command was given, e.g. shell_1")


class BashOutputTool(Tool[ShellIdInput]):
    name = "bash_output"
    claude_name = "BashOutput"
    claude_keys = {"shell_id": "bash_id"}
    acp_kind = "read"
    description = (
        "Read what a background bash command (run_in_background) printed since the last "
        "read, and its state: running, exited (with its exit code) or killed. Each "
        "read returns only new output; long output keeps its beginning and end. Check "
        "a server's startup output here before you rely on it."
    )
    Input = ShellIdInput
    read_only = True

    def __init__(self, jobs: BackgroundJobs) -> None:
        self.jobs = jobs

    async def run(self, args: ShellIdInput, ctx: ToolContext) -> ToolResult:
        try:
            out = self.jobs.read_new(args.shell_id)
        except UnknownShell as exc:
            return ToolResult.error(str(exc))
        text = out.text if out.new_bytes else "(no new output)"
        if out.dropped_bytes:
            text += f"\n[{out.dropped_bytes} bytes of new output omitted from the middle]"
        info = out.info
        return ToolResult(
            outcome=ToolState.SUCCEEDED,
            content=f"{describe_job(info)}\n{text}",
            exit_code=info.exit_code,
            signal=info.signal,
            details={"shell_id": info.shell_id, "state": info.state, "new_bytes": out.new_bytes},
        )


class KillShellTool(Tool[ShellIdInput]):
    name = "kill_shell"
    claude_name = "KillShell"
    acp_kind = "execute"
    description = (
        "Stop a background bash command by its shell id: SIGTERM to it and everything it "
        "started, then SIGKILL after a short grace. Stop servers and watchers you "
        "started once you no longer need them."
    )
    Input = ShellIdInput
    read_only = False

    def __init__(self, jobs: BackgroundJobs) -> None:
        self.jobs = jobs

    async def run(self, args: ShellIdInput, ctx: ToolContext) -> ToolResult:
        try:
            before = self.jobs.info(args.shell_id)
            info = await self.jobs.kill(args.shell_id)
        except UnknownShell as exc:
            return ToolResult.error(str(exc))
        if before.state is not JobState.RUNNING:
            text = f"{describe_job(info)}; it was no longer running."
        else:
            text = describe_job(info)
        if info.residue:
            text += "\nCould not end: " + ", ".join(f"{r.pid} ({r.cmdline})" for r in info.residue)
        return ToolResult(
            outcome=ToolState.SUCCEEDED,
            content=text,
            side_effects=SideEffects.VERIFIED,
            exit_code=info.exit_code,
            signal=info.signal,
            residue=info.residue,
            details={"shell_id": info.shell_id, "state": info.state},
        )
