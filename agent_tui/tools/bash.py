"""The ``bash`` tool: one command line under ``bash -c`` in the workspace.

The process work is the run unit's (:mod:`agent_tui.runtime.process`); this module owns
the tool's contract: its input, its environment (the agent's own credentials removed),
the timeout, the three ways a running command stops (interrupt, timeout, sent to the
background), and how each ending is worded for the model.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, assert_never

from pydantic import BaseModel, Field, field_validator

from agent_tui.cancel import CancelReason
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.core.calls.tool import Confinement, Tool, ToolContext, ToolResult
from agent_tui.protocol.tool_names import HookResponse, RuleSubject
from agent_tui.credentials import command_env
from agent_tui.tools.background import BackgroundJobs
from agent_tui.runtime.guard_sweep import GuardBaseline, GuardSweep, take_baseline, wording
from agent_tui.runtime.sandbox import SandboxPolicy, refusal_notes, runs_here
from agent_tui.runtime.process import (
    Escalation,
    LimitHit,
    ProcessRun,
    RunLimits,
    RunResult,
)

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000


class BashInput(BaseModel):
    command: str = Field(description="The command line, run with bash -c in the workspace")
    timeout_ms: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=f"Stop the command after this many ms (default {DEFAULT_TIMEOUT_MS})",
    )
    run_in_background: bool = Field(
        default=False,
        description="Start it in the background and return at once with a shell id; "
        "read its output with bash_output, stop it with kill_shell",
    )
    description: str | None = Field(
        default=None, max_length=300,
        description="What the command does, in 5-10 words (the user reads it when asked)",
    )

    @field_validator("command")
    @classmethod
    def _no_nul(cls, value: str) -> str:
        if "\0" in value:
            raise ValueError("a command cannot contain a NUL character")
        return value


def bash_argv(command: str) -> list[str]:
    return ["bash", "-c", command]


class BashTool(Tool[BashInput]):
    name = "bash"
    claude_name = "Bash"
    claude_keys = {"timeout_ms": "timeout"}
    prompt_title = "Bash command"
    acp_kind = "execute"
    rule_subject = RuleSubject.COMMAND
    shell = True
    hook_response = HookResponse.COMMAND
    description = (
        "Run a shell command with `bash -c` in the workspace: builds, tests, git, package "
        "managers, scripts. Each call is a fresh shell (no state carries over: `cd` and "
        "variables are gone next time), started in the workspace root.\n"
        "- Do not use it to read, find or search files: read_file, glob and grep do that "
        "better, need no approval, and run alongside each other. Use edit_file or "
        "write_file to change files, not sed, echo or heredocs.\n"
        "- stdout and stderr come back merged; long output keeps its beginning and end, "
        "and says how much of the middle is left out. A non-zero exit is reported as a "
        "failure with its exit code.\n"
        f"- It is stopped after timeout_ms (default {DEFAULT_TIMEOUT_MS // 1000} s, at most "
        f"{MAX_TIMEOUT_MS // 60_000} min); when the user interrupts, the command and "
        "everything it started are ended.\n"
        "- Servers, watchers and anything that does not end by itself: use "
        "run_in_background, then bash_output to read it and kill_shell to stop it. "
        "Processes a foreground command leaves behind are ended when it finishes.\n"
        "- Chain dependent steps with `&&`; quote paths with spaces. Avoid interactive "
        "commands (stdin is empty): pass `-y`, `--no-edit`, `--yes` and the like."
    )
    Input = BashInput
    read_only = False
    can_background = True

    def __init__(
        self,
        jobs: BackgroundJobs | None = None,
        grace: float | None = None,
        *,
        limits: RunLimits | None = None,
        default_timeout_ms: int | None = DEFAULT_TIMEOUT_MS,
        sandbox: SandboxPolicy | None = None,
    ) -> None:
        self.jobs = jobs
        # None: the settings' grace (``limits.graceSeconds``), else the default
        self.limits = limits or (RunLimits() if grace is None else RunLimits(grace_s=grace))
        self.default_timeout_ms = default_timeout_ms
        self.sandbox = sandbox  # every command runs under it (runtime/sandbox.py)
        # Whether a sandboxed command runs unasked: only when the user or the command
        # line turned the sandbox on, never a project's file.
        self.sandbox_runs_unasked = sandbox is not None
        # Moves the guard paths a sandboxed command created out of reach (set by the
        # session: it knows the quarantine folder and tells the user).
        self.sweep: GuardSweep | None = None
        # Plan mode's read-only sandbox for calls confined to it, and whether
        # bubblewrap runs it here (probed once, the first time a call asks).
        self.plan_sandbox: SandboxPolicy | None = None
        self._plan_runs: bool | None = None

    @property
    def stop_grace_s(self) -> float | None:
        return self.limits.grace_s

    def can_run_read_only(self, args: BaseModel) -> bool:
        if self.plan_sandbox is None:
            return False
        if self._plan_runs is None:
            self._plan_runs = runs_here(self.plan_sandbox)
        return self._plan_runs

    def _policy(self, ctx: ToolContext) -> SandboxPolicy | None:
        """The sandbox this call runs in: plan mode's when its ruling confined it."""
        match ctx.confinement:
            case Confinement.READ_ONLY:
                policy = self.plan_sandbox
            case Confinement.NONE:
                policy = self.sandbox
            case other:
                assert_never(other)
        return policy.with_added_dirs(ctx.added_dirs) if policy is not None else None

    def runs_sandboxed(self, args: BaseModel) -> bool:
        """Sandboxed commands need no approval when the user turned the sandbox on
        (deny and ask rules still apply)."""
        return self.sandbox is not None and self.sandbox_runs_unasked

    def _argv(self, command: str, ctx: ToolContext) -> tuple[list[str], GuardBaseline | None]:
        """The command as it runs, and the guard paths it found (sandboxed, writable)."""
        argv = bash_argv(command)
        policy = self._policy(ctx)
        if policy is None:
            return argv, None
        roots = policy.writable_roots()
        guards = take_baseline(roots) if roots else None
        return policy.wrap(argv, Path(ctx.workspace), guards), guards

    def _swept(self, guards: GuardBaseline | None) -> str | None:
        """After a sandboxed command: the guard paths it created, moved out of reach."""
        if guards is None or self.sweep is None:
            return None
        moved = self.sweep.end(guards)
        return wording(moved) if moved else None

    def plan_refusal(self) -> str:
        return ("commands run only in a read-only sandbox in plan mode, and bubblewrap, "
                "which that needs, cannot run here")

    def summary(self, args: BashInput) -> str:
        suffix = " (background)" if args.run_in_background else ""
        return f"$ {args.command}{suffix}"

    def rewind_caveat(self, raw_input: dict[str, Any]) -> str | None:
        command = str(raw_input.get("command", ""))
        short = command if len(command) <= 80 else command[:77] + "..."
        return (
            f"$ {short}: file changes inside the workspace (and its added folders) are "
            "restored; anything else it did (processes, network, other files) is not undone"
        )

    async def run(self, args: BashInput, ctx: ToolContext) -> ToolResult:
        timeout_ms = args.timeout_ms if args.timeout_ms is not None else self.default_timeout_ms
        env = command_env(ctx.env)
        if ctx.confinement is Confinement.READ_ONLY and self.plan_sandbox is None:
            return ToolResult.error("Not run: plan mode's read-only sandbox is not available.")
        if args.run_in_background:
            return await self._start_background(args, ctx, env)

        # Cancel point: right before the command starts.
        if ctx.scope.cancelled:
            return ToolResult(
                outcome=ToolState.CANCELLED_WHILE_RUNNING,
                content="Not run: the call was cancelled before the command started.",
                ended_by=ctx.scope.reason,
            )
        scope = ctx.scope.child("bash")  # our own: a timeout must not cancel the turn
        if timeout_ms is not None:
            scope.cancel_after(timeout_ms / 1000)
        argv, guards = self._argv(args.command, ctx)
        run = ProcessRun(
            argv,
            cwd=ctx.workspace,
            env=env,
            limits=self.limits,
            on_output=ctx.emit_output,
        )
        try:
            try:
                await run.start()
            except OSError as exc:
                return ToolResult.error(f"Could not start the command: {exc}")
            reason = await run.wait(scope)  # cancel point: Esc, timeout, send-now
            scope.on_hurry(run.hurry)  # a second Esc while it stops: KILL, no grace
            if reason is CancelReason.SEND_TO_BACKGROUND and self.jobs is not None:
                moved = self._send_to_background(run, args.command, guards, ctx.tool_use_id)
                if moved is not None:
                    return moved
            result = await (run.stop(reason) if reason is not None else run.finish())
            swept = self._swept(guards)
        except asyncio.CancelledError:
            # The core stopped waiting for us: nothing we started may keep running.
            # SIGKILL now; the full sweep and reaping finish on their own task.
            run.kill_now()
            if run.pid is not None:
                _finish_detached(run, scope.reason or CancelReason.USER_INTERRUPT)
            self._swept(guards)  # the PID namespace is gone with its leader
            raise
        finally:
            scope.detach()
        done = to_tool_result(result, timeout_ms=timeout_ms, grace_s=self.limits.grace_s,
                              sandbox=self._policy(ctx))
        if swept is not None:
            done = done.model_copy(update={"content": f"{done.content}\n{swept}"})
        return done

    async def _start_background(
        self, args: BashInput, ctx: ToolContext, env: dict[str, str]
    ) -> ToolResult:
        if self.jobs is None:
            return ToolResult.error("Background commands are not available in this session.")
        # A background command outlives the turn, so only the explicit timeout applies.
        timeout_s = args.timeout_ms / 1000 if args.timeout_ms is not None else None
        argv, guards = self._argv(args.command, ctx)
        try:
            shell_id = await self.jobs.start(
                argv,
                command=args.command,
                cwd=ctx.workspace,
                env=env,
                timeout_s=timeout_s,
                on_end=self._sweep_when_ended(guards),
                tool_use_id=ctx.tool_use_id,
            )
        except (OSError, RuntimeError) as exc:
            return ToolResult.error(f"Could not start the background command: {exc}")
        self._watch(shell_id, guards)
        return ToolResult(
            outcome=ToolState.SUCCEEDED,
            content=(
                f"Started in the background as {shell_id}. Read its output with "
                f"bash_output(shell_id={shell_id!r}); stop it with kill_shell."
            ),
            side_effects=SideEffects.UNVERIFIED,
            details={"shell_id": shell_id},
        )

    def _sweep_when_ended(self, guards: GuardBaseline | None) -> Callable[[str], None] | None:
        """For a sandboxed background job: what sweeps it when it ends."""
        sweep = self.sweep
        if guards is None or sweep is None:
            return None

        def ended(shell_id: str) -> None:
            sweep.forget(shell_id)
            sweep.end(guards)

        return ended

    def _watch(self, shell_id: str, guards: GuardBaseline | None) -> None:
        """A sandboxed job runs on: swept at each turn's start too."""
        if guards is not None and self.sweep is not None:
            self.sweep.watch(shell_id, guards)

    def _send_to_background(
        self, run: ProcessRun, command: str, guards: GuardBaseline | None = None,
        tool_use_id: str | None = None,
    ) -> ToolResult | None:
        """Hand the live process to the registry instead of killing it."""
        if run.leader_exited or self.jobs is None:
            return None  # it ended meanwhile: report the ending as it is
        try:
            run.set_output_sink(None)  # the tool call ends here: stop streaming into it
            shell_id = self.jobs.adopt(run, command, on_end=self._sweep_when_ended(guards),
                                       tool_use_id=tool_use_id)
            self._watch(shell_id, guards)
        except RuntimeError:
            return None  # registry shutting down: stop it like any interrupt
        so_far = run.capture.text() or "(no output yet)"
        return ToolResult(
            outcome=ToolState.SUCCEEDED,
            content=(
                f"The command is still running, now in the background as {shell_id} "
                f"(pid {run.pid}). Read its further output with bash_output(shell_id="
                f"{shell_id!r}); stop it with kill_shell.\nOutput so far:\n{so_far}"
            ),
            ended_by=CancelReason.SEND_TO_BACKGROUND,
            side_effects=SideEffects.UNVERIFIED,
            details={"shell_id": shell_id, "pid": run.pid, "run_id": run.run_id},
        )


