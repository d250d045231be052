"""Elicitation and ElicitationResult hooks around an MCP server's question: a real stdio
server (tests/mcp_servers/elicit_server.py) asks, real hook scripts answer first or
change the answer, and what the server got is what it recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_tui.core.services.hooks_port import HookBase
from agent_tui.hooks.elicitation import hooked_elicitor
from agent_tui.mcp_catalog.elicitation import ElicitAction, ElicitAnswer, Elicitation
from tests.hooks_support import LOG_INPUT, command_hooks, hook_script, logged
from tests.mcp_support import SERVERS, call, records, stdio

pytestmark = pytest.mark.asyncio

#: Answers as the file ``$HOOK_MODE`` says: accept (a form's values), decline (exit 2),
#: anything else: no opinion.
ANSWER = LOG_INPUT + """
    mode = open(os.environ["HOOK_MODE"]).read().strip()
    if given["hook_event_name"] == "Elicitation" and mode == "accept":
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "Elicitation",
              "action": "accept", "content": {"name": "Hook", "age": 7, "colour": "red"}}}))
    if given["hook_event_name"] == "ElicitationResult" and mode == "decline":
        print("not this answer", file=sys.stderr)
        sys.exit(2)
"""


def answered(record: Path) -> list[dict[str, Any]]:
    return [r for r in records(record) if r["event"] == "answered"]


async def test_hooks_answer_before_the_user_and_may_change_the_answer(
        make_manager: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log, mode = tmp_path / "hooks.jsonl", tmp_path / "mode"
    monkeypatch.setenv("HOOK_LOG", str(log))
    monkeypatch.setenv("HOOK_MODE", str(mode))
    script = hook_script(tmp_path / "hooks", "answer", ANSWER)
    entry = [{"matcher": "el", "hooks": [{"type": "command", "command": script}]}]
    ws = tmp_path / "ws"
    ws.mkdir()
    hooks = command_hooks(tmp_path, ws, {"Elicitation": entry, "ElicitationResult": entry})
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(stdio("el", str(SERVERS / "elicit_server.py"), str(record)))
    asked: list[Elicitation] = []

    async def user(request: Elicitation) -> ElicitAnswer:
        asked.append(request)
        return ElicitAnswer(action=ElicitAction.ACCEPT, content={"name": "Ada"})

    notices: list[Any] = []
    manager.set_elicitor(user)
    manager.elicitor_hooks = hooked_elicitor(
        hooks, lambda: HookBase(session_id="s-el", cwd=str(ws)), notices.append)

    mode.write_text("accept")  # the hook answers: the user is never asked
    await call(tools, "mcp__el__signup", {})
    assert asked == []
    assert answered(record)[-1] == {"event": "answered", "action": "accept",
                                    "content": {"name": "Hook", "age": 7, "colour": "red"}}
    first, result = logged(log)
    assert first["hook_event_name"] == "Elicitation" and first["mcp_server_name"] == "el"
    assert first["message"] == "Tell us about you" and first["mode"] == "form"
    assert first["session_id"] == "s-el" and first["cwd"] == str(ws)
    assert first["requested_schema"]["required"] == ["name"]
    assert first["requested_schema"]["properties"]["colour"]["enum"] == ["red", "green", "blue"]
    assert (result["hook_event_name"], result["action"], result["content"]) == (
        "ElicitationResult", "accept", {"name": "Hook", "age": 7, "colour": "red"})

    mode.write_text("decline")  # the user answers; the result hook turns it into a no
    await call(tools, "mcp__el__signup", {})
    assert [r.server for r in asked] == ["el"]
    assert answered(record)[-1]["action"] == "decline"
    assert logged(log)[-1]["content"] == {"name": "Ada"}
    assert any("not this answer" in n.text for n in notices), notices

    mode.write_text("none")  # no opinion: the user's answer goes through
    await call(tools, "mcp__el__signup", {})
    assert answered(record)[-1]["content"] == {"name": "Ada", "age": None, "colour": "green"}

    mode.write_text("accept")  # a project's hook may not accept for you: you are asked
    hooks.commands = [h.model_copy(update={"project": True}) for h in hooks.commands]
    await call(tools, "mcp__el__signup", {})
    assert len(asked) == 3 and answered(record)[-1]["content"]["name"] == "Ada"
    assert any("cannot accept for you" in n.text for n in notices), [n.text for n in notices]
