"""A ``cli_path`` whose agent is forked with the agent preloaded (bench/forked_agent.py).

An Agent SDK app starts ``cli_path`` as a process of its own, so tests/forked_runs.py's
Popen cannot reach it. :func:`launcher_command` is a command line for it instead: a
small launcher (tests/forked_cli_launcher.py, standard library only) that hands its
arguments, environment, folder and stdin, stdout and stderr over a Unix socket to this
test worker's fork service, which forks the agent from the worker's fork server. The
agent then runs what ``agent-tui`` runs, with the app's pipes; the launcher passes on
TERM, INT and HUP and leaves with the agent's exit code. If the launcher dies (a KILL),
the service kills the agent's process group, as a KILL would have ended the agent.

The agent is not the launcher's child: a test that reads the process tree under the
app's process, or of the start itself, uses the plain executable
(``AGENT_TUI_TEST_FORK=0`` makes every one plain). The same launcher runs a test's Python
script that uses the agent's code (the MCP conformance client) with those imports done.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import tempfile
import threading
from pathlib import Path

from tests.forked_runs import fork_context

LAUNCHER = Path(__file__).with_name("forked_cli_launcher.py")

_lock = threading.Lock()
_address: str | None = None


def launcher_command(script: Path | None = None) -> list[str]:
    """The command line that runs a forked agent-tui, or a Python ``script`` that uses the
    agent's code (its arguments follow)."""
    return [sys.executable, "-I", "-S", str(LAUNCHER), _service(), str(script or "agent-tui")]


def _service() -> str:
    """This worker's fork service's socket, started on first use."""
    global _address
    with _lock:
        if _address is None:
            path = os.path.join(tempfile.mkdtemp(prefix="atui-fork-"), "service")
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(path)
            server.listen(16)
            threading.Thread(target=_accept, args=(server,), daemon=True,
                             name="forked-cli-service").start()
            _address = path
    return _address


def _accept(server: socket.socket) -> None:
    while True:
        conn, _ = server.accept()
        threading.Thread(target=_serve, args=(conn,), daemon=True, name="forked-cli").start()


def _read(conn: socket.socket, size: int) -> bytes:
    got = b""
    while len(got) < size:
        more = conn.recv(size - len(got))
        if not more:
            raise EOFError("the launcher went away")
        got += more
    return got


def _serve(conn: socket.socket) -> None:
    """One launcher: fork its agent, pass on its signals, tell it how the agent ended."""
    from bench.forked_agent import Fd, agent_main

    with conn:
        head, fds, _, _ = socket.recv_fds(conn, 8, 3)
        try:
            head += _read(conn, 8 - len(head))
            asked = json.loads(_read(conn, int.from_bytes(head, "big")))
            script = None if asked["target"] == "agent-tui" else asked["target"]
            agent = fork_context().Process(target=agent_main, args=(
                asked["argv"], asked["env"], asked["cwd"], Fd(fds[0]), Fd(fds[1]), Fd(fds[2]), None,
                script))
            agent.start()
        finally:
            for fd in fds:
                os.close(fd)
        pending = b""
        while True:
            ready, _, _ = select.select([conn, agent.sentinel], [], [])
            if agent.sentinel in ready:
                agent.join()
                conn.sendall(json.dumps({"exit": agent.exitcode}).encode() + b"\n")
                return
            data = conn.recv(4096)
            if not data:  # the launcher was killed: so is the agent, with its commands
                _kill(agent.pid, signal.SIGKILL, group=True)
                agent.join()
                return
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                _kill(agent.pid, json.loads(line)["signal"], group=False)


def _kill(pid: int | None, signum: int, *, group: bool) -> None:
    if pid is None:
        return
    try:
        if group:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)
    except OSError:
        pass
