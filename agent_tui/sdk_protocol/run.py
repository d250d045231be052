"""A run in Claude Code's shape: what the Agent SDKs start when ``cli_path`` is agent-tui.

With ``--input-format stream-json``, stdin carries the app's lines: first the
``initialize`` control request (its hook callbacks join the session's hooks; the
answer names the commands, the models and the permission mode), then user messages
and control requests, in any order:

- a user message starts a turn, or waits for the running one and its follow-ups;
  every message gets its own ``result`` (one that starts no turn, an error saying why);
- ``interrupt`` is the stop button: its answer is sent once the turn has ended and
  what it started is gone; the turn's ``result`` follows; messages still waiting
  get a ``result`` saying they did not run;
- ``set_permission_mode`` (Claude Code's mode words) and ``set_model``;
- the session's context, MCP servers, rewinds and background jobs (``controls.py``);
- any other request is answered with an error naming it.

``system``/``session_state_changed`` says ``running`` as a turn starts,
``requires_action`` while the app's permission callback is asked, and ``idle`` after
the result of the last message owed: with ``CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS``
for the app to see, with ``CLAUDE_CODE_SDK_READS_SESSION_STATE`` (the SDKs set it)
marked ``sdk_host_only``. With ``--replay-user-messages`` each user message is echoed
as its turn starts, with its ``uuid`` (the app's, else a new one): ``rewind_files``
names a message by it.

Requests the other way (``can_use_tool``, ``hook_callback``, ``mcp_message``) are in
``callbacks.py`` and ``sdk_mcp.py``. Notices go to stderr. At end of input the agent
finishes what runs and exits: 0, or 1 when the last turn failed. The first SIGINT
interrupts, a second exits at once (130).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import uuid
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import IO, Any

from agent_tui.core.session.session import Session
from agent_tui.headless import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, NO_ONE_TO_ASK
from agent_tui.protocol import (
    Decide,
    Decision,
    Event,
    FollowUp,
    Interrupt,
    ModelChanged,
    Notice,
    NoticeLevel,
    PermissionRequested,
    SetModel,
    SetPermissionMode,
    Shutdown,
    SteerState,
    SteerStatus,
    TurnEnded,
    TurnStarted,
    TurnStatus,
    UserMessage,
)
from agent_tui.protocol.states import CLAUDE_MODE_NAMES
from agent_tui.runtime.hangup import PRINT_DEADLINE_S, Hangup
from agent_tui.sdk_protocol.callbacks import (
    PermissionAsker,
    SetupError,
    add_agents,
    add_callbacks,
    hook_commands,
)
from agent_tui.sdk_protocol.controls import SUBTYPES, Controls
from agent_tui.sdk_protocol.inbound import BadMessage, user_message
from agent_tui.sdk_protocol.messages import CLAUDE_CODE_PROTOCOL_VERSION, Messages
from agent_tui.sdk_protocol.wire import Wire

#: Builds the session: ``emit`` for its Events, and the wire (for the app's MCP servers).
MakeSession = Callable[[Callable[[Event], None], Wire], Session]
_EOF = None
_TRUE = ("1", "true", "yes", "on")


class SessionState(StrEnum):
    """``session_state_changed``'s states, as Claude Code names them."""

    IDLE = "idle"
    RUNNING = "running"
    REQUIRES_ACTION = "requires_action"  # the app's permission callback is asked


def state_frames(env: Mapping[str, str]) -> bool | None:
    """Whether ``session_state_changed`` is sent: True for the app to see, False
    marked ``sdk_host_only`` (read by the SDK itself), None not at all."""
    if env.get("CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS", "").lower() in _TRUE:
        return True
    if env.get("CLAUDE_CODE_SDK_READS_SESSION_STATE", "").lower() in _TRUE:
        return False
    return None


