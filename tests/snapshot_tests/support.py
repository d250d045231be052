"""Helpers for the UI tests: a fake session that plays fixed events, a real Session
built on the scripted provider with tools that wait to be stopped, and waits that
are bounded (``pilot.pause()`` does not wait for the core's thread)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent_tui.cancel import Cancelled
from agent_tui.protocol import Event, SessionClosed, Shutdown, ToolState, Verdict
from agent_tui.core.journal.journal import Journal
from agent_tui.core.calls.permission import AllowAll, Ruling
from agent_tui.core.session.session import Session
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult, ToolSet
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.providers.scripted import Block, Rule, Script, ScriptedProvider

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")


class FakeSession:
    """Session-like: plays ``events`` when run, records the ops it is given and answers
    those named in ``replies`` (op type -> events, or a function of the op)."""

    def __init__(
        self,
        emit: Callable[[Event], None],
        events: Iterable[Event] = (),
        replies: dict[type, Any] | None = None,
    ) -> None:
        self.emit = emit
        self.events = list(events)
        self.replies = dict(replies or {})
        self.ops: list[Any] = []
        self.interrupts = 0
        self._stop = threading.Event()
        self.workspace = Path.cwd()
        self.policy: Any = AllowAll()
        self.badges: list[str] = []
        self.background: list[Any] = []

    def submit(self, op: Any) -> None:
        self.ops.append(op)
        if isinstance(op, Shutdown):
            self._stop.set()
        reply = self.replies.get(type(op))
        if reply is not None:
            for event in reply(op) if callable(reply) else reply:
                self.emit(event)

    def interrupt_now(self) -> None:
        self.interrupts += 1

    def past_records(self) -> list[Any]:
        return []

    async def run(self) -> None:
        for event in self.events:
            self.emit(event)
        while not self._stop.is_set():
            await asyncio.sleep(0.01)
        self.emit(SessionClosed())


def fake_factory(
    events: Iterable[Event], replies: dict[type, Any] | None = None, *,
    workspace: Path | None = None, policy: Any = None, background: list[Any] | None = None,
    badges: list[str] | None = None,
) -> tuple[Callable[[Callable[[Event], None]], FakeSession], list[FakeSession]]:
    made: list[FakeSession] = []

    def make(emit: Callable[[Event], None]) -> FakeSession:
        session = FakeSession(emit, events, replies)
        if workspace is not None:
            session.workspace = workspace
        if policy is not None:
            session.policy = policy
        if background is not None:
            session.background = background
        if badges is not None:
            session.badges = badges
        made.append(session)
        return session

    return make, made


# ----------------------------------------------------------------- a real Session


class _SlowInput(BaseModel):
    seconds: float = 30.0


class SlowTool(Tool):
    """Prints a line, then waits until stopped, ``seconds`` pass, or ``gate`` is set."""

    name = "slow"
    description = "waits"
    Input = _SlowInput

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.gate = gate

    def summary(self, args: _SlowInput) -> str:
        return f"wait {args.seconds:g} s"

    async def run(self, args: _SlowInput, ctx: ToolContext) -> ToolResult:
        ctx.emit_output("step 1 of 3\n")
        try:
            async with ctx.scope.linked():
                deadline = time.monotonic() + args.seconds
                while time.monotonic() < deadline and not (self.gate and self.gate.is_set()):
                    await asyncio.sleep(0.01)
        except Cancelled as exc:
            return ToolResult(
                outcome=ToolState.CANCELLED_WHILE_RUNNING, content="stopped", is_error=True,
                ended_by=exc.reason, signal="SIGTERM",
            )
        return ToolResult.ok("waited")


class QuickTool(Tool):
    name = "quick"
    description = "returns at once"
    Input = _SlowInput
    read_only = True

    async def run(self, args: _SlowInput, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok("done")


class AskForSlow(AllowAll):
    """Asks before ``slow``, allows the rest."""

    def check(self, tool: Tool, args: BaseModel) -> Ruling:
        if tool.name == "slow":
            return Ruling(verdict=Verdict.ASK, reason="slow writes")
        return Ruling(verdict=Verdict.ALLOW)

    def remember(self, tool: Tool, args: BaseModel) -> None:
        pass


def demo_script(seconds: float = 30.0) -> Script:
    return Script(
        rules=[
            Rule(
                match="slow",
                replies=[
                    [Block(text="Starting the slow job."), Block(tool="slow", input={"seconds": seconds})],
                    [Block(text="The slow job finished.")],
                ],
            ),
            Rule(
                match="long",
                replies=[[Block(text="This is a long answer that streams slowly. " * 20)]],
            ),
            Rule(
                match="quick",
                replies=[
                    [Block(text="Quick one."), Block(tool="quick", input={})],
                    [Block(text="All done.")],
                ],
            ),
        ],
        default=[[Block(text="Hello from the script.")]],
    )


def real_factory(
    *,
    seconds: float = 30.0,
    ask: bool = False,
    delay: float = 0.01,
    workspace: Path | None = None,
    gate: threading.Event | None = None,
) -> Callable[[Callable[[Event], None]], Session]:
    def make(emit: Callable[[Event], None]) -> Session:
        deps = SessionDeps(
            config=AgentConfig(workspace=workspace or Path.cwd(), model="scripted", cleanup_budget=2.0),
            provider=ScriptedProvider(demo_script(seconds), delay=delay),
            tools=ToolSet([SlowTool(gate), QuickTool()]),
            policy=AskForSlow() if ask else AllowAll(),
            journal=Journal(),
            emit=emit,
        )
        return Session(deps)

    return make


async def wait_until(pilot: Any, condition: Callable[[], bool], timeout: float = 5.0, what: str = "") -> None:
    """Let the app run until ``condition()`` holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.02)


def utc_hhmm(epoch: float) -> str:
    """A time formatter that does not depend on the machine's time zone."""
    return time.strftime("%H:%M", time.gmtime(epoch))


async def settle(pilot: Any, app: Any, n_events: int) -> None:
    """Wait until the app has rendered ``n_events`` events, then flush and paint."""
    await wait_until(pilot, lambda: app.events_handled >= n_events, what=f"{n_events} events")
    app.flush()
    await pilot.pause()
    await pilot.pause()


def real_rewind_factory(workspace: Path, state: Path) -> Callable[[Callable[[Event], None]], Session]:
    """A real Session with checkpoints and the real file tools: the message "write"
    makes the model write ``notes.txt`` (so a rewind has a file to restore)."""
    from agent_tui.checkpoints import Checkpoints
    from agent_tui.tools.registry import default_tools

    script = Script(
        rules=[
            Rule(
                match="write",
                replies=[
                    [Block(text="Writing."), Block(tool="write_file", input={"path": "notes.txt", "content": "changed\n"})],
                    [Block(text="Written.")],
                ],
            ),
        ],
        default=[[Block(text="Hello.")]],
    )

    def make(emit: Callable[[Event], None]) -> Session:
        checkpoints = Checkpoints(state / "checkpoints", workspace)
        tools = default_tools(
            workspace, on_before_write=checkpoints.record_pre_image,
            on_after_write=checkpoints.record_written,
        )
        deps = SessionDeps(
            config=AgentConfig(workspace=workspace, model="scripted", cleanup_budget=2.0),
            provider=ScriptedProvider(script, delay=0.0),
            tools=tools,
            policy=AllowAll(),
            journal=Journal(),
            emit=emit,
            checkpoints=checkpoints,
        )
        return Session(deps)

    return make
