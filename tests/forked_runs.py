"""``agent-tui`` runs for tests, forked with the agent preloaded (bench/forked_agent.py).

``run_agent(args, ...)`` does what ``subprocess.run([python, "-m", "agent_tui.cli",
*args], capture_output=True, text=True, ...)`` does and returns the same
``CompletedProcess`` (or raises the same ``TimeoutExpired``). The agent is a real process
of its own, with its pipes, folder, environment and exit code, and it runs what the
command runs; only the imports are done once per test worker instead of once per run
(they were most of the suite's CPU). It runs in a process group of its own.

``AGENT_TUI_TEST_FORK=0`` starts a fresh interpreter for every run instead. Tests of the
start itself (what is imported, and when) do not come here.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

AGENT = [sys.executable, "-m", "agent_tui.cli"]

_context: Any = None


def _fork_context() -> Any:
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
    """``subprocess.run(AGENT + args, capture_output=True, text=True, ...)``, forked.
    ``stdin`` is a file descriptor or ``subprocess.DEVNULL``, as there."""
    if not forked():
        return subprocess.run(AGENT + args, env=env, cwd=cwd, input=input, stdin=stdin,
                              capture_output=True, text=True, timeout=timeout)
    from bench.forked_agent import Fd, agent_main

    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe() if input is not None else (_stdin(stdin), -1)
    proc = _fork_context().Process(target=agent_main, args=(
        list(args), dict(os.environ if env is None else env),
        str(cwd if cwd is not None else os.getcwd()), Fd(in_r), Fd(out_w), Fd(err_w), None,
    ))
    try:
        proc.start()
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    out, err = _communicate(proc, out_r, err_r, in_w, (input or "").encode(), timeout, args)
    return subprocess.CompletedProcess(AGENT + args, proc.exitcode, _text(out), _text(err))


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

        self._forked = _fork_context().Process(target=agent_main, args=(
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


def start_agent(args: list[str], *, env: Mapping[str, str], cwd: str | Path,
                stderr: int) -> tuple[Any, int, int]:
    """A forked agent on two new pipes (and ``stderr``, a descriptor): the process (its
    ``pid``, ``join``, ``exitcode``), the write end of its stdin, the read end of its
    stdout."""
    from bench.forked_agent import Fd, agent_main

    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    proc = _fork_context().Process(target=agent_main, args=(
        list(args), dict(env), str(cwd), Fd(in_r), Fd(out_w), Fd(stderr), None,
    ))
    try:
        proc.start()
    finally:
        os.close(in_r)
        os.close(out_w)
    return proc, in_w, out_r


def end_agent(proc: Any, timeout: float) -> None:
    """Wait up to ``timeout`` seconds for a forked agent to leave, then kill its group."""
    proc.join(timeout)
    if proc.exitcode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.join()


def _stdin(given: int | None) -> int:
    """A descriptor of its own for the agent's stdin: the one given, or this process's."""
    if given == subprocess.DEVNULL:
        return os.open(os.devnull, os.O_RDONLY)
    try:
        return os.dup(0 if given is None else given)
    except OSError:
        return os.open(os.devnull, os.O_RDONLY)


def _communicate(proc: Any, out_r: int, err_r: int, in_w: int, data: bytes,
                 timeout: float | None, args: list[str]) -> tuple[bytes, bytes]:
    """Write stdin, read stdout and stderr to their ends, wait for the exit: as
    ``Popen.communicate`` does, with its timeout."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    sel = selectors.DefaultSelector()
    for fd in chunks:
        sel.register(fd, selectors.EVENT_READ)
    if in_w >= 0:
        if data:
            os.set_blocking(in_w, False)
            sel.register(in_w, selectors.EVENT_WRITE)
        else:
            os.close(in_w)
            in_w = -1
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while chunks.keys() & {key.fd for key in sel.get_map().values()}:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                _timed_out(proc, chunks, out_r, err_r, timeout, args)
            for key, _ in sel.select(left):
                if key.fd == in_w:
                    try:
                        data = data[os.write(in_w, data):]
                    except BrokenPipeError:
                        data = b""
                    if not data:
                        sel.unregister(in_w)
                        os.close(in_w)
                        in_w = -1
                    continue
                chunk = os.read(key.fd, 65536)
                if chunk:
                    chunks[key.fd].append(chunk)
                else:
                    sel.unregister(key.fd)
        proc.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        if proc.exitcode is None:
            _timed_out(proc, chunks, out_r, err_r, timeout, args)
    finally:
        sel.close()
        for fd in (out_r, err_r, in_w):
            if fd >= 0:
                os.close(fd)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r])


def _timed_out(proc: Any, chunks: dict[int, list[bytes]], out_r: int, err_r: int,
               timeout: float | None, args: list[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.join()
    raise subprocess.TimeoutExpired(AGENT + args, timeout or 0.0,
                                    b"".join(chunks[out_r]), b"".join(chunks[err_r]))


def _text(data: bytes) -> str:
    # as subprocess's text mode reads a pipe: universal newlines
    return data.decode().replace("\r\n", "\n").replace("\r", "\n")
