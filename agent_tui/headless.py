"""Print mode: the core driven without a screen (``agent-tui -p``).

Output ``text`` writes the model's text to stdout (notices and tool states to
stderr); ``stream-json`` writes every Event as one JSON line. With input
``stream-json``, stdin carries ops (user_message, follow_up, interrupt), one per
line; at end of input the agent finishes what runs and exits. The first SIGINT
interrupts the turn (exit 130 after cleanup); a second exits at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from pydantic import ValidationError

from agent_tui.protocol import (
    OP_ADAPTER,
    Event,
    Notice,
    NoticeLevel,
    Shutdown,
    TextDelta,
    ToolStateChanged,
    TurnEnded,
    UserMessage,
)
from agent_tui.core.session import Session
from agent_tui.protocol.states import TurnStatus

EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 130


class Printer:
    """Renders Events for print mode."""

    def __init__(self, fmt: str, out: IO[str], err: IO[str]) -> None:
        self.fmt = fmt
        self.out = out
        self.err = err
        self.statuses: list[TurnStatus] = []
        self._midline = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnEnded):
            self.statuses.append(event.status)
        if self.fmt == "stream-json":
            self.out.write(event.model_dump_json(exclude_none=True) + "\n")
            self.out.flush()
            return
        if isinstance(event, TextDelta):
            self.out.write(event.text)
            self.out.flush()
            self._midline = not event.text.endswith("\n")
        elif isinstance(event, ToolStateChanged) and event.state != "streaming":
            self._newline()
            detail = f" ({event.detail})" if event.detail else ""
            self.err.write(f"[{event.name} {event.tool_use_id[-6:]}] {event.state}{detail}\n")
        elif isinstance(event, Notice):
            self._newline()
            self.err.write(f"{event.level}: {event.text}\n")
        elif isinstance(event, TurnEnded):
            self._newline()
            if event.status is not TurnStatus.COMPLETED:
                self.err.write(f"turn {event.status}{': ' + event.detail if event.detail else ''}\n")
        self.err.flush()

    def _newline(self) -> None:
        if self._midline:
            self.out.write("\n")
            self.out.flush()
            self._midline = False


def exit_code(statuses: list[TurnStatus], interrupted: bool) -> int:
    if interrupted or (statuses and statuses[-1] is TurnStatus.CANCELLED):
        return EXIT_INTERRUPTED
    if not statuses or statuses[-1] is TurnStatus.FAILED:
        return EXIT_ERROR
    return EXIT_OK


async def run_print(
    make_session: Callable[[Callable[[Event], None]], Session],
    *,
    prompt: str | None,
    output_format: str,
    input_format: str,
    stdin: IO[str] | None = None,
    on_hard_exit: Callable[[], None] = lambda: None,
) -> int:
    printer = Printer(output_format, sys.stdout, sys.stderr)
    session = make_session(printer)
    runner = asyncio.create_task(session.run())
    loop = asyncio.get_running_loop()
    sigints = 0

    def on_sigint() -> None:
        nonlocal sigints
        sigints += 1
        if sigints == 1:
            session.interrupt_now()
        else:
            on_hard_exit()
            os._exit(EXIT_INTERRUPTED)

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        if prompt:
            session.submit(UserMessage(text=prompt))
        if input_format == "stream-json":
            await _pump_ops(session, stdin or sys.stdin, printer)
        idle = asyncio.create_task(session.wait_idle())
        await asyncio.wait({idle, runner}, return_when=asyncio.FIRST_COMPLETED)
        idle.cancel()
        if runner.done():  # the core stopped on its own: a bug, said plainly
            exc = runner.exception()
            printer(Notice(level=NoticeLevel.ERROR, text=f"the agent stopped: {exc!r}"))
            return EXIT_ERROR
    finally:
        if not runner.done():
            session.submit(Shutdown())
            await runner
        loop.remove_signal_handler(signal.SIGINT)
    if sigints:
        return EXIT_INTERRUPTED
    return exit_code(printer.statuses, interrupted=False)


async def _pump_ops(session: Session, stdin: IO[str], printer: Printer) -> None:
    """Read ops from stdin (on a thread: stdin may block) until end of input."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def bad_line(text: str) -> None:
        printer(Notice(level=NoticeLevel.ERROR, text=text))

    def reader() -> None:
        try:
            for number, line in enumerate(stdin, 1):
                if not line.strip():
                    continue
                try:
                    op: Any = OP_ADAPTER.validate_python(json.loads(line))
                except (ValueError, ValidationError, RecursionError) as exc:
                    detail = str(exc).splitlines()[0]
                    loop.call_soon_threadsafe(bad_line, f"stdin line {number}: not an op ({detail})")
                    continue
                session.submit(op)
        finally:
            loop.call_soon_threadsafe(lambda: done.done() or done.set_result(None))

    threading.Thread(target=reader, name="stdin-ops", daemon=True).start()
    await done