_DETACHED: set[asyncio.Future[RunResult]] = set()  # strong refs until they finish


def _finish_detached(run: ProcessRun, reason: CancelReason) -> None:
    task = asyncio.ensure_future(run.stop(reason))
    _DETACHED.add(task)
    task.add_done_callback(_DETACHED.discard)


# ----------------------------------------------------------------------------- wording


def _ending(result: RunResult) -> str:
    if result.signal:
        return f"signal {result.signal}"
    if result.exit_code is not None:
        return f"exit code {result.exit_code}"
    return "exit status unknown"


def _how_stopped(result: RunResult, grace_s: float) -> str:
    cleanup = result.cleanup
    if cleanup.escalation is Escalation.KILL:
        how = f"it did not end within the {grace_s:g} s grace after SIGTERM, so SIGKILL was sent"
    elif cleanup.escalation is Escalation.TERM:
        how = f"it ended on SIGTERM within the {grace_s:g} s grace"
    else:
        how = "it had already ended"
    return f"{how} ({_ending(result)})"


def _notes(result: RunResult) -> list[str]:
    cleanup = result.cleanup
    notes = []
    if result.dropped_bytes:
        notes.append(
            f"[output was {result.output_bytes} bytes; {result.dropped_bytes} bytes from the "
            "middle are omitted]"
        )
    if cleanup.pipe_holders:
        who = ", ".join(f"{h.pid} ({h.cmdline})" for h in cleanup.pipe_holders)
        notes.append(
            f"[a process kept the output open after the command ended: {who}; output may be "
            "incomplete]"
        )
    leftovers = cleanup.ended if result.ended_by is None else []  # a cancel's are expected
    if leftovers:
        who = ", ".join(f"{r.pid} ({r.cmdline})" for r in leftovers)
        notes.append(
            f"[ended {len(leftovers)} process(es) the command left running: {who}. Use "
            "run_in_background for servers and watchers]"
        )
    if result.residue:
        who = ", ".join(f"{r.pid} ({r.cmdline})" for r in result.residue)
        notes.append(f"[could not end: {who}]")
    notes += [_LIMIT_WORDING[hit] for hit in result.limit_hits]
    return notes


