"""``/export [FILE]`` (the conversation as Markdown, tool calls folded) and ``/rename
NAME`` (shown by ``agent-tui sessions`` and ``/resume``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.core.history.export import conversation_markdown, fenced  # noqa: E402
from agent_tui.core.journal.journal import Journal  # noqa: E402
from agent_tui.core.journal.records import (  # noqa: E402
    AssistantMessageRecord,
    SessionStarted,
    ToolResultRecord,
    TurnEndedRecord,
    UserCommandRecord,
    UserMessageRecord,
)
from agent_tui.core.services.deps import AgentConfig, SessionDeps  # noqa: E402
from agent_tui.core.calls.permission import AllowAll  # noqa: E402
from agent_tui.core.session.session import Session  # noqa: E402
from agent_tui.core.calls.tool import ToolSet  # noqa: E402
from agent_tui.protocol import ToolState, TurnStatus  # noqa: E402
from agent_tui.providers.scripted import ScriptedProvider  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.picker import PickerScreen  # noqa: E402
from tests.fake_api import Reply  # noqa: E402
from tests.forked_runs import run_agent
from tests.print_agent import env_for  # noqa: E402
from tests.snapshot_tests.support import QuickTool, demo_script, fake_factory, wait_until  # noqa: E402

SIZE = (100, 30)


def test_the_markdown_folds_each_call_and_no_output_can_close_its_fence() -> None:
    records = [
        SessionStarted(session_id="s1", workspace="/home/dev/demo", provider="p", model="m"),
        UserCommandRecord(id="bash_mode_1", command="git status", state=ToolState.SUCCEEDED,
                          output="clean\n", exit_code=0),
        UserMessageRecord(turn_id="t1", text="show the <b>README</b>"),
        AssistantMessageRecord(turn_id="t1", ended="tool_use", blocks=[
            {"type": "thinking", "thinking": "read it first", "signature": "x"},
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file",
             "input": {"path": "README.md"}}]),
        ToolResultRecord(turn_id="t1", tool_use_id="toolu_1", name="read_file",
                         state=ToolState.SUCCEEDED, content="a ```fenced``` line\n````\n"),
        AssistantMessageRecord(turn_id="t1", ended="end_turn",
                               blocks=[{"type": "text", "text": "It has a fence."}]),
        TurnEndedRecord(turn_id="t1", status=TurnStatus.COMPLETED),
        UserMessageRecord(turn_id="t2", text="stop"),
        TurnEndedRecord(turn_id="t2", status=TurnStatus.CANCELLED, detail="interrupted"),
    ]
    text = conversation_markdown(records, session_id="s1", now=0)
    assert text.startswith("# Conversation s1\n\nWorkspace: `/home/dev/demo`")
    assert text.index("## You ran") < text.index("## You\n\nshow the <b>README</b>")
    assert "<details><summary>thinking</summary>" in text
    assert "<details><summary>read_file: README.md (succeeded)</summary>" in text
    assert "`````\na ```fenced``` line\n````\n`````" in text  # a longer fence than inside
    assert text.index("Reading it.") < text.index("read_file: README.md") < text.index(
        "It has a fence.")
    assert "*(the turn cancelled: interrupted)*" in text
    assert fenced("x") == "```\nx\n```"


def _real(tmp_path: Path, journal: Journal):
    def make(emit):
        return Session(SessionDeps(
            config=AgentConfig(workspace=tmp_path, model="scripted", session_id="s-42"),
            provider=ScriptedProvider(demo_script(), delay=0.0), tools=ToolSet([QuickTool()]),
            policy=AllowAll(), journal=journal, emit=emit,
        ))
    return make


async def _type(pilot, text: str) -> None:
    await pilot.press(*[("space" if c == " " else c) for c in text])


@pytest.mark.asyncio
async def test_export_writes_the_conversation_into_the_workspace(tmp_path: Path) -> None:
    app = AgentApp(_real(tmp_path, Journal()), cursor_blink=False, welcome=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "quick")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.last_turn_status == "completed", what="turn")
        await _type(pilot, "/export notes/chat.md")
        await pilot.press("enter")
        await wait_until(pilot, lambda: (tmp_path / "notes" / "chat.md").exists()
                         or "cannot write" in app.status.plain(), what="export")
        assert "cannot write" in app.status.plain()  # no such folder: said, nothing made
        await _type(pilot, "/export")
        await pilot.press("enter")
        target = tmp_path / "conversation-s-42.md"
        await wait_until(pilot, target.exists, what="default export")
    text = target.read_text()
    assert "## You\n\nquick" in text and "## Assistant\n\nQuick one." in text
    assert "<details><summary>quick (succeeded)</summary>" in text and "All done." in text


def test_rename_names_the_session_for_agent_tui_sessions(fake_api, tmp_path: Path) -> None:
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)
    fake_api.enqueue(Reply.text("hello"))
    ops = [{"type": "rename_session", "name": "  fix the\n parser "},
           {"type": "user_message", "text": "hi"}]
    run = run_agent(
        ["-p", "--input-format", "stream-json", "--output-format", "stream-json",
         "--cwd", str(tmp_path)],
        input="".join(json.dumps(op) + "\n" for op in ops), env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    listing = run_agent(["sessions"], env=env,
                             timeout=60)
    assert "[fix the parser]" in listing.stdout, listing.stdout


class _Saved:
    def __init__(self, id: str, first: str, name: str = "") -> None:
        self.id, self.first_message, self.workspace, self.name = id, first, "/home/dev/demo", name
        self.updated, self.last_status = 1_767_000_000.0, "completed"


class _Directory:
    def saved_sessions(self):
        return [_Saved("s-1", "fix the parser", name="parser work"), _Saved("s-2", "write docs")]

    def session_maker(self, session_id: str):
        return fake_factory([])[0]


@pytest.mark.asyncio
async def test_resume_lists_a_sessions_name_and_finds_it_by_name() -> None:
    make, made = fake_factory([])
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0, sessions=_Directory())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _type(pilot, "/resume")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), what="picker")
        picker = app.screen
        lines = [item.prompt.plain for item in picker.items]
        assert "parser work  fix the parser" in lines[0] and "parser work" not in lines[1]
        assert "parser" in picker.items[0].search and "parser work" in picker.items[0].search
