"""``agent-tui acp``: an Agent Client Protocol agent over stdio (official SDK).

Supported: ``initialize``, ``session/new``, ``session/load`` (replays the journal as
updates, then continues), ``session/prompt``, ``session/cancel``, ``session/set_mode``
(the permission modes, :mod:`.modes`), ``session/set_config_option`` (the model,
:mod:`.models`); the agent sends ``session/update`` (message chunks, tool calls, tool
call updates, mode and config option updates, the slash commands),
``session/request_permission``, and ``fs/read_text_file`` / ``fs/write_text_file``
when the client offers them (docs/acp.md). Anything else is answered ``-32601 Method not
found``: :class:`AcpAgent` deliberately does not subclass the SDK's ``Agent``
protocol, whose unwritten methods would become silent stubs.

Choices the protocol leaves to us:

- **A second prompt while one runs is rejected** with ``-32600`` ("a prompt is
  already running"). The protocol pairs each turn with one ``session/prompt``
  response; queueing it as a steer would leave that request without a turn of its
  own. Clients queue on their side, or send ``session/cancel`` first.
- **A failed turn** (the model request failed) answers the prompt with a JSON-RPC
  error (``-32603``) carrying the reason; the session stays usable.
- **Prompt content** (:mod:`.prompt_content`): text; resource links as their URI;
  embedded text resources as their text; images, and embedded image resources, as
  images (checked as the TUI's are). Audio and other binary resources are refused
  with an error naming them (not advertised).
- **Slash commands** (:mod:`.commands`): ``available_commands_update`` after
  ``session/new`` and ``session/load`` lists ``/compact``, ``/clear``, ``/context``,
  ``/model`` and the custom commands (Claude Code's ``.claude/commands/`` and ours);
  a prompt ``/name args`` runs the command as print mode does, its answer told as
  agent text; an unknown name is answered as text, ``stopReason`` ``end_turn``,
  nothing sent to the model.
- **MCP servers** sent with ``session/new`` / ``session/load`` are connected like the
  MCP config files' servers (stdio, streamable HTTP and SSE, see :mod:`.mcp_servers`);
  what cannot be served is refused with an error naming the server. Their prompts are
  commands, ``@server:uri`` reads a resource into the message, and their questions
  (elicitation) go to the client (:mod:`.mcp_offers`).
- **The client's file system** (``files/buffers.py``): with ``fs/read_text_file``
  offered, read_file and edit_file read through it (unsaved buffers); with
  ``fs/write_text_file``, write_file and edit_file have the editor write, after the same
  approval, path checks, cancel check and rewind pre-image as a disk write.
  ``terminal/*`` is not used (docs/acp.md says why): a client that shows a terminal
  fed by the agent (``_meta.terminal_output``) sees bash calls as terminal views
  (:mod:`.updates`).
- **Usage**: a ``usage_update`` after each model request (:mod:`.usage`);
  ``session/load`` restores the session's mode (:func:`.modes.restored_mode`).
- Each session has its own core ``Session``, run task, cancel scope and journal;
  sessions in one process are independent.

Logs go to stderr (``AGENT_TUI_LOG`` sets the level; ``AGENT_TUI_LOG_FILE`` a file).
At end of input (exit code 0) or on SIGTERM / SIGINT (exit code 130) every session is
shut down: running turns are interrupted and their processes ended before the process
exits. A second signal exits at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from agent_tui.acp.bridge import ClientConnection, SessionBridge
from agent_tui.acp.commands import commands_update
from agent_tui.acp.editor_files import EditorFiles, SendFrame
from agent_tui.acp.mcp_offers import elicitor, needs_servers, offer_run, prompt_entries
from agent_tui.acp.mcp_servers import server_configs
from agent_tui.acp.models import check_option
from agent_tui.acp.modes import mode_state, parse_mode, restored_mode
from agent_tui.acp.prompt_content import prompt_message
from agent_tui.acp.transport import claim_stdout, open_stdio
from agent_tui.acp.updates import shows_terminals
from agent_tui.commands.line import parse_command_line
from agent_tui.files.buffers import Editor, ReadsBuffers, WritesBuffers
from agent_tui.mcp_catalog.offers import PROMPT_PREFIX
from agent_tui.mcp_catalog.port import servers_of
from agent_tui.protocol import Event, Notice
from agent_tui.core.session.session import Session
from agent_tui.core.journal.session_lock import SessionHeld
from agent_tui.core.journal.store import SessionNotFound
from agent_tui.log_setup import setup_logging

log = logging.getLogger("agent_tui.acp")


class SessionOpener(Protocol):
    """What the server needs from the CLI's wiring (``agent_tui.cli.wiring.Wiring``)."""

    def open_session(
        self,
        emit: Callable[[Event], None],
        *,
        session_id: str | None = None,
        cwd: Path | None = None,
        mcp_servers: list[Any] | None = None,
        fork_if_held: bool = True,
    ) -> tuple[str, Session]: ...


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("agent-tui")
    except Exception:
        return "0"


