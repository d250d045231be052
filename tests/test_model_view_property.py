"""Property: whatever the model says and wherever the user interrupts, the model view
is valid for the API and every tool result says what the journal shows."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agent_tui.cancel import Cancelled
from agent_tui.protocol import Shutdown, UserMessage
from agent_tui.core.history.history import check_model_view, model_view
from agent_tui.core.journal.records import ToolIntentRecord, ToolResultRecord, UserMessageRecord
from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.session.session import Session
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult, ToolSet
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.journal.journal import Journal
from agent_tui.providers import base
from tests.fake_api.validate import validate_messages
from tests.harness import Recorder


class _Steps(BaseModel):
    steps: int = 1


class StepTool(Tool):
    """Takes a few loop turns, checking its scope at each (a cooperative tool)."""

    name = "step"
    description = "steps"
    Input = _Steps

    def __init__(self, read_only: bool) -> None:
        self.read_only = read_only
        self.name = "look" if read_only else "step"

    async def run(self, args: _Steps, ctx: ToolContext) -> ToolResult:
        for _ in range(args.steps):
            await asyncio.sleep(0)
            if ctx.scope.cancelled:
                raise Cancelled(ctx.scope.reason)
        return ToolResult.ok(f"{self.name} done after {args.steps}")


class RandomModel(base.Provider):
    """Plays generated replies; interrupts the session after a given number of events."""

    name = "random"
    default_model = "random"

    def __init__(self, replies: list[list[tuple[str, Any]]], interrupt_at: int) -> None:
        self.replies = replies
        self.interrupt_at = interrupt_at
        self.count = 0
        self.session: Session | None = None
        self.n = 0

    def _tick(self) -> None:
        self.count += 1
        if self.count == self.interrupt_at and self.session is not None:
            self.session.interrupt_now()

    async def stream(self, request: base.ModelRequest):  # type: ignore[override]
        reply = self.replies[self.n % len(self.replies)]
        self.n += 1
        for index, (kind, value) in enumerate(reply):
            await asyncio.sleep(0)
            self._tick()
            if kind == "text":
                yield base.TextStarted(index=index)
                yield base.TextDelta(index=index, text=value)
            else:
                name, steps, complete = value
                yield base.ToolUseStarted(index=index, id=f"toolu_{self.n}_{index}", name=name)
                payload = '{"steps": %d}' % steps
                yield base.ToolInputDelta(index=index, partial_json=payload[: len(payload) // 2])
                await asyncio.sleep(0)
                self._tick()
                if not complete:
                    return  # the stream ends mid-arguments
                yield base.ToolInputDelta(index=index, partial_json=payload[len(payload) // 2 :])
            yield base.BlockStopped(index=index)
        has_tools = any(kind == "tool" for kind, _ in reply)
        yield base.MessageEnded(stop_reason="tool_use" if has_tools else "end_turn")


block = st.one_of(
    st.tuples(st.just("text"), st.sampled_from(["", " ", "ok", "Let me check."])),
    st.tuples(
        st.just("tool"),
        st.tuples(
            st.sampled_from(["step", "look", "missing"]),
            st.integers(min_value=0, max_value=4),
            st.booleans(),
        ),
    ),
)
replies = st.lists(st.lists(block, min_size=0, max_size=4), min_size=1, max_size=4)


async def play(script: list[list[tuple[str, Any]]], interrupt_at: int, prompts: list[str]):
    model = RandomModel(script, interrupt_at)
    journal = Journal()
    rec = Recorder()
    deps = SessionDeps(
        config=AgentConfig(workspace=Path("."), model="m", max_retries=0),
        provider=model,
        tools=ToolSet([StepTool(read_only=False), StepTool(read_only=True)]),
        policy=AllowAll(),
        journal=journal,
        emit=rec,
    )
    session = Session(deps)
    model.session = session
    task = asyncio.create_task(session.run())
    for number, prompt in enumerate(prompts, 1):
        session.submit(UserMessage(text=prompt))
        await rec.wait_type("turn_started", number)
        # Cap each turn: a script of tool calls could otherwise loop forever.
        for _ in range(300):
            if len(rec.of("turn_ended")) >= number:
                break
            await asyncio.sleep(0)
        else:
            session.interrupt_now()
        await asyncio.wait_for(session.wait_idle(), 10)
    session.submit(Shutdown())
    await asyncio.wait_for(task, 10)
    return journal


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=replies, interrupt_at=st.integers(min_value=0, max_value=12))
def test_model_view_is_always_valid_and_honest(script, interrupt_at):
    journal = asyncio.run(play(script, interrupt_at, ["first", "second", "third"]))
    # The view as the next request would carry it.
    view = model_view(journal.records + [UserMessageRecord(turn_id="next", text="next")])
    check_model_view(view)
    body = {"model": "m", "max_tokens": 10, "messages": view, "tools": [
        {"name": n, "input_schema": {"type": "object"}} for n in ("step", "look", "missing")
    ]}
    assert validate_messages(body) is None, validate_messages(body)

    finals = {r.tool_use_id: r for r in journal.records if isinstance(r, ToolResultRecord)}
    intents = {r.tool_use_id for r in journal.records if isinstance(r, ToolIntentRecord)}
    for msg in view:
        for blk in msg["content"]:
            if blk["type"] != "tool_result":
                continue
            record = finals.get(blk["tool_use_id"])
            text = blk["content"]
            if record is None:
                # No final record: only "unknown" (started) or "not run" are honest.
                expected = "Result unknown" if blk["tool_use_id"] in intents else "Not run"
                assert text.startswith(expected)
            elif record.state == "succeeded":
                assert text == record.content and "is_error" not in blk
            elif record.state == "cancelled_before_start":
                assert text.startswith("Not run") and blk["tool_use_id"] not in intents
            elif record.state == "cancelled_while_running":
                assert "after it started" in text and blk["tool_use_id"] in intents
            else:
                assert blk.get("is_error") is True
