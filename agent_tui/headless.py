"""Print mode: the core driven without a screen (``agent-tui -p``).

Output ``text`` writes the model's text to stdout (notices and tool states to
stderr); ``json`` writes one result object when the run ends and nothing else on
stdout (notices and tool states to stderr, as for text); ``stream-json`` writes a
``session_started`` line, every Event as one JSON line, then the same result object
(``protocol/run_result.py``: Claude Code's shape). With input
``stream-json``, stdin carries ops (user_message, follow_up, interrupt), one per
line; at end of input the agent finishes what runs and exits. A message (the prompt,
or one on stdin) goes with the image files its text names and the images it carries
as data (``images``), as in the TUI; a command line (``-p "/name args"``) runs that custom
command as the TUI does, and an unknown name is an error. The first SIGINT
stops reading input and interrupts the turn (exit 130 after cleanup; 0 when no turn
was running); a second exits at once. SIGTERM and SIGHUP do the same (exit 143 and
129; a second, or 15 s, and every process of ours is killed at once).

A reader that goes away (``agent-tui -p ... | head``) is an interrupt too: the
turn ends as interrupted, what it started is ended, and the process exits 130
instead of writing into a closed pipe forever.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any, assert_never

from pydantic import ValidationError

from agent_tui.core.history.export import final_answer
from agent_tui.core.session.session import Session
from agent_tui.permissions import Permissions
from agent_tui.protocol import (
    OP_ADAPTER, BackgroundJobChanged, Compaction, ContextReport, ConversationCleared, Decide,
    Decision, Event, FollowUp, HookStateChanged, ModelChanged, PermissionModeChanged, Models,
    Notice, NoticeLevel, OutputFormat, PermissionDenial, PermissionRequested, ResponseStarted,
    ResultSubtype, ResultUsage, RetryScheduled, Rewound, RewindPlanned, RewindPoints, RunResult,
    SendNow, SessionStartedLine, SessionClosed, Shutdown, SteerState, TextDelta, ThinkingDelta,
    ToolOutput, ToolState, ToolStateChanged, TurnEnded, TurnStarted, TurnStateChanged,
    TurnStatus, Usage, UserMessage,
)
from agent_tui.protocol.tool_names import claude_input, claude_name
from agent_tui.files.image_paths import attach_named
from agent_tui.runtime.hangup import PRINT_DEADLINE_S, Hangup
from agent_tui.runtime.process.output import terminal_safe
from agent_tui.files.images import ImageRefused

EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 130

# The answer to a permission question that reaches print mode anyway (the policy and
# the hooks already deny what would ask here): refused at once, never waited for.
NO_ONE_TO_ASK = ("not run: it needs permission and there is no one to ask in print mode "
                 "(allow it with --allowedTools or a permission rule, or choose a mode)")
TOKEN_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                "output_tokens")


class Tally:
    """What the result object says about the run, gathered from its Events."""

    def __init__(self) -> None:
        self.usage = ResultUsage()
        self.cost: float | None = 0.0  # None once a request's price is unknown
        self.denied: list[ToolStateChanged] = []
        self.last_end: TurnEnded | None = None
        self.failures: list[str] = []  # error notices: why a run with no turn ran none

    def see(self, event: Event) -> None:
        if isinstance(event, Usage):
            for key in TOKEN_FIELDS:
                setattr(self.usage, key, getattr(self.usage, key) + getattr(event, key))
            self.usage.server_tool_use.web_search_requests += event.web_search_requests
            self.cost = None if self.cost is None or event.cost_usd is None else (
                self.cost + event.cost_usd)
        elif isinstance(event, ToolStateChanged) and event.state is ToolState.DENIED:
            self.denied.append(event)
        elif isinstance(event, TurnEnded):
            self.last_end = event
        elif isinstance(event, Notice) and event.level is NoticeLevel.ERROR:
            self.failures.append(event.text)

    def denials(self, workspace: str) -> list[PermissionDenial]:
        """The refused calls, named and shaped as Claude Code's tools."""
        return [PermissionDenial(tool_name=claude_name(e.name), tool_use_id=e.tool_use_id,
                                 tool_input=claude_input(e.name, e.input or {}, workspace))
                for e in self.denied]