def _workspace(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError.invalid_params({"cwd": cwd, "details": "cwd must be an absolute path"})
    if not path.is_dir():
        raise RequestError.invalid_params({"cwd": cwd, "details": "cwd is not a directory"})
    return path


class AcpAgent:
    """The ACP agent: sessions by id, each a :class:`SessionBridge`."""

    def __init__(self, wiring: SessionOpener) -> None:
        self.wiring = wiring
        self.conn: ClientConnection | None = None
        self.sessions: dict[str, SessionBridge] = {}
        self.client_capabilities: Any = None  # what the client offers (initialize)
        self.send_frame: SendFrame | None = None  # raw frames ($/cancel_request)

    def on_connect(self, conn: ClientConnection) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
            ),
            agent_info=Implementation(name="agent-tui", title="agent-tui", version=_version()),
            auth_methods=[],
        )

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None,
                          **kwargs: Any) -> NewSessionResponse:
        workspace = _workspace(cwd)
        servers = server_configs(mcp_servers)
        bridge = await self._open(None, workspace, servers)
        bridge.start_pump()
        options = await self._options(bridge)
        self._announce(bridge)
        return NewSessionResponse(session_id=bridge.id, modes=mode_state(bridge.mode),
                                  config_options=options)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        workspace = _workspace(cwd)
        servers = server_configs(mcp_servers)
        bridge = self.sessions.get(session_id)
        if bridge is not None:
            # Already open in this process: replay what it holds, keep it running (and
            # the MCP servers it was opened with).
            if bridge.busy:
                raise RequestError.invalid_request(
                    {"sessionId": session_id, "details": "a prompt is running in this session"}
                )
            await bridge.replay()
            options = await self._options(bridge)
            self._announce(bridge)
            return LoadSessionResponse(modes=mode_state(bridge.mode), config_options=options)
        bridge = await self._open(session_id, workspace, servers)
        await bridge.replay()
        assert bridge.session is not None
        mode = restored_mode(bridge.session.records(), bridge.mode)
        if mode is not None:
            bridge.set_mode(mode)
        bridge.start_pump()
        options = await self._options(bridge)
        self._announce(bridge)
        return LoadSessionResponse(modes=mode_state(mode or bridge.mode), config_options=options)

    @staticmethod
    def _announce(bridge: SessionBridge) -> None:
        """The slash commands, sent once the response is out: nothing awaits between
        this and the return, and the pump sends it after the response is written
        (an editor drops updates for a session id it has not been told)."""
        assert bridge.session is not None
        bridge.announce(commands_update(bridge.session.workspace,
                                        prompt_entries(servers_of(bridge.session.background))))

    @staticmethod
    async def _options(bridge: SessionBridge) -> list[Any]:
        assert bridge.models is not None
        return list(await bridge.models.options())

    async def _open(
        self, session_id: str | None, workspace: Path, mcp_servers: list[Any]
    ) -> SessionBridge:
        assert self.conn is not None
        # Events emitted while the session is built (e.g. a journal notice) wait here
        # until the bridge exists; after that they go straight to it.
        pending: list[Event] = []
        target: list[SessionBridge] = []

        def emit(event: Event) -> None:
            if target:
                target[0].emit(event)
            else:
                pending.append(event)

        try:
            # On a thread: building a session imports the provider's SDK (about a
            # second), and other sessions' updates must keep flowing meanwhile.
            # session/load answers for the id it was given: a session open in another
            # agent process is refused, not forked (a fork would need a new id).
            new_id, session = await asyncio.to_thread(
                self.wiring.open_session, emit, session_id=session_id, cwd=workspace,
                mcp_servers=mcp_servers, fork_if_held=False,
            )
        except SessionNotFound as exc:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "details": f"no saved session: {exc}"}
            ) from None
        except SessionHeld as exc:
            raise RequestError.invalid_request(
                {"sessionId": session_id, "details": f"{exc}: close it there first, or "
                 "session/new"}
            ) from None
        bridge = SessionBridge(new_id, self.conn)
        target.append(bridge)
        for event in pending:
            bridge.emit(event)
        bridge.attach(session)
        bridge.mapper.terminals = shows_terminals(self.client_capabilities)  # bash as a view
        self._serve_mcp(bridge)
        self._serve_buffers(bridge)
        self.sessions[new_id] = bridge
        log.info("session %s opened in %s", new_id, session.workspace)
        return bridge

    def _serve_mcp(self, bridge: SessionBridge) -> None:
        """The session's MCP servers ask the user through this client, and their
        prompts join the command list as they become ready (:mod:`.mcp_offers`)."""
        assert bridge.session is not None
        manager = servers_of(bridge.session.background)
        if manager is None:
            return
        manager.set_elicitor(elicitor(self.conn, bridge.id, self.client_capabilities,
                                      lambda level, text: bridge.emit(Notice(level=level, text=text))))
        manager.on_status(lambda _status: self._announce(bridge))
        manager.on_catalog(lambda _server: self._announce(bridge))

    def _serve_buffers(self, bridge: SessionBridge) -> None:
        """A client that offers ``fs/read_text_file`` is asked for the files the tools
        read, so the agent sees unsaved edits; one that offers ``fs/write_text_file``
        writes the write tools' files, so they show in its buffers (``files/buffers.py``)."""
        fs = getattr(self.client_capabilities, "fs", None)
        if bridge.session is None or fs is None:
            return
        files = EditorFiles(self.conn, bridge.id, self.send_frame)  # bounded, link-checked
        reader = files.read if getattr(fs, "read_text_file", False) else None
        tools = bridge.session.tools
        for tool in (tools.get(name) for name in tools.names()):
            if isinstance(tool, ReadsBuffers):
                tool.buffers = reader
            if isinstance(tool, WritesBuffers) and getattr(fs, "write_text_file", False):
                tool.editor = Editor(save=files.save, read=reader)

    def _bridge(self, session_id: str) -> SessionBridge:
        bridge = self.sessions.get(session_id)
        if bridge is None:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "details": "unknown session (session/new or session/load first)"}
            )
        return bridge

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        bridge = self._bridge(session_id)
        assert bridge.session is not None
        # A command line: a prompt of text alone (resources and images make it a message).
        texts = [b.text for b in prompt if getattr(b, "type", None) == "text"]
        line = parse_command_line("\n\n".join(texts)) if len(texts) == len(prompt) else None
        if line is not None and not line.name.startswith(PROMPT_PREFIX):
            return await bridge.command(line.name, line.args)
        message, refused = prompt_message(prompt, bridge.session.workspace)
        if needs_servers(message.text):  # an MCP prompt, or resources to read first
            manager = servers_of(bridge.session.background)
            return await bridge.command("", "", offer_run(manager, bridge.session, message))
        return await bridge.prompt(message, refused)

    async def set_session_mode(self, session_id: str, mode_id: str,
                               **kwargs: Any) -> SetSessionModeResponse:
        bridge = self._bridge(session_id)
        bridge.set_mode(parse_mode(session_id, mode_id))
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        bridge = self._bridge(session_id)
        model = check_option(session_id, config_id, value)
        assert bridge.models is not None
        return SetSessionConfigOptionResponse(config_options=list(await bridge.models.choose(model)))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        bridge = self.sessions.get(session_id)
        if bridge is None:
            log.info("cancel for unknown session %s ignored", session_id)
            return
        bridge.cancel()

    async def close_all(self) -> None:
        bridges = list(self.sessions.values())
        self.sessions.clear()
        log.info("closing %d session(s)", len(bridges))
        await asyncio.gather(*(b.close() for b in bridges), return_exceptions=True)
        log.info("sessions closed")


