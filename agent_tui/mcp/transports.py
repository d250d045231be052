"""Opening a server's transport (stdio, streamable HTTP or the legacy SSE) and its ``ClientSession``,
and the stdio server's stderr log.

A stdio server is spawned through :func:`procs.launch`: tagged, and in a cgroup of
its own where commands run in cgroups.

A stdio server's stderr goes to ``LOG_DIR/SERVER.log`` (writing to the terminal would
break the TUI); each start is marked in it, so that a failure can quote what the
server said since its latest start.
"""

from __future__ import annotations

import os

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

import httpx2
import mcp_types as types
from mcp.client.extension import NotificationBinding
from mcp.client.session import ClientSession, ElicitationFnT, MessageHandlerFnT
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from agent_tui.mcp import procs
from agent_tui.mcp.app_servers import app_streams
from agent_tui.mcp.call import CallDispatcher
from agent_tui.settings.mcp_servers import ServerConfig, Transport

CLIENT_INFO = types.Implementation(name="agent-tui", version="0.1")
_STDERR_TAIL_LINES = 4
_LOG_MARK = "--- agent-tui: starting "

#: What the session hands a server's notifications (and transport errors) to.
MessageHandler = MessageHandlerFnT


async def connect(
    stack: AsyncExitStack,
    config: ServerConfig,
    *,
    workspace: Path,
    tag: str,
    errlog: TextIO | None,
    on_message: MessageHandler | None = None,
    auth: httpx2.Auth | None = None,
    on_elicit: ElicitationFnT | None = None,
    bindings: list[NotificationBinding[Any]] | None = None,
) -> tuple[ClientSession, CallDispatcher]:
    """Open the transport and the session inside ``stack`` (not yet initialized);
    ``auth`` (an OAuth provider, :mod:`.oauth`) signs an HTTP or SSE server's requests;
    ``on_elicit`` answers the server's questions to the user (:mod:`.elicit`); ``bindings``
    take notifications the SDK does not know (``notifications/tasks/status``)."""
    if config.transport is Transport.STDIO:
        assert config.command is not None
        cwd = config.cwd or str(workspace)
        # The environment the SDK would give it (its safe list, then the config's).
        env = {**get_default_environment(), **config.env}
        command, args, env = procs.launch(tag, config.command, config.args, env, cwd)
        params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
        if errlog is not None:
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        else:
            read, write = await stack.enter_async_context(stdio_client(params))
    elif config.transport is Transport.SDK:
        read, write = await stack.enter_async_context(app_streams(config.name))
    elif config.transport is Transport.SSE:
        assert config.url is not None
        read, write = await stack.enter_async_context(
            sse_client(config.url, headers=config.headers or None, auth=auth)
        )
    else:
        assert config.url is not None
        http = await stack.enter_async_context(
            create_mcp_http_client(headers=config.headers or None, auth=auth)
        )
        read, write = await stack.enter_async_context(
            streamable_http_client(config.url, http_client=http)
        )
    dispatcher = CallDispatcher(read, write)
    session = ClientSession(dispatcher=dispatcher, client_info=CLIENT_INFO, message_handler=on_message,
                            elicitation_callback=on_elicit, notification_bindings=bindings)
    await stack.enter_async_context(session)
    return session, dispatcher


class StderrLog:
    """A stdio server's stderr file (None for HTTP servers or without a log folder)."""

    def __init__(self, config: ServerConfig, log_dir: Path | None) -> None:
        self.config = config
        stdio = config.transport is Transport.STDIO
        self.path = (log_dir / f"{config.name}.log") if log_dir is not None and stdio else None

    def open(self) -> TextIO | None:
        """The file to hand the server as stderr, with this start marked in it."""
        if self.path is None:
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # owner-only: a server's stderr may hold what it was given (tokens, paths)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
            os.fchmod(fd, 0o600)  # a log made 0644 by an earlier version is tightened
            fh = os.fdopen(fd, "a", encoding="utf-8")  # noqa: SIM115 - closed by the server task
            fh.write(f"\n{_LOG_MARK}{self.config.describe()}\n")
            fh.flush()
            return fh
        except OSError:
            return None

    def tail(self) -> str:
        """The last lines the server wrote to stderr since its latest start."""
        if self.path is None:
            return ""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(0, 2)
                size = fh.tell()
                fh.seek(max(0, size - 8192))
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        text = text.rsplit(_LOG_MARK, 1)[-1]
        lines = [ln.rstrip() for ln in text.splitlines()[1:] if ln.strip()]
        return " | ".join(lines[-_STDERR_TAIL_LINES:])


__all__ = ["CLIENT_INFO", "MessageHandler", "StderrLog", "connect"]