class Printer:
    """Renders Events for print mode; never raises into the core.

    When stdout's reader goes away, ``on_closed`` runs once (the session is
    interrupted) and nothing more is written there; a closed stderr is silenced.
    In stream-json, what the session says before :meth:`open` (while it is being
    built) waits, so that the ``session_started`` line comes first.
    """

    def __init__(
        self, fmt: OutputFormat | str, out: IO[str], err: IO[str],
        on_closed: Callable[[], None] = lambda: None,
    ) -> None:
        self.fmt = OutputFormat(fmt)
        self.out = out
        self.err = err
        self.on_closed = on_closed
        self.statuses: list[TurnStatus] = []
        self.tally = Tally()
        self.closed = False  # stdout's reader went away
        self._err_closed = False
        self._midline = False
        self._held: list[Event] | None = [] if self.fmt is OutputFormat.STREAM_JSON else None
        # Answers a permission question: there is no one to ask (set by run_print).
        self.on_question: Callable[[PermissionRequested], None] = lambda _asked: None

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnEnded):
            self.statuses.append(event.status)
        self.tally.see(event)
        if isinstance(event, PermissionRequested):
            self.on_question(event)
        match self.fmt:
            case OutputFormat.STREAM_JSON:
                if self._held is not None:
                    self._held.append(event)
                else:
                    self._line(event)
            case OutputFormat.TEXT | OutputFormat.JSON:
                self._show(event)
            case _:
                assert_never(self.fmt)

    def open(self, started: SessionStartedLine | None) -> None:
        """stream-json: the opening line (None: the session could not be built), then
        what waited for it."""
        held, self._held = self._held, None
        if held is None:
            return
        if started is not None:
            self._line(started)
        for event in held:
            self._line(event)

    def finish(self, result: RunResult) -> None:
        """json and stream-json: the result object, the last thing on stdout."""
        if self.fmt is not OutputFormat.TEXT:
            self._write(self.out, result.model_dump_json() + "\n")

    def _line(self, line: Event | SessionStartedLine) -> None:
        self._write(self.out, line.model_dump_json(exclude_none=True) + "\n")

    def _show(self, event: Event) -> None:
        """Text output: the model's words on stdout; tool states, notices and a turn that
        did not complete on stderr. One case per Event type (``assert_never``: a new
        type must be placed here)."""
        match event:
            case TextDelta():
                if self.fmt is OutputFormat.JSON:
                    return  # the answer is the result object's
                self._write(self.out, event.text)
                self._midline = not event.text.endswith("\n")
            case ToolStateChanged():
                if event.state is ToolState.STREAMING:
                    return
                self._newline()
                detail = f" ({event.detail})" if event.detail else ""
                self._write(self.err, f"[{event.name} {event.tool_use_id[-6:]}] {event.state}{detail}\n")
            case Notice():
                self._newline()
                self._write(self.err, f"{event.level}: {event.text}\n")
            case TurnEnded():
                self._newline()
                if event.status is not TurnStatus.COMPLETED:
                    self._write(self.err, f"turn {event.status}"
                                f"{': ' + event.detail if event.detail else ''}\n")
            case (TurnStarted() | TurnStateChanged() | ThinkingDelta() | ToolOutput()
                  | PermissionRequested() | SteerState() | RetryScheduled() | HookStateChanged()
                  | RewindPoints() | RewindPlanned() | Rewound() | BackgroundJobChanged() | Models()
                  | SessionClosed() | Usage() | ResponseStarted() | Compaction() | ModelChanged()
                  | ConversationCleared() | ContextReport() | PermissionModeChanged()):
                pass  # not part of the text output (stream-json carries every event)
            case _:
                assert_never(event)

    def _newline(self) -> None:
        if self._midline:
            self._write(self.out, "\n")
            self._midline = False

    def _write(self, stream: IO[str], text: str) -> None:
        if (self.closed if stream is self.out else self._err_closed):
            return
        try:
            if self.fmt is OutputFormat.TEXT or stream is self.err:
                text = _for_terminal(stream, text)
            stream.write(text)
            stream.flush()
        except BrokenPipeError:
            _silence(stream)
            if stream is self.out:
                self.closed = True
                self.on_closed()
            else:
                self._err_closed = True


