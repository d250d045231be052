"""An MCP server's question to the user in the TUI: a real server
(tests/mcp_servers/elicit_server.py) on the manager's own loop, as the core runs it; the
dialog is answered with keys, and the server records what it got back."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402
from textual.widgets import Input  # noqa: E402

from agent_tui.cancel import CancelScope  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.elicitation import ElicitationScreen  # noqa: E402
from tests.mcp_loop import ManagerThread, running_manager  # noqa: E402
from tests.mcp_support import SERVERS, ctx_for, records, stdio  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

ELICIT_SERVER = str(SERVERS / "elicit_server.py")
SIZE = (100, 30)


@pytest.fixture(autouse=True)
def no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def asker(tmp_path: Path):
    with running_manager(tmp_path, stdio("shop", ELICIT_SERVER, str(tmp_path / "rec.jsonl"))) as thread:
        yield thread


def _app(tmp_path: Path, manager: Any) -> AgentApp:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    make, _made = fake_factory([], workspace=ws, background=[manager])
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0)


async def _ready(pilot: Any, app: AgentApp) -> None:
    """The session started, and the app answers its servers' questions."""
    await settle(pilot, app, 0)
    await wait_until(pilot, lambda: app.mcp_requests.watched is not None, what="the session")


def _call(thread: ManagerThread, tool: str) -> Any:
    """Start the tool's call on the manager's loop (as the core would); its future."""
    import asyncio

    found = thread.tools.get(f"mcp__shop__{tool}")
    assert found is not None

    async def run() -> Any:
        return await found.run(found.parse({}), ctx_for(CancelScope()))

    return asyncio.run_coroutine_threadsafe(run(), thread.loop)


async def _finished(done: Any) -> Any:
    """The call's result, awaited: blocking here would hold the app's loop, which may
    still have the answer to send."""
    import asyncio

    return await asyncio.wait_for(asyncio.wrap_future(done), 30)


def _dialog(app: AgentApp) -> ElicitationScreen | None:
    screen = app.screen
    return screen if isinstance(screen, ElicitationScreen) else None


async def _shown(pilot: Any, app: AgentApp) -> ElicitationScreen:
    await wait_until(pilot, lambda: _dialog(app) is not None, timeout=15, what="the dialog")
    dialog = _dialog(app)
    assert dialog is not None
    await wait_until(pilot, lambda: dialog.focused is not None if dialog.request.url is None
                     else bool(dialog.query("#url")), what="the first field's focus, or the page")
    dialog._shown_at = float("-inf")  # armed: the keys below are read answers, not type-ahead
    return dialog


def _problem(app: AgentApp, index: int) -> str:
    from textual.widgets import Static

    dialog = _dialog(app)
    if dialog is None:
        return ""
    return str(dialog.query_one(f"#problem-{index}", Static).content)


def _answers(tmp_path: Path) -> list[dict[str, Any]]:
    return [r for r in records(tmp_path / "rec.jsonl") if r["event"] == "answered"]


@pytest.mark.asyncio
async def test_the_form_is_filled_checked_and_sent(tmp_path: Path, asker: ManagerThread) -> None:
    app = _app(tmp_path, asker.manager)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        done = _call(asker, "signup")
        dialog = await _shown(pilot, app)
        boxes = list(dialog.query(Input))
        for keys, then in ((("a", "d", "a", "enter"), 1), (("x", "enter"), 2)):
            await pilot.press(*keys)  # each Enter moves on: wait for it, a loaded machine lags
            await wait_until(pilot, lambda: dialog.focused is boxes[then], timeout=15,
                             what=f"field {then}'s focus")
        for _ in range(3):  # an Enter that lands while the last field's focus settles is lost
            await pilot.press("enter")  # age "x": refused
            try:
                await wait_until(pilot, lambda: "whole number" in _problem(app, 1), timeout=3,
                                 what="the age's problem")
                break
            except AssertionError:
                continue
        assert "whole number" in _problem(app, 1)
        assert _answers(tmp_path) == []  # nothing went
        await pilot.press("backspace", "3", "6", "enter", "backspace" * 5, "b", "l", "u", "e", "enter")
        result = await _finished(done)
        assert '"action": "accept"' in result.content
        assert _answers(tmp_path)[0]["content"] == {"name": "ada", "age": 36, "colour": "blue"}


@pytest.mark.asyncio
async def test_esc_cancels_and_the_server_is_told(tmp_path: Path, asker: ManagerThread) -> None:
    app = _app(tmp_path, asker.manager)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        done = _call(asker, "open_page")
        dialog = await _shown(pilot, app)
        assert "https://example.com/login?x=1" in str(dialog.query_one("#url").render())
        await pilot.press("escape")
        await _finished(done)
        assert _answers(tmp_path) == [{"event": "answered", "action": "cancel"}]
        assert _dialog(app) is None


def test_snapshot_the_form(snap_compare, tmp_path: Path, asker: ManagerThread) -> None:
    app = _app(tmp_path, asker.manager)
    calls: list[Any] = []

    async def run_before(pilot: Any) -> None:
        await _ready(pilot, app)
        calls.append(_call(asker, "signup"))
        await _shown(pilot, app)
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    finally:
        for call in calls:
            call.cancel()
