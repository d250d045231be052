"""What each hook event is lives in one place (hooks/events.py): its matcher's subject
and words, and what its hooks' answers can do. The settings parser and the reading of
answers take it from there, for every event the enum has (a new row is covered here
without a line of this file changing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.hooks.config import parse_hooks
from agent_tui.hooks.events import EVENTS, Subject, event_facts
from agent_tui.protocol import HookEvent
from agent_tui.settings.schema import HooksSource


def _problems(event: HookEvent, matcher: str) -> list[str]:
    value = {event.value: [{"matcher": matcher, "hooks": [{"type": "command", "command": "true"}]}]}
    commands, problems = parse_hooks(HooksSource(file=Path("/w/settings.json"), project=False,
                                                 value=value))
    assert [c.event for c in commands] == [event]  # a warning never drops the hook
    return [p.message for p in problems]


@pytest.mark.parametrize("event", list(HookEvent))
def test_each_event_s_matcher_is_checked_as_its_facts_say(event: HookEvent) -> None:
    facts = event_facts(event)
    match facts.subject:
        case Subject.WORD:
            assert facts.words
            assert _problems(event, "|".join(sorted(facts.words))) == []
            (warning,) = _problems(event, "surelynotaword")
            assert f"not a {event} matcher (known: {', '.join(sorted(facts.words))})" in warning
        case Subject.TOOL:
            assert _problems(event, "Bash|Edit") == []
            (warning,) = _problems(event, "Bsah")
            assert "no tool has this name" in warning
        case Subject.NONE:
            assert _problems(event, "anything") == []


def test_every_event_has_its_row() -> None:
    assert set(EVENTS) == set(HookEvent)
    gates = {e for e in HookEvent if event_facts(e).gates}
    assert gates == {HookEvent.PRE_TOOL_USE, HookEvent.USER_PROMPT_SUBMIT, HookEvent.PRE_COMPACT,
                     HookEvent.PRE_SKILL_SHELL_COMMAND, HookEvent.PRE_MODEL_SWITCH,
                     HookEvent.USER_PROMPT_EXPANSION}
    assert {e for e in HookEvent if event_facts(e).stops} == {
        HookEvent.STOP, HookEvent.SUBAGENT_STOP}
