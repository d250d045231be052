"""Shared helpers for core tests: run a real Session and watch its Events; the real
SDK against the fake API, answering sub-agents by their task."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
from pydantic import BaseModel

from agent_tui.cancel import Cancelled
from agent_tui.protocol import Event, RenameSession, Shutdown
from agent_tui.core.history.history import check_model_view, model_view, result_wording
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import ToolResultRecord
from agent_tui.core.calls.permission import AllowAll, PermissionPolicy
from agent_tui.core.session.session import Session
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult, ToolSet
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.providers.base import Provider
from tests.fake_api import Reply


def plain(obj: Any) -> Any:
    """A request body (or part) without its prompt-cache marks, for comparing content."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    return obj


class Recorder:
    """Collects events (from any thread) and waits for conditions on them."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self._lock:
            self.events.append(event)

    def of(self, kind: str) -> list[Any]:
        with self._lock:
            return [e for e in self.events if e.type == kind]

    def tool_states(self, tool_use_id: str | None = None, name: str | None = None) -> list[str]:
        return [
            e.state
            for e in self.of("tool_state")
            if (tool_use_id is None or e.tool_use_id == tool_use_id)
            and (name is None or e.name == name)
        ]

    def final_tool(self, name: str) -> Any:
        return [e for e in self.of("tool_state") if e.name == name][-1]

    async def wait_for(self, pred: Callable[[], bool], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > deadline:
                raise AssertionError(f"condition not met in {timeout}s; events: {self.summary()}")
            await asyncio.sleep(0.005)

    async def wait_type(self, kind: str, count: int = 1, timeout: float = 10.0) -> None:
        await self.wait_for(lambda: len(self.of(kind)) >= count, timeout)

    def summary(self) -> list[str]:
        with self._lock:
            out = []
            for e in self.events:
                if e.type == "text_delta":
                    continue
                bits = [e.type] + [
                    str(getattr(e, f)) for f in ("name", "state", "status", "text") if getattr(e, f, None)
                ]
                out.append(":".join(bits)[:120])
            return out


def told(result: ToolResult, name: str = "tool") -> str:
    """What the model is told about a tool's ``result`` (recorded as the core does)."""
    record = ToolResultRecord(
        turn_id="t1", tool_use_id="toolu_told", name=name, state=result.outcome,
        content=result.content, is_error=result.is_error, side_effects=result.side_effects,
        exit_code=result.exit_code, signal=result.signal, ended_by=result.ended_by,
        residue=[r.model_dump() for r in result.residue], details=result.details,
    )
    return result_wording(record)[0]


class Running:
    """A session running on the test's loop."""

    def __init__(self, session: Session, rec: Recorder, journal: Journal) -> None:
        self.session = session
        self.rec = rec
        self.journal = journal
        self.task = asyncio.create_task(session.run())

    def submit(self, op: Any) -> None:
        self.session.submit(op)

    async def idle(self, timeout: float = 15.0) -> None:
        await asyncio.wait_for(self.session.wait_idle(), timeout)

    def model_view(self) -> list[dict[str, Any]]:
        view = model_view(self.journal.records)
        check_model_view(view)
        return view

    async def close(self) -> None:
        self.session.submit(Shutdown())
        await asyncio.wait_for(self.task, 15)


def start_session(
    provider: Provider,
    tools: list[Tool],
    workspace: Path,
    *,
    policy: PermissionPolicy | None = None,
    **config: Any,
) -> Running:
    rec = Recorder()
    journal = Journal()
    config.setdefault("model", "claude-test")
    deps = SessionDeps(
        config=AgentConfig(workspace=workspace, **config),
        provider=provider,
        tools=ToolSet(tools),
        policy=policy or AllowAll(),
        journal=journal,
        emit=rec,
    )
    return Running(Session(deps), rec, journal)


# ---------------------------------------------------------------- test tools


def assert_subagent_stopped(rec: Recorder, child: str, task: str = "toolu_task") -> None:
    """After an Esc: the sub-agent's call ``child`` was stopped while running, it is
    told as the ``task`` call's, and the task and the turn ended cancelled."""
    states = [e for e in rec.of("tool_state") if e.tool_use_id == child]
    assert states[-1].state == "cancelled_while_running"
    assert all(e.parent_tool_use_id == task for e in states)
    assert rec.final_tool("task").state == "cancelled_while_running"
    assert rec.of("turn_ended")[-1].status == "cancelled"


class _Note(BaseModel):
    note: str = ""


class QuickTool(Tool):
    """Read-only; answers at once."""

    name = "quick"
    description = "answers at once"
    Input = _Note
    read_only = True

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def run(self, args: _Note, ctx: ToolContext) -> ToolResult:
        self.calls.append(args.note)
        return ToolResult.ok(f"quick result {args.note}")


class SlowTool(Tool):
    """Side-effecting; runs until released or cancelled, and says which."""

    name = "slow"
    description = "runs until released"
    Input = _Note

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.calls: list[str] = []

    async def run(self, args: _Note, ctx: ToolContext) -> ToolResult:
        self.calls.append(args.note)
        self.started.set()
        ctx.emit_output("working...\n")
        try:
            async with ctx.scope.linked():
                await self.release.wait()
        except Cancelled as exc:
            return ToolResult(
                outcome="cancelled_while_running",
                content="working...",
                is_error=True,
                ended_by=exc.reason,
                side_effects="unverified",
            )
        return ToolResult.ok("slow finished")


class StubbornTool(Tool):
    """Ignores cancellation entirely: the core must not wait for it forever."""

    name = "stubborn"
    description = "never stops"
    Input = _Note

    async def run(self, args: _Note, ctx: ToolContext) -> ToolResult:
        await asyncio.get_running_loop().run_in_executor(None, time.sleep, 3)
        return ToolResult.ok("too late")


# ---------------------------------------------------- the real SDK, sub-agents


def provider_for(srv) -> AnthropicProvider:
    return AnthropicProvider(api_key="test-key", base_url=srv.url)


def route(table: dict[tuple[str, int], Reply]):
    """Answer by (first user text, number of assistant turns so far) of the request."""

    def answer(body: dict) -> Reply:
        messages = body["messages"]
        first = messages[0]["content"][0]["text"]
        step = sum(1 for m in messages if m["role"] == "assistant")
        reply = table.get((first, step))
        return reply.copy() if reply is not None else Reply.text(f"done: {first}")

    return answer


def alive(marker: str) -> bool:
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if marker in " ".join(proc.info["cmdline"] or []):
                return True
        except psutil.Error:
            pass
    return False


def tree(marker: str) -> str:
    return f"bash -c 'sleep 300; : {marker}' & sleep 300; : {marker}"


def serve(fake_api, table) -> None:
    fake_api.enqueue(*[route(table) for _ in range(30)])


async def handled(run: Running, name: str) -> None:
    """Wait until every op sent before now is handled: ops are handled in order, and
    a rename is answered at once."""
    run.submit(RenameSession(name=name))
    await run.rec.wait_for(lambda: any(name in n.text for n in run.rec.of("notice")))


async def idle_session(fake_api: Any, tmp_path: Path) -> Running:
    """A session with no tools, its loop running, and one reply for a turn."""
    fake_api.enqueue(Reply.text("after it"))
    run = start_session(provider_for(fake_api), [], tmp_path)
    await handled(run, "started")
    return run