async def serve(
    wiring: SessionOpener, proto_fd: int, on_hard_exit: Callable[[], object] = lambda: None
) -> int:
    agent = AcpAgent(wiring)
    transport = await open_stdio(proto_fd)
    agent.send_frame = transport.send
    loop = asyncio.get_running_loop()
    signals = 0

    # acp's Agent protocol lists every method of the spec as required, while its router
    # answers method-not-found for a method the agent leaves out (acp/router.py), as
    # for those we do not offer (fork, resume, list).
    serving = asyncio.ensure_future(run_agent(agent, transport))  # type: ignore[arg-type]

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            serving.cancel()  # stop listening; the sessions are shut down below
        else:  # a second signal: exit now, ending what we can synchronously
            on_hard_exit()
            os._exit(130)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    try:
        try:
            await serving
        except asyncio.CancelledError:
            if not signals:
                raise
    finally:
        await agent.close_all()
    return 130 if signals else 0


def run_acp(wiring: SessionOpener, *, on_hard_exit: Callable[[], object] = lambda: None) -> int:
    """Serve ACP on stdin/stdout until end of input; the process's exit code.

    ``on_hard_exit`` runs on a second SIGTERM/SIGINT, right before ``os._exit``
    (the CLI passes the process layer's ``kill_all_runs``).
    """
    proto_fd = claim_stdout()
    setup_logging()  # stderr: stdout carries the protocol
    return asyncio.run(serve(wiring, proto_fd, on_hard_exit))
