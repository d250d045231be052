"""``agent-tui`` runs for tests, forked with the agent preloaded (bench/forked_agent.py).

``popen_agent(args, ...)`` is ``subprocess.Popen([python, "-m", "agent_tui.cli",
*args], ...)`` and ``run_agent(args, ...)`` is ``subprocess.run`` of it with
``capture_output=True, text=True``. The agent is a real process of its own, with its
pipes, folder, environment, pid, signals and exit code, and it runs what the command
runs; only the imports are done once per test worker instead of once per run (they
were most of the suite's CPU). It leads a process group of its own.

``AGENT_TUI_TEST_FORK=0`` starts a fresh interpreter for every run instead. Tests of the
start itself (what is imported, and when) do not come here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

AGENT = [sys.executable, "-m", "agent_tui.cli"]

_context: Any = None


def fork_context() -> Any:
    global _context
    if _context is None:
        from bench.forked_agent import fork_context

        _context = fork_context()
    return _context


def forked() -> bool:
    return os.environ.get("AGENT_TUI_TEST_FORK", "1") != "0"


def run_agent(args: list[str], *, env: Mapping[str, str] | None = None,
              cwd: str | Path | None = None, input: str | None = None,
              stdin: int | None = None, timeout: float | None = None,
              ) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(AGENT + args, capture_output=True, text=True, ...)``, forked
    (what ``subprocess.run`` does, with :func:`popen_agent`)."""
    with popen_agent(args, env=env, cwd=cwd, stdin=subprocess.PIPE if input is not None else stdin,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.wait()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


class ForkedPopen(subprocess.Popen[Any]):
    """``subprocess.Popen`` for an agent forked from the fork server: its pipes, ``pid``,
    ``send_signal``, ``poll``, ``wait`` and ``communicate`` as Popen's (the process is
    the fork server's child, so its end is read from the server, not ``waitpid``)."""

    _forked: Any = None

    def _execute_child(self, args: Any, executable: Any, preexec_fn: Any, close_fds: Any,
                       pass_fds: Any, cwd: Any, env: Any, startupinfo: Any,
                       creationflags: Any, shell: Any, p2cread: int, p2cwrite: int,
                       c2pread: int, c2pwrite: int, errread: int, errwrite: int,
                       *rest: Any) -> None:
        from bench.forked_agent import Fd, agent_main

        self._forked = fork_context().Process(target=agent_main, args=(
            list(args[len(AGENT):]), dict(os.environ if env is None else env),
            str(cwd if cwd is not None else os.getcwd()),
            Fd(0 if p2cread == -1 else p2cread), Fd(1 if c2pwrite == -1 else c2pwrite),
            Fd(2 if errwrite == -1 else errwrite), None,
        ))
        try:
            self._forked.start()
            self.pid = self._forked.pid
        finally:
            self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)

    def _internal_poll(self, *_: Any, **__: Any) -> int | None:
        if self.returncode is None and self._forked is not None:
            self.returncode = self._forked.exitcode
        return self.returncode

    def _wait(self, timeout: float | None) -> int:
        if self.returncode is None:
            self._forked.join(timeout)
            if self._forked.exitcode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            self.returncode = self._forked.exitcode
        return self.returncode


def popen_agent(args: list[str], **popen: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(AGENT + args, **popen)``, forked (a fresh interpreter with
    ``AGENT_TUI_TEST_FORK=0``)."""
    if not forked():
        return subprocess.Popen(AGENT + args, **popen)
    return ForkedPopen(AGENT + args, **popen)


def end_agent(proc: subprocess.Popen[Any], timeout: float) -> None:
    """Wait up to ``timeout`` seconds for an agent to leave, then kill its group."""
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.wait()


def _kill_group(pid: int) -> None:
    """A forked agent leads a process group of its own; a fresh one is in ours."""
    try:
        if forked():
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