class SdkRun:
    def __init__(self, *, partial: bool, ask_app: bool, out: IO[str], err: IO[str],
                 replay: bool = False, states: bool | None = None) -> None:
        self.err = err
        self.wire = Wire(out, on_closed=self._reader_left)
        self.messages = Messages(self.wire.send, partial=partial)
        self.messages.on_turn_ended = self._turn_ended
        self.ask_app = ask_app
        self.session: Session | None = None
        self.owed = 0  # messages sent whose result is still to come
        self.interrupts: list[str] = []  # interrupt requests waiting for the turn's end
        self.model_asks: list[str] = []  # set_model requests waiting for the switch
        self.last_status: TurnStatus | None = None
        self.initialized = False
        self.replay = replay
        self.states = states
        self.state = SessionState.IDLE
        self.sent: list[tuple[str, Any]] = []  # messages owed a turn: (uuid, what was sent)
        self.controls: Controls | None = None
        self._asker: PermissionAsker | None = None

    # -- the session's Events -------------------------------------------------------

    def emit(self, event: Event) -> None:
        if isinstance(event, Notice):
            self._say(f"{event.level}: {event.text}")
            if event.level is not NoticeLevel.INFO:
                self._model_refused(event.text)
        elif isinstance(event, ModelChanged):
            waiting, self.model_asks = self.model_asks, []
            for request_id in waiting:
                self.wire.answer(request_id)
        elif isinstance(event, PermissionRequested):
            self._question(event)
        elif isinstance(event, SteerState) and event.state is SteerStatus.RETURNED:
            self._not_run(event)
        elif isinstance(event, TurnStarted):
            self._set_state(SessionState.RUNNING)
        self.messages(event)
        if isinstance(event, TurnStarted):
            self._turn_started(event)
        if self.controls is not None:
            for message in self.controls.see(event):
                self.wire.send(message)

    def _set_state(self, state: SessionState) -> None:
        if self.states is None or state == self.state:
            return
        self.state = state
        frame = {"type": "system", "subtype": "session_state_changed", "state": str(state),
                 "uuid": str(uuid.uuid4()), "session_id": self.messages.session_id}
        self.wire.send(frame if self.states else {**frame, "sdk_host_only": True})

    def _turn_started(self, started: TurnStarted) -> None:
        """The message this turn runs: its uuid names the turn's checkpoint."""
        if not self.sent:
            return  # a turn of a custom command's or a hook's, not a message's
        message_uuid, message = self.sent.pop(0)
        if self.controls is not None:
            self.controls.turns[message_uuid] = started.turn_id
        if self.replay:
            self.wire.send({"type": "user", "message": message,
                            "session_id": self.messages.session_id,
                            "parent_tool_use_id": None, "uuid": message_uuid,
                            "isReplay": True})

    def _question(self, asked: PermissionRequested) -> None:
        assert self.session is not None
        if self._asker is not None:
            self._asker(asked)
        else:
            self.session.submit(Decide(tool_use_id=asked.tool_use_id, decision=Decision.DENY,
                                       note=NO_ONE_TO_ASK))

    def _model_refused(self, why: str) -> None:
        """A model switch that did not happen is said to the app that asked for it."""
        waiting, self.model_asks = self.model_asks, []
        for request_id in waiting:
            self.wire.refuse(request_id, why)

    def _turn_ended(self, ended: TurnEnded) -> None:
        self.owed = max(0, self.owed - 1)
        self.last_status = ended.status
        waiting, self.interrupts = self.interrupts, []
        for request_id in waiting:
            self.wire.answer(request_id)
        if self.owed == 0:
            self._set_state(SessionState.IDLE)

    def _not_run(self, returned: SteerState) -> None:
        """A message that waited behind an interrupted turn: its own result says so."""
        if self.sent:
            self.sent.pop(0)
        self._unrun(f"not run: the turn before it was interrupted ({returned.text[:80]!r})")

    def _unrun(self, why: str) -> None:
        """The result of a message that started no turn, saying why."""
        self.owed = max(0, self.owed - 1)
        self.wire.send({
            "type": "result", "subtype": "error_during_execution", "is_error": True,
            "result": "", "session_id": self.messages.session_id, "num_turns": 0,
            "duration_ms": 0, "duration_api_ms": 0, "total_cost_usd": 0.0, "usage": {},
            "permission_denials": [], "stop_reason": None, "errors": [why],
        })
        if self.owed == 0:
            self._set_state(SessionState.IDLE)

    # -- the app's lines ------------------------------------------------------------

    def start(self, session: Session) -> None:
        self.session = session
        self.messages.attach(session)
        self.controls = Controls(self.wire, session)
        if self.ask_app:
            self._asker = PermissionAsker(self.wire, session.submit, session.workspace,
                                          on_asking=self._asking)

    def _asking(self, waiting: bool) -> None:
        """The app's permission callback is asked (``requires_action``), or answered
        (the turn runs on; one that ended meanwhile stays ``idle``)."""
        if waiting and self.state is not SessionState.IDLE:
            self._set_state(SessionState.REQUIRES_ACTION)
        elif not waiting and self.state is SessionState.REQUIRES_ACTION:
            self._set_state(SessionState.RUNNING)

    def line(self, line: dict[str, Any]) -> None:
        kind = line.get("type")
        if kind == "user":
            self._user(line)
        elif kind == "control_request":
            self._control(line)
        elif kind == "control_response":
            self.wire.resolve(line)
        elif kind in ("control_cancel_request", "keep_alive", "update_environment_variables"):
            pass  # nothing of ours waits on the app's requests' cancellation
        else:
            self._say(f"error: stdin: a line of type {kind!r} is not one agent-tui reads "
                      "(user, control_request, control_response)")

    def _user(self, line: dict[str, Any]) -> None:
        assert self.session is not None
        try:
            message, verbatim = user_message(line)
        except BadMessage as exc:
            self._say(f"error: stdin: {exc}")
            self.owed += 1  # owed the result that says it was not sent
            self._unrun(f"not sent: {exc}")
            return
        op: UserMessage | FollowUp = message if self.owed == 0 else FollowUp(
            text=message.text, images=message.images)
        self.owed += 1
        given = line.get("uuid")
        self.sent.append((given if isinstance(given, str) and given else str(uuid.uuid4()),
                          line.get("message")))
        if verbatim or not message.text.startswith("/"):
            self.session.submit(op)
            return
        from agent_tui.headless import _submit_message

        refused: list[str] = []

        def tell(event: Event) -> None:
            if isinstance(event, Notice) and event.level is NoticeLevel.ERROR:
                refused.append(event.text)  # an unknown command, an image refused: not sent
            self.emit(event)

        _submit_message(self.session, op, tell)
        if refused:
            self.sent.pop()
            self._unrun(refused[-1])

    def _control(self, line: dict[str, Any]) -> None:
        assert self.session is not None
        request_id = str(line.get("request_id", ""))
        given = line.get("request")
        body: dict[str, Any] = given if isinstance(given, dict) else {}
        subtype = body.get("subtype")
        match subtype:
            case "initialize":
                self.initialize(request_id, body)
            case "interrupt":
                if self.owed or self.session.busy:
                    self.interrupts.append(request_id)  # answered at the turn's end
                    self.session.submit(Interrupt())
                else:
                    self.wire.answer(request_id)
            case "set_permission_mode":
                word = str(body.get("mode"))
                mode = CLAUDE_MODE_NAMES.get(word)  # the app speaks Claude Code's words
                if mode is None:
                    self.wire.refuse(request_id, f"permission mode {word!r}: agent-tui takes "
                                     f"{', '.join(CLAUDE_MODE_NAMES)} (Claude Code's auto "
                                     "mode, a classifier, is not one of them)")
                    return
                self.session.submit(SetPermissionMode(mode=mode))
                self.wire.answer(request_id)
            case "set_model":
                model = body.get("model") or self.session.deps.provider.default_model
                self.model_asks.append(request_id)  # answered once it is switched
                self.session.submit(SetModel(model=str(model)))
            case str() if subtype in SUBTYPES and self.controls is not None:
                self.controls.handle(request_id, subtype, body)
            case _:
                self.wire.refuse(request_id, f"agent-tui does not support the control request "
                                 f"{subtype!r}")

    def initialize(self, request_id: str, body: dict[str, Any]) -> None:
        session = self.session
        assert session is not None
        if self.initialized:
            self.wire.refuse(request_id, "already initialized")
            return
        self.initialized = True
        try:
            for key in ("skills", "excludeDynamicSections", "systemPromptSnapshot",
                        "forwardSubagentText"):
                if body.get(key):
                    raise SetupError(f"initialize: {key} is not supported by agent-tui")
            add_agents(session.tools, body.get("agents"))
            add_callbacks(session.deps.hooks, hook_commands(body.get("hooks")), self.wire)
        except SetupError as exc:
            self.wire.refuse(request_id, str(exc))
            return
        init = self.messages.init()
        self.wire.answer(request_id, {
            "commands": [{"name": name, "description": "", "argumentHint": ""}
                         for name in init["slash_commands"]],
            "agents": [], "output_style": "default", "available_output_styles": ["default"],
            "models": [{"value": session.deps.config.model, "displayName": session.deps.config.model,
                        "description": ""}],
            "account": {}, "pid": os.getpid(), "claude_code_version": CLAUDE_CODE_PROTOCOL_VERSION,
            "current_permission_mode": init["permissionMode"],
            "hook_on_failure_supported": True,
        })

    # -- helpers ----------------------------------------------------------------------

    def _say(self, text: str) -> None:
        try:
            print(f"agent-tui: {text}", file=self.err, flush=True)
        except (BrokenPipeError, ValueError):
            pass

    def _reader_left(self) -> None:
        if self.session is not None:
            self.session.interrupt_now()

    def exit_code(self) -> int:
        return EXIT_ERROR if self.last_status is TurnStatus.FAILED else EXIT_OK