def _silence(stream: IO[str]) -> None:
    """Point a stream whose reader left at /dev/null, so that what is still buffered
    (flushed again at exit) goes nowhere instead of raising."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return  # not a file (a test's buffer)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def exit_code(statuses: list[TurnStatus], interrupted: bool, over_budget: bool = False) -> int:
    """130 for the user's interrupt; 1 for a failure or the spending cap (Claude Code's)."""
    if interrupted or (statuses and statuses[-1] is TurnStatus.CANCELLED and not over_budget):
        return EXIT_INTERRUPTED
    return EXIT_OK if statuses and statuses[-1] is TurnStatus.COMPLETED else EXIT_ERROR


async def run_print(
    make_session: Callable[[Callable[[Event], None]], Session],
    *,
    prompt: str | None,
    output_format: OutputFormat | str,
    input_format: str,
    stdin: IO[str] | None = None,
    on_hard_exit: Callable[[], object] = lambda: None,
    init_only: bool = False,
) -> int:
    """One print-mode run (``init_only``: the Setup and SessionStart hooks, no prompt)."""
    began = time.monotonic()
    loop = asyncio.get_running_loop()
    stop_input: asyncio.Future[None] = loop.create_future()  # read no more ops

    def stop(interrupt: Callable[[], None]) -> None:
        interrupt()
        if not stop_input.done():
            stop_input.set_result(None)

    printer = Printer(output_format, sys.stdout, sys.stderr,
                      on_closed=lambda: stop(session.interrupt_now))
    try:
        session = make_session(printer)
    except BaseException:
        printer.open(None)  # what it said before it could not go on
        raise
    printer.open(session_started(session))
    printer.on_question = lambda asked: session.submit(Decide(
        tool_use_id=asked.tool_use_id, decision=Decision.DENY, note=NO_ONE_TO_ASK))
    opened_with = len(session.past_records())
    runner = asyncio.create_task(session.run())
    sigints = 0
    interrupted_turn = False

    def interrupt(_signum: int = 0) -> None:  # a first SIGINT, SIGTERM or SIGHUP
        nonlocal interrupted_turn
        interrupted_turn = interrupted_turn or session.busy
        stop(session.interrupt_now)

    def on_sigint() -> None:
        nonlocal sigints
        sigints += 1
        if sigints > 1:
            on_hard_exit()
            os._exit(EXIT_INTERRUPTED)
        interrupt()

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    hangup = Hangup(on_hard_exit)  # SIGTERM, SIGHUP: then exit 128 + the signal's number
    hangup.install(interrupt, deadline_s=PRINT_DEADLINE_S)
    stopped_badly = False
    try:
        if init_only:
            await session.wait_ready()
        elif prompt:
            op = await _with_offers(session, UserMessage(text=prompt), printer)
            if op is not None:
                _submit_message(session, op, printer, commands=op.text == prompt)
        if input_format == "stream-json":
            await _pump_ops(session, stdin or sys.stdin, printer, stop_input)
        idle = asyncio.create_task(session.wait_idle())
        await asyncio.wait({idle, runner}, return_when=asyncio.FIRST_COMPLETED)
        idle.cancel()
        if runner.done():  # the core stopped on its own: a bug, said plainly
            exc = runner.exception()
            printer(Notice(level=NoticeLevel.ERROR, text=f"the agent stopped: {exc!r}"))
            stopped_badly = True
    finally:
        if not runner.done():
            session.submit(Shutdown())
            await runner
        loop.remove_signal_handler(signal.SIGINT)
        hangup.uninstall()
    if hangup.exit_code is not None:
        code = hangup.exit_code
    elif stopped_badly:
        code = EXIT_ERROR
    elif (sigints or init_only) and not interrupted_turn and not printer.statuses:
        code = EXIT_OK  # a SIGINT while idle, or --init-only's hooks: nothing went wrong
    else:
        code = exit_code(printer.statuses, interrupted=interrupted_turn,
                         over_budget=session.deps.budget.over_budget)
    printer.finish(run_result(
        session, printer.tally, code, elapsed=time.monotonic() - began,
        records=session.records()[opened_with:],
    ))
    return code


def session_started(session: Session) -> SessionStartedLine:
    config = session.deps.config
    policy = session.policy
    return SessionStartedLine(
        session_id=config.session_id, model=config.model, cwd=str(config.workspace),
        permission_mode=policy.mode.value if isinstance(policy, Permissions) else "",
        tools=session.tools.names(),
    )


def run_result(
    session: Session, tally: Tally, code: int, *, elapsed: float, records: list[Any]
) -> RunResult:
    """The result object of a run that ended with exit code ``code``."""
    budget = session.deps.budget
    end = tally.last_end
    if budget.over_budget and end is not None and end.status in (TurnStatus.FAILED,
                                                                  TurnStatus.CANCELLED):
        subtype = ResultSubtype.ERROR_MAX_BUDGET_USD
    elif budget.stopped and end is not None and end.status is TurnStatus.FAILED:
        subtype = ResultSubtype.ERROR_MAX_TURNS
    elif code == EXIT_OK:
        subtype = ResultSubtype.SUCCESS
    else:
        subtype = ResultSubtype.ERROR_DURING_EXECUTION
    errors: list[str] = []
    if subtype is not ResultSubtype.SUCCESS:
        if end is None:
            errors.extend(tally.failures or ["no turn ran"])
        elif code == EXIT_INTERRUPTED:
            errors.append(end.detail or "interrupted")
        else:
            errors.append(end.detail or f"the turn {end.status}")
    return RunResult(
        subtype=subtype, is_error=subtype is not ResultSubtype.SUCCESS,
        result=final_answer(records), session_id=session.deps.config.session_id,
        num_turns=budget.made, duration_ms=round(elapsed * 1000),
        duration_api_ms=round(budget.api_seconds * 1000), total_cost_usd=tally.cost,
        usage=tally.usage, permission_denials=tally.denials(str(session.workspace)),
        errors=errors,
    )


def _settle(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


async def _with_offers(session: Session, op: Any, tell: Callable[[Event], None], where: str = "") -> Any:
    """``/mcp__server__prompt`` and ``@server:uri`` made ready (None: told, not sent)."""
    from agent_tui.mcp_catalog.message import with_offers

    return await with_offers(session.background, op, lambda why: tell(
        Notice(level=NoticeLevel.ERROR, text=f"{where}not sent: {why}")))


def _submit_message(session: Session, op: Any, tell: Callable[[Event], None], where: str = "",
                    *, commands: bool = True) -> None:
    """A message goes with the images it carries or names (``files/image_paths.py``); a
    command line runs its custom command (unless ``commands`` is off: an MCP prompt's)."""
    if commands and _command(session, op, tell, where):
        return
    try:
        op, refused = attach_named(op, session.workspace)
    except ImageRefused as exc:
        tell(Notice(level=NoticeLevel.ERROR, text=f"{where}not sent: {exc}"))
        return
    for reason in refused:
        tell(Notice(level=NoticeLevel.WARNING, text=f"{where}image not attached: {reason}"))
    session.submit(op)


def _command(session: Session, op: Any, tell: Callable[[Event], None], where: str) -> bool:
    """``/name args``: the custom command runs (``commands/use.py``), as in the TUI; an
    unknown name is an error and nothing is sent. False: ``op`` is a plain message."""
    from agent_tui.commands.line import parse_command_line

    line = parse_command_line(op.text)
    if line is None:
        return False
    from agent_tui.commands.use import custom_names, use_line  # a command's only

    def send(text: str) -> None:
        session.submit(op.model_copy(update={"text": text, "images": []}))

    def warn(text: str) -> None:
        tell(Notice(level=NoticeLevel.WARNING, text=f"{where}{text}"))

    if not use_line(session, line, send, warn):
        names = ", ".join(f"/{n}" for n in custom_names(session.workspace)) or "none here"
        tell(Notice(level=NoticeLevel.ERROR, text=(
            f"{where}unknown command /{line.name}: nothing was sent (print mode runs custom "
            f"commands: {names})")))
    return True


async def _pump_ops(
    session: Session, stdin: IO[str], printer: Printer, stop: asyncio.Future[None]
) -> None:
    """Read ops from stdin (on a thread: stdin may block) until end of input or ``stop``."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def bad_line(text: str) -> None:
        printer(Notice(level=NoticeLevel.ERROR, text=text))

    halted = threading.Event()
    stop.add_done_callback(lambda _f: halted.set())

    def reader() -> None:
        try:
            for number, line in enumerate(stdin, 1):
                if halted.is_set():
                    return
                if not line.strip():
                    continue
                try:
                    op: Any = OP_ADAPTER.validate_python(json.loads(line))
                except (ValueError, ValidationError, RecursionError) as exc:
                    detail = str(exc).splitlines()[0]
                    loop.call_soon_threadsafe(bad_line, f"stdin line {number}: not an op ({detail})")
                    continue
                if isinstance(op, (UserMessage, FollowUp, SendNow)):
                    def show(event: Event) -> None:
                        loop.call_soon_threadsafe(printer, event)

                    where = f"stdin line {number}: "
                    typed = op.text
                    op = asyncio.run_coroutine_threadsafe(_with_offers(session, op, show, where), loop).result()
                    if op is not None:
                        _submit_message(session, op, show, where, commands=op.text == typed)
                    continue
                session.submit(op)
        finally:
            try:
                loop.call_soon_threadsafe(_settle, done)
            except RuntimeError:
                pass  # the loop has ended (input stopped being read at a SIGINT)

    threading.Thread(target=reader, name="stdin-ops", daemon=True).start()
    # The thread may stay blocked on stdin after a stop: it is a daemon, and what
    # it reads from then on is never submitted.
    await asyncio.wait({done, stop}, return_when=asyncio.FIRST_COMPLETED)


def _for_terminal(stream: IO[str], text: str) -> str:
    """What reaches a terminal has no escape sequence (a pipe or a file: as it is)."""
    try:
        return terminal_safe(text) if stream.isatty() else text
    except (ValueError, OSError):
        return text
