"""A hook event is one row: a test adds an event (its name and its row in
``hooks/events.py``, nothing else) and fires it through the real runner, real hook
commands reading their stdin and answering by exit code, and through the core's hook
points, which journal and tell it like any other event."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cancel import CancelScope
from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.calls.tool import ToolSet
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import HookRecord
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.services.hooks_port import HookAnswer, HookBase
from agent_tui.hooks import CommandHooks
from agent_tui.hooks.events import EVENTS, EventFacts, Subject
from agent_tui.protocol import HookStateChanged
from agent_tui.protocol.states import HookDecision, HookEvent, HookRunState
from agent_tui.providers.anthropic import AnthropicProvider
from tests.harness import Recorder
from tests.hooks_support import LOG_INPUT, command_hooks, hook_script, logged

NAME, VALUE = "WORK_SAVED", "WorkSaved"
#: The new event's row: matched on a trigger word, it gates what it fires for.
ROW = EventFacts(Subject.WORD, frozenset({"manual", "auto"}),
                 stdin=frozenset({"trigger", "path"}), gates=True, fires="a test saves work")


@pytest.fixture
def saved(monkeypatch: pytest.MonkeyPatch) -> Iterator[HookEvent]:
    """``WorkSaved``: a member of ``HookEvent`` (as its one line in ``protocol/states.py``
    would make it) and its row; both gone after the test."""
    member = str.__new__(HookEvent, VALUE)
    member._name_, member._value_ = NAME, VALUE
    HookEvent._member_map_[NAME] = member
    HookEvent._value2member_map_[VALUE] = member
    HookEvent._member_names_.append(NAME)
    monkeypatch.setitem(EVENTS, member, ROW)
    try:
        yield member
    finally:
        HookEvent._member_names_.remove(NAME)
        del HookEvent._member_map_[NAME], HookEvent._value2member_map_[VALUE]


def _hooks(tmp_path: Path, body: str, matcher: str = "manual") -> CommandHooks:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    command = hook_script(tmp_path / "hooks", "saved", LOG_INPUT + "    " + body)
    hooks = command_hooks(tmp_path, ws, {VALUE: [
        {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]})
    hooks.env["HOOK_LOG"] = str(tmp_path / "log.jsonl")
    return hooks


def _fire(hooks: CommandHooks, event: HookEvent, fields: dict[str, Any],
          subject: str = "manual") -> HookAnswer:
    base = HookBase(session_id="s-rows", cwd=str(hooks.workspace))
    return asyncio.run(hooks.fire(event, base, CancelScope("test"), fields, subject=subject))


_BLOCKS = 'sys.stderr.write("not saved yet"); sys.exit(2)\n'


def test_a_new_event_s_hook_reads_its_fields_and_its_exit_2_blocks(
        saved: HookEvent, tmp_path: Path) -> None:
    hooks = _hooks(tmp_path, _BLOCKS)
    answer = _fire(hooks, saved, {"trigger": "manual", "path": "notes.txt"})
    assert (answer.decision, answer.reason) == (HookDecision.BLOCK, "not saved yet")
    (given,) = logged(tmp_path / "log.jsonl")
    assert given["hook_event_name"] == "WorkSaved"
    assert (given["trigger"], given["path"], given["session_id"]) == (
        "manual", "notes.txt", "s-rows")
    assert {"cwd", "permission_mode", "transcript_path"} <= set(given)


def test_a_new_event_s_row_says_its_hooks_cannot_block(
        saved: HookEvent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EVENTS, saved, EventFacts(Subject.WORD, ROW.words, stdin=ROW.stdin,
                                                  can_block=False))
    answer = _fire(_hooks(tmp_path, _BLOCKS), saved, {"trigger": "manual", "path": "a"})
    assert answer.decision is HookDecision.NONE
    assert [run.message for run in answer.runs] == ["not saved yet"]


def test_a_new_event_s_json_decision_and_context_act_as_its_row_says(
        saved: HookEvent, tmp_path: Path) -> None:
    said = {"decision": "block", "reason": "disk full",
            "hookSpecificOutput": {"additionalContext": "saved elsewhere"}}
    hooks = _hooks(tmp_path, f"print({json.dumps(json.dumps(said))})\n")
    answer = _fire(hooks, saved, {"trigger": "manual", "path": "a"})
    assert (answer.decision, answer.reason, answer.context) == (
        HookDecision.BLOCK, "disk full", ["saved elsewhere"])


def test_a_new_event_s_matcher_picks_its_hooks(saved: HookEvent, tmp_path: Path) -> None:
    hooks = _hooks(tmp_path, _BLOCKS, matcher="auto")
    assert _fire(hooks, saved, {"trigger": "manual", "path": "a"}).runs == []
    assert logged(tmp_path / "log.jsonl") == []


def test_a_field_the_row_does_not_name_is_refused(saved: HookEvent, tmp_path: Path) -> None:
    hooks = _hooks(tmp_path, _BLOCKS)
    with pytest.raises(ValueError, match="WorkSaved hooks do not read size"):
        _fire(hooks, saved, {"trigger": "manual", "path": "a", "size": 3})
    assert logged(tmp_path / "log.jsonl") == []


def test_the_core_fires_a_new_event_tells_and_journals_it(
        saved: HookEvent, tmp_path: Path) -> None:
    hooks = _hooks(tmp_path, _BLOCKS)
    rec, journal = Recorder(), Journal(tmp_path / "state" / "journal.jsonl")
    deps = SessionDeps(
        config=AgentConfig(workspace=hooks.workspace, model="claude-test", session_id="s-rows"),
        provider=AnthropicProvider(api_key="test-key", base_url="http://127.0.0.1:9"),
        tools=ToolSet(), policy=AllowAll(), journal=journal, emit=rec, hooks=hooks,
    )
    points = HookPoints(deps, CancelScope("test"), journal.append, turn_id="t1")
    assert points.wanted(saved, "manual") and not points.wanted(saved, "auto")
    answer = asyncio.run(points.dispatch(saved, "manual", {"trigger": "manual", "path": "a"}))
    assert answer is not None and answer.decision is HookDecision.BLOCK
    (record,) = [r for r in journal.records if isinstance(r, HookRecord)]
    assert (record.event, record.decision, record.reason) == (
        saved, HookDecision.BLOCK, "not saved yet")
    states = [e.state for e in rec.events if isinstance(e, HookStateChanged)]
    assert states == [HookRunState.RUNNING, HookRunState.ENDED]