_LIMIT_WORDING = {
    LimitHit.PIDS: "[stopped by a limit: the command reached its limit of processes "
                   "(settings limits.pids), so a fork failed]",
    LimitHit.MEMORY: "[stopped by a limit: the command reached its memory limit (settings "
                     "limits.memory), so the kernel killed a process of it]",
}


def to_tool_result(
    result: RunResult, *, timeout_ms: int | None, grace_s: float,
    sandbox: SandboxPolicy | None = None,
) -> ToolResult:
    """Word a run's ending for the model, and keep its facts in ``details``."""
    output = result.output if result.output_bytes else "(no output)"
    refused = refusal_notes(sandbox, result.output) if sandbox is not None else []
    notes = "\n".join(_notes(result) + refused)
    body = f"{output}\n{notes}" if notes else output
    details = {
        "run_id": result.run_id,
        "pid": result.pid,
        "duration_s": result.duration_s,
        "output_bytes": result.output_bytes,
        "dropped_bytes": result.dropped_bytes,
        "cleanup": result.cleanup.model_dump(mode="json"),
    }
    common = dict(
        exit_code=result.exit_code,
        signal=result.signal,
        ended_by=result.ended_by,
        residue=result.residue,
        details=details,
    )
    if result.ended_by is CancelReason.TIMEOUT:
        return ToolResult(
            outcome=ToolState.FAILED,
            is_error=True,
            side_effects=SideEffects.UNVERIFIED,
            content=(
                f"Timed out after {timeout_ms} ms: {_how_stopped(result, grace_s)}. It may "
                f"have partly run.\nOutput so far:\n{body}"
            ),
            **common,
        )
    if result.ended_by is not None:
        # The core words the interruption (history.result_wording, from the signal and
        # exit code); the content is what the command printed.
        return ToolResult(
            outcome=ToolState.CANCELLED_WHILE_RUNNING,
            is_error=True,
            side_effects=SideEffects.UNVERIFIED,
            content=body,
            **common,
        )
    # Ended by itself. Its effects are complete, unless we had to end leftovers.
    effects = SideEffects.UNVERIFIED if result.cleanup.ended else SideEffects.VERIFIED
    if result.exit_code == 0:
        return ToolResult(outcome=ToolState.SUCCEEDED, content=body, side_effects=effects, **common)
    return ToolResult(
        outcome=ToolState.FAILED,
        is_error=True,
        side_effects=effects,
        content=f"Command failed with {_ending(result)}.\n{body}",
        **common,
    )
