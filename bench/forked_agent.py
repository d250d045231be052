"""Agent processes forked from a server that has the agent imported already.

``python -m agent_tui.cli`` spends about 2.5 s of CPU importing the SDK (some 3,000
modules and 1,600 pydantic models) and the core before it does anything. Chaos trials
and the test suite start thousands and hundreds of agents; they cannot pay that each
time. So a process keeps one multiprocessing fork server that has imported the agent
once (``PRELOAD``), and each agent is forked from it and runs exactly what the command
line runs, ``agent_tui.cli.main(argv)``, with its own environment, working folder,
stdin, stdout and stderr (and a crash-point channel for the chaos trials), in a process
group of its own (so a kill takes its commands with it). It ends the way the command
does (:func:`agent_tui.cli.process_exit.leave`). Nothing else of the asking process is
inherited: the fork server never ran a thread.

What a fork skips is the start itself: tests of the start (what is imported before the
first frame or the first request) start a fresh interpreter.
"""

from __future__ import annotations

import multiprocessing
import os
import runpy
import sys
import traceback
import warnings
from multiprocessing import reduction
from typing import Any

# Everything the agent imports lazily on its way to the first request and the last
# answer, and the chaos trials' own modules (a forked child runs the main module again:
# cheap once its imports are loaded). No module of these reads the environment or
# starts anything when imported.
PRELOAD = [
    "bench.chaos_agent",
    "bench.chaos",
    "bench.chaos_warm",
    "anthropic",
    "httpcore2",
    "h11",
    "anyio",
    "truststore",
    "psutil",
    "agent_tui.cli",
    "agent_tui.cli.wiring",
    "agent_tui.cli.process_exit",
    "agent_tui.headless",
    "agent_tui.acp.server",
    "agent_tui.core.session.session",
    "agent_tui.core.subagents.subagent",
    "agent_tui.providers.anthropic",
    "agent_tui.providers.cloud_switch",
    "agent_tui.tools.registry",
    "agent_tui.mcp",
    "agent_tui.mcp.manager",
    "agent_tui.runtime.leftovers",
    "agent_tui.runtime.process.orphans",
    "agent_tui.checkpoints",
    "agent_tui.checkpoints.manager",
    "agent_tui.permissions",
    "agent_tui.settings",
    # What most runs of the test suite's agents load besides: the control protocol, hooks,
    # providers' tables, the MCP SDK (its package loads its server side too) and the
    # OpenAI SDK for the OpenAI wire formats.
    "agent_tui.cli.sdk_entry",
    "agent_tui.sdk_protocol.run",
    "agent_tui.hooks.runner",
    "agent_tui.hooks.reload",
    "agent_tui.providers.factory",
    "agent_tui.plugins.offered",
    "anthropic.resources.models",
    "mcp.client.session",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "openai",
]


class Fd:
    """A file descriptor handed to the forked agent (through the fork server's socket)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> Any:
        return (_inherited, (reduction.DupFd(self.fd),))


def _inherited(dup: Any) -> int:
    return dup.detach()


# A forked child re-runs the main module, which is loaded already; runpy says so.
warnings.filterwarnings("ignore", category=RuntimeWarning, module="runpy")


def share_ssl_context() -> None:
    """One CA bundle load per process, not per client (40 ms each): every client of a
    trial talks plain HTTP to 127.0.0.1 and never uses it. Done in the workers and in
    the fork server, so the forked agents inherit it."""
    import httpcore2

    context = httpcore2.default_ssl_context()
    httpcore2.default_ssl_context = lambda **_: context


def fork_context() -> Any:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def agent_main(argv: list[str], env: dict[str, str], cwd: str, stdin: int, stdout: int,
               stderr: int, channel: tuple[int, int] | None, script: str | None = None) -> None:
    """The forked agent: the asker's fds as 0/1/2, its environment, then the CLI (or the
    Python ``script``, run as its own ``__main__`` with ``argv``: a test's client of the
    agent's code, such as the MCP conformance client)."""
    try:
        os.setpgrp()
    except OSError:
        pass
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(env)
    if channel is not None:
        for fd in channel:
            os.set_inheritable(fd, False)  # for the agent alone, not its commands
        os.environ["AGENT_TUI_CRASH_POINTS"] = f"{channel[0]},{channel[1]}"
    os.chdir(cwd)
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
    from agent_tui.cli import main
    from agent_tui.cli.process_exit import leave

    try:
        if script is None:
            code = main(argv)
        else:
            sys.argv = [script, *argv]
            runpy.run_path(script, run_name="__main__")
            code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # as the interpreter would: said on stderr, exit code 1
        traceback.print_exc()
        code = 1
    leave(code)