async def run_sdk(
    make_session: MakeSession,
    *,
    prompt: str | None,
    input_format: str,
    partial: bool,
    ask_app: bool,
    replay: bool = False,
    stdin: IO[str] | None = None,
    on_hard_exit: Callable[[], object] = lambda: None,
) -> int:
    loop = asyncio.get_running_loop()
    run = SdkRun(partial=partial, ask_app=ask_app, out=sys.stdout, err=sys.stderr,
                 replay=replay, states=state_frames(os.environ))
    inbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    if input_format == "stream-json":
        _read_lines(stdin or sys.stdin, inbox, loop, run._say)
    first = await inbox.get() if input_format == "stream-json" else _EOF
    session = make_session(run.emit, run.wire)
    run.start(session)
    runner = asyncio.create_task(session.run())
    sigints = 0

    def on_sigint() -> None:
        nonlocal sigints
        sigints += 1
        if sigints > 1:
            on_hard_exit()
            os._exit(EXIT_INTERRUPTED)
        session.interrupt_now()
        inbox.put_nowait(_EOF)

    def on_hangup(_signum: int) -> None:  # SIGTERM (the SDK's close), SIGHUP: as an interrupt
        session.interrupt_now()
        inbox.put_nowait(_EOF)

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    hangup = Hangup(on_hard_exit)
    hangup.install(on_hangup, deadline_s=PRINT_DEADLINE_S)
    try:
        if prompt:
            run.owed += 1
            session.submit(UserMessage(text=prompt))
        line = first
        while line is not _EOF and not runner.done():
            run.line(line)
            line = await inbox.get()
        run.wire.end()
        idle = asyncio.create_task(session.wait_idle())
        await asyncio.wait({idle, runner}, return_when=asyncio.FIRST_COMPLETED)
        idle.cancel()
    finally:
        if not runner.done():
            session.submit(Shutdown())
            await runner
        loop.remove_signal_handler(signal.SIGINT)
        hangup.uninstall()
    if hangup.exit_code is not None:
        return hangup.exit_code  # 143 for SIGTERM, as Claude Code's
    return EXIT_INTERRUPTED if sigints else run.exit_code()


def _read_lines(
    stdin: IO[str], inbox: asyncio.Queue[dict[str, Any] | None], loop: asyncio.AbstractEventLoop,
    say: Callable[[str], None],
) -> None:
    """stdin's JSON lines into ``inbox`` (on a thread: stdin may block); None at its end."""

    def reader() -> None:
        try:
            for number, text in enumerate(stdin, 1):
                if not text.strip():
                    continue
                try:
                    line = json.loads(text)
                except (ValueError, RecursionError) as exc:
                    say(f"error: stdin line {number}: not JSON ({exc})")
                    continue
                if isinstance(line, dict):
                    loop.call_soon_threadsafe(inbox.put_nowait, line)
                else:
                    say(f"error: stdin line {number}: not a JSON object")
        finally:
            try:
                loop.call_soon_threadsafe(inbox.put_nowait, _EOF)
            except RuntimeError:
                pass  # the loop has ended

    threading.Thread(target=reader, name="sdk-stdin", daemon=True).start()
