"""A front end whose emit raises loses the events it could not take, never the turn's
honesty: the turn still ends, the journal still records how, the other events and
front ends still get theirs (real SDK against the fake API)."""

from __future__ import annotations

import asyncio

import pytest

from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.journal.journal import Journal
from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.journal.records import ToolResultRecord, TurnEndedRecord
from agent_tui.core.session.session import Session
from agent_tui.core.calls.tool import ToolSet
from agent_tui.protocol import Event, Shutdown, UserMessage
from agent_tui.providers.anthropic import AnthropicProvider
from tests.fake_api import Reply
from tests.harness import QuickTool, Recorder

pytestmark = pytest.mark.asyncio


class BrokenFrontEnd(Recorder):
    """Takes every event, then raises for those of the kinds it chokes on."""

    def __init__(self, chokes_on: set[str] | None) -> None:
        super().__init__()
        self.chokes_on = chokes_on  # None: every kind
        self.raised = 0

    def __call__(self, event: Event) -> None:
        super().__call__(event)
        if self.chokes_on is None or event.type in self.chokes_on:
            self.raised += 1
            raise RuntimeError(f"front end broke on {event.type}")


async def _one_tool_turn(fake_api, tmp_path, front: BrokenFrontEnd) -> tuple[Journal, QuickTool]:
    quick = QuickTool()
    journal = Journal()
    deps = SessionDeps(
        config=AgentConfig(workspace=tmp_path, model="claude-test"),
        provider=AnthropicProvider(api_key="test-key", base_url=fake_api.url),
        tools=ToolSet([quick]), policy=AllowAll(), journal=journal, emit=front,
    )
    session = Session(deps)
    task = asyncio.create_task(session.run())
    fake_api.enqueue(Reply.tool_use("quick", {"note": "a"}, text_before="Let me look"),
                     Reply.text("done"))
    session.submit(UserMessage(text="go"))
    await asyncio.wait_for(session.wait_idle(), 15)
    session.submit(Shutdown())
    await asyncio.wait_for(task, 15)
    return journal, quick


async def test_a_front_end_choking_on_tool_states_loses_only_those(fake_api, tmp_path):
    front = BrokenFrontEnd({"tool_state", "text_delta"})
    journal, quick = await _one_tool_turn(fake_api, tmp_path, front)
    assert front.raised > 0
    assert quick.calls == ["a"]  # the turn went on as if nothing happened
    results = [r for r in journal.records if isinstance(r, ToolResultRecord)]
    assert [(r.name, r.state) for r in results] == [("quick", "succeeded")]
    ended = [r for r in journal.records if isinstance(r, TurnEndedRecord)]
    assert [r.status for r in ended] == ["completed"]
    assert [e.status for e in front.of("turn_ended")] == ["completed"]
    # The user hears of it once per kind of event, in a notice that could be taken.
    told = [e.text for e in front.of("notice") if "front end" in e.text]
    assert len(told) == 2, told
    assert any("tool_state" in t and "front end broke on tool_state" in t for t in told)
    assert fake_api.rejections == []


async def test_a_front_end_choking_on_everything_still_lets_the_turn_end(fake_api, tmp_path):
    front = BrokenFrontEnd(None)
    journal, quick = await _one_tool_turn(fake_api, tmp_path, front)
    assert quick.calls == ["a"]
    ended = [r for r in journal.records if isinstance(r, TurnEndedRecord)]
    assert [r.status for r in ended] == ["completed"]
    assert front.of("turn_ended")  # it was offered the turn's end all the same
    assert front.of("session_closed")


async def test_the_other_front_ends_still_get_an_event_one_choked_on():
    from agent_tui.cli.wiring import _observed_by

    seen: list[str] = []
    front = BrokenFrontEnd(None)
    both = _observed_by(front, lambda event: seen.append(event.type))
    from agent_tui.protocol import Notice, NoticeLevel

    with pytest.raises(RuntimeError):
        both(Notice(level=NoticeLevel.INFO, text="hello"))
    assert seen == ["notice"]
