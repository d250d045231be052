"""Elicitation: a real stdio server (tests/mcp_servers/elicit_server.py) asks the user
through the manager's elicitor; what the server gets back is what it recorded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.mcp_catalog.elicitation import (
    ElicitAction,
    ElicitAnswer,
    Elicitation,
    ElicitMode,
    FieldKind,
    UnsupportedForm,
    check,
    form_fields,
    parse_value,
)
from agent_tui.protocol import ToolState
from tests.mcp_support import SERVERS, call, ctx_for, records, stdio

ELICIT_SERVER = str(SERVERS / "elicit_server.py")


def answered(record: Path) -> list[dict[str, Any]]:
    return [r for r in records(record) if r["event"] == "answered"]


@pytest.mark.asyncio
async def test_form_answer_reaches_the_server_checked_against_its_schema(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(stdio("el", ELICIT_SERVER, str(record)))
    asked: list[Elicitation] = []

    async def accept(request: Elicitation) -> ElicitAnswer:
        asked.append(request)
        return ElicitAnswer(action=ElicitAction.ACCEPT, content={"name": "Ada", "age": 36, "colour": "blue"})

    manager.set_elicitor(accept)
    result, _ = await call(tools, "mcp__el__signup", {})
    assert result.outcome is ToolState.SUCCEEDED, result.content
    [request] = asked
    assert request.server == "el" and request.mode is ElicitMode.FORM and request.message == "Tell us about you"
    by_name = {f.name: f for f in request.fields}
    assert by_name["name"].required and by_name["name"].kind is FieldKind.STRING
    assert by_name["age"].kind is FieldKind.INTEGER and by_name["age"].maximum == 150
    assert by_name["colour"].kind is FieldKind.CHOICE and by_name["colour"].choices == ["red", "green", "blue"]
    assert answered(record) == [{"event": "answered", "action": "accept",
                                 "content": {"name": "Ada", "age": 36, "colour": "blue"}}]


@pytest.mark.asyncio
async def test_without_a_front_end_the_server_is_declined(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(stdio("el", ELICIT_SERVER, str(record)))
    result, _ = await call(tools, "mcp__el__signup", {})
    assert json.loads(result.content) == {"action": "decline", "content": None}
    assert answered(record)[0]["action"] == "decline"


@pytest.mark.asyncio
async def test_an_answer_that_does_not_fit_the_form_is_sent_as_cancel(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(stdio("el", ELICIT_SERVER, str(record)))

    async def sloppy(_request: Elicitation) -> ElicitAnswer:
        return ElicitAnswer(action=ElicitAction.ACCEPT, content={"name": "Ada", "age": 999, "extra": "x"})

    manager.set_elicitor(sloppy)
    await call(tools, "mcp__el__signup", {})
    assert answered(record)[0]["action"] == "cancel"


@pytest.mark.asyncio
async def test_url_mode_is_asked_with_its_url_and_a_decline_is_told(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(stdio("el", ELICIT_SERVER, str(record)))
    asked: list[Elicitation] = []

    async def no(request: Elicitation) -> ElicitAnswer:
        asked.append(request)
        return ElicitAnswer(action=ElicitAction.DECLINE)

    manager.set_elicitor(no)
    await call(tools, "mcp__el__open_page", {})
    assert asked[0].mode is ElicitMode.URL and asked[0].url == "https://example.com/login?x=1"
    assert answered(record) == [{"event": "answered", "action": "decline"}]


@pytest.mark.asyncio
async def test_esc_during_a_pending_question_ends_the_question_and_the_call(make_manager: Any, tmp_path: Path) -> None:
    """The turn is interrupted while the user is being asked: the question is withdrawn
    (the elicitor's await is cancelled) and the call ends as cancelled."""
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(stdio("el", ELICIT_SERVER, str(record)), confirm_s=2.0)
    asking = asyncio.Event()
    withdrawn = asyncio.Event()

    async def wait_forever(_request: Elicitation) -> ElicitAnswer:
        asking.set()
        try:
            await asyncio.Event().wait()
        finally:
            withdrawn.set()
        raise AssertionError("never answered")

    manager.set_elicitor(wait_forever)
    tool = tools.get("mcp__el__signup")
    assert tool is not None
    scope = CancelScope()
    run = asyncio.create_task(tool.run(tool.parse({}), ctx_for(scope)))
    await asyncio.wait_for(asking.wait(), 10)
    scope.cancel(CancelReason.USER_INTERRUPT)
    result = await asyncio.wait_for(run, 10)
    await asyncio.wait_for(withdrawn.wait(), 10)
    assert result.outcome in (ToolState.CANCELLED_WHILE_RUNNING, ToolState.UNKNOWN)
    assert result.ended_by is CancelReason.USER_INTERRUPT


def test_form_fields_refuse_nested_objects_and_check_types() -> None:
    with pytest.raises(UnsupportedForm):
        form_fields({"type": "object", "properties": {"a": {"type": "object"}}})
    fields = form_fields({"type": "object", "required": ["n"], "properties": {
        "n": {"type": "integer", "minimum": 1},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b"}]}},
    }})
    assert check(fields, {}) == {"n": "required"}
    assert check(fields, {"n": True}) == {"n": "expected a whole number"}
    assert check(fields, {"n": 0, "ok": "yes", "tags": ["c"]}) == {
        "n": "at least 1", "ok": "expected yes or no", "tags": "some of: a, b"}
    assert check(fields, {"n": 2, "ok": False, "tags": ["a"]}) == {}
    assert parse_value(fields[0], " 7 ") == 7 and parse_value(fields[1], "no") is False
    assert parse_value(fields[2], "a, b") == ["a", "b"] and fields[2].choice_titles == ["A", "b"]
    with pytest.raises(ValueError):
        parse_value(fields[0], "seven")
