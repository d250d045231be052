"""Running one hook command: a command like any other, under the process runner.

The command runs as ``bash -c COMMAND`` in the workspace through
:class:`~agent_tui.runtime.process.ProcessRun` (its own process group, tagged, TERM ->
grace -> KILL, leftovers ended), under a child of the scope of what it gates: Esc
ends it like any command. Its input JSON is a private file on its stdin; its stderr
goes to another (the runner merges what it reads into one stream, and a hook's
stdout and stderr mean different things). The hook's ``timeout`` cancels its own
scope, so the run is stopped the same way.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path


from agent_tui.protocol.model_base import DeferredModel
from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.protocol.states import HookEnding
from agent_tui.runtime.process import ProcessRun, RunLimits

#: How much of a hook's stderr is kept (it becomes a reason or a message).
STDERR_BYTES = 16 * 1024

# The outer shell only rewires stdin and stderr, then becomes the hook's own shell,
# so the hook sees no positional parameters of ours and no extra process stands between.
_WRAPPER = 'exec bash -c "$1" agent-tui-hook <"$2" 2>"$3"'


class CommandRun(DeferredModel):
    """How one hook command ended, in facts."""

    ending: HookEnding
    exit_code: int | None = None
    signal: str | None = None
    stdout: str = ""
    stdout_cut: bool = False  # more was printed than is kept: the answer is not whole
    stderr: str = ""
    duration_s: float = 0.0
    error: str = ""  # why it could not be started
    failure: str = ""  # an HTTP hook's failed answer (a status, a body that is no JSON)


async def run_command(
    command: str,
    stdin: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    scope: CancelScope,
    limits: RunLimits | None = None,
) -> CommandRun:
    """Run ``command`` with ``stdin`` as its input; always returns (never raises for
    the command's own failures)."""
    if scope.cancelled:  # cancel point: what it would gate is already cancelled
        return CommandRun(ending=HookEnding.CANCELLED)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="agent-tui-hook-", ignore_cleanup_errors=True) as folder:
        given, errors = Path(folder) / "input.json", Path(folder) / "stderr"
        fd = os.open(given, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(stdin)
        argv = ["bash", "-c", _WRAPPER, "agent-tui-hook", command, str(given), str(errors)]
        run = ProcessRun(argv, cwd=cwd, env=env, limits=limits)
        own = scope.child("hook")  # our own: the timeout must not cancel what it gates
        own.cancel_after(timeout_s)
        try:
            try:
                await run.start()
            except OSError as exc:
                return CommandRun(ending=HookEnding.NOT_STARTED, error=str(exc))
            reason = await run.wait(own)  # cancel point: Esc, shutdown or the hook's timeout
            result = await (run.stop(reason) if reason is not None else run.finish())
        except asyncio.CancelledError:
            run.kill_now()  # the loop is going away: leave nothing running
            raise
        finally:
            own.detach()
        stderr = _head(errors)
    if result.ended_by is None:
        ending = HookEnding.EXITED
    elif result.ended_by is CancelReason.TIMEOUT and not scope.cancelled:
        ending = HookEnding.TIMED_OUT
    else:
        ending = HookEnding.CANCELLED
    return CommandRun(
        ending=ending, exit_code=result.exit_code, signal=result.signal,
        stdout=result.output, stdout_cut=result.dropped_bytes > 0, stderr=stderr, duration_s=round(time.monotonic() - started, 3),
    )


def _head(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(STDERR_BYTES)
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")
