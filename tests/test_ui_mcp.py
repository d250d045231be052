"""What MCP servers offer, in the TUI: resources as ``@server:uri`` in the ``@``
picker and read when the message is sent; prompts as ``/mcp__server__prompt`` in the
command menu and /help, got with the typed arguments. The server is
tests/mcp_servers/catalog_server.py (the official SDK, a real process)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.core.calls.tool import ToolContext  # noqa: E402
from agent_tui.cancel import CancelScope  # noqa: E402
from agent_tui.protocol import UserMessage  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.input.attachments import split_for_display  # noqa: E402
from tests.mcp_loop import running_manager  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402
from tests.mcp_support import SERVERS, stdio  # noqa: E402

CATALOG = str(SERVERS / "catalog_server.py")
SIZE = (110, 32)


@pytest.fixture(autouse=True)
def no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def notes(tmp_path: Path):
    with running_manager(tmp_path, stdio("notes", CATALOG)) as thread:
        yield thread


def _app(tmp_path: Path, manager) -> tuple[AgentApp, list]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "readme.md").write_text("hi\n")
    make, made = fake_factory([], workspace=ws, background=[manager])
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0), made


async def _type(pilot, text: str) -> None:
    await pilot.press(*[("space" if c == " " else c) for c in text])


def _sent(made) -> list[UserMessage]:
    return [op for op in made[0].ops if isinstance(op, UserMessage)] if made else []


def _menu(app) -> list[str]:
    return [item.value for item in app.suggestions.items] if app.suggestions.is_open else []


@pytest.mark.asyncio
async def test_a_resource_is_picked_with_at_and_its_content_follows_the_message(tmp_path: Path, notes) -> None:
    app, made = _app(tmp_path, notes.manager)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 0)
        await _type(pilot, "sum up @today")
        await wait_until(pilot, lambda: _menu(app)[:1] == ["notes:notes://today"], what="the resource")
        await pilot.press("enter")
        assert app.prompt.text == "sum up @notes:notes://today "
        await pilot.press("enter")
        await wait_until(pilot, lambda: _sent(made), what="the message")
        [sent] = _sent(made)
        assert sent.text == ('sum up @notes:notes://today\n\n<resource uri="notes:notes://today">\n'
                             'buy milk\ncall Ada\n</resource>')
        message, shown = split_for_display(sent.text)
        assert message == "sum up @notes:notes://today" and [s.path for s in shown] == ["notes:notes://today"]


@pytest.mark.asyncio
async def test_an_image_resource_goes_as_an_image_and_a_missing_one_keeps_the_message(tmp_path: Path, notes) -> None:
    app, made = _app(tmp_path, notes.manager)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 0)
        app.prompt.text = "what is @notes:notes://nope and @notes:notes://today"
        await pilot.press("end", "escape")
        app.prompt.action_submit()
        await wait_until(pilot, lambda: "notes://nope" in app.status.notice_text and app.prompt.text,
                         what="the refusal")
        assert "not sent: @notes:notes://nope" in app.status.notice_text
        assert app.prompt.text == "what is @notes:notes://nope and @notes:notes://today"
        assert _sent(made) == []

        app.prompt.text = "look at @notes:notes://pixel"
        app.prompt.action_submit()
        await wait_until(pilot, lambda: _sent(made), what="the message")
        [sent] = _sent(made)
        assert [i.media_type for i in sent.images] == ["image/png"]
        assert "[image image/png, attached]" in sent.text


@pytest.mark.asyncio
async def test_prompts_are_commands_in_the_menu_and_help_with_their_arguments(tmp_path: Path, notes) -> None:
    app, made = _app(tmp_path, notes.manager)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 0)
        await _type(pilot, "/mcp__")
        await wait_until(pilot, lambda: _menu(app) == ["mcp__notes__review", "mcp__notes__hello"], what="menu")
        usages = [u for u, _d in [(c.usage, c.description) for c in app.commands().all()]]
        assert "/mcp__notes__review file [focus]" in usages
        await pilot.press("escape")
        app.prompt.text = ""

        app.prompt.text = "/mcp__notes__review"
        app.prompt.action_submit()
        await wait_until(pilot, lambda: "missing file" in app.status.notice_text, what="the usage")
        assert "usage /mcp__notes__review file [focus]" in app.status.notice_text
        assert app.prompt.text == "/mcp__notes__review" and _sent(made) == []

        app.prompt.text = '/mcp__notes__review src/app.py "error handling"'
        app.prompt.action_submit()
        await wait_until(pilot, lambda: _sent(made), what="the prompt")
        assert [m.text for m in _sent(made)] == ["Please review src/app.py, looking at error handling."]


@pytest.mark.asyncio
async def test_changed_resources_and_prompts_show_in_the_next_menu(tmp_path: Path, notes) -> None:
    app, _made = _app(tmp_path, notes.manager)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 0)
        tool = notes.tools.get("mcp__notes__change")
        ctx = ToolContext(scope=CancelScope(), workspace=tmp_path, tool_use_id="tu-1", operation_id="op-1")
        result = notes.run(tool.run(tool.parse({}), ctx))
        assert result.content == "changed"
        await wait_until(pilot, lambda: {p.name for _s, p in notes.manager.prompts()} == {"review", "later"},
                         what="the new prompts")
        await _type(pilot, "/mcp__")
        await wait_until(pilot, lambda: _menu(app) == ["mcp__notes__review", "mcp__notes__later"], what="menu")
        await pilot.press("escape")
        app.prompt.text = ""
        await _type(pilot, "@later")
        await wait_until(pilot, lambda: _menu(app)[:1] == ["notes:notes://later"], what="the new resource")


def test_snapshot_the_menu_with_mcp_prompts(snap_compare, tmp_path: Path, notes) -> None:
    app, _made = _app(tmp_path, notes.manager)

    async def run_before(pilot) -> None:
        await settle(pilot, app, 0)
        await _type(pilot, "/mcp")
        await wait_until(pilot, lambda: _menu(app) == ["mcp", "mcp__notes__review", "mcp__notes__hello"],
                         what="menu")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_snapshot_the_at_picker_with_a_resource_beside_the_files(snap_compare, tmp_path: Path, notes) -> None:
    app, _made = _app(tmp_path, notes.manager)

    async def run_before(pilot) -> None:
        await settle(pilot, app, 0)
        await _type(pilot, "see @")
        await wait_until(pilot, lambda: app.files.index is not None and app.files.index.complete
                         and "readme.md" in _menu(app), what="picker")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.asyncio
async def test_a_menu_open_before_the_server_is_ready_shows_its_prompts_once_it_is(tmp_path: Path) -> None:
    from agent_tui.mcp import McpManager
    from tests.mcp_loop import ManagerThread

    thread = ManagerThread(McpManager([stdio("notes", CATALOG)], workspace=tmp_path, log_dir=tmp_path / "logs",
                                      start_timeout_s=15.0))
    app, _made = _app(tmp_path, thread.manager)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app, 0)
            await _type(pilot, "/mcp__")
            await wait_until(pilot, lambda: app.suggestions.is_open, what="the menu")
            assert _menu(app) == []  # not started yet: nothing matches
            app.mcp_manager()  # (what the menu asked of the session)
            import threading

            threading.Thread(target=thread.start, daemon=True).start()  # it comes up while the menu is open
            await wait_until(pilot, lambda: _menu(app) == ["mcp__notes__review", "mcp__notes__hello"],
                             what="the prompts", timeout=15)
    finally:
        thread.stop()
