"""``/mcp`` in the TUI: the servers with their state and actions (log in, reconnect,
disable, enable, details), against real servers: tests/mcp_servers/catalog_server.py
(stdio) and oauth_server.py (an HTTP server that wants an OAuth login). The test
plays the browser: it follows the URL the login page shows."""

from __future__ import annotations

import json
import os
import threading
import urllib.request
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.mcp import ServerConfig, ServerState  # noqa: E402
from agent_tui.settings.mcp_servers import Transport  # noqa: E402
from agent_tui.mcp.disabled import DisabledServers  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.info import InfoScreen  # noqa: E402
from agent_tui.ui.screens.picker import PickerScreen  # noqa: E402
from tests.mcp_loop import running_manager  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402
from tests.mcp_support import SERVERS, stdio  # noqa: E402
from tests.mcp_support import oauth_server  # noqa: E402

CATALOG = str(SERVERS / "catalog_server.py")
SIZE = (110, 32)


@pytest.fixture(autouse=True)
def no_browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for var in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def servers(tmp_path: Path):
    for url, record in oauth_server(tmp_path):
        web = ServerConfig(name="web", transport=Transport.HTTP, source=Path("test"), url=url)
        disabled = DisabledServers(tmp_path / "mcp-disabled.json", tmp_path)
        with running_manager(tmp_path, stdio("notes", CATALOG), web, disabled=disabled) as thread:
            yield thread, record


def _app(tmp_path: Path, manager) -> AgentApp:
    make, _made = fake_factory([], workspace=tmp_path, background=[manager])
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0)


async def _open(pilot, app) -> PickerScreen:
    await settle(pilot, app, 0)
    await pilot.press(*"/mcp")
    await pilot.press("escape")  # the menu
    app.prompt.action_submit()
    await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), what="the /mcp view")
    return app.screen


def _ids(screen: PickerScreen) -> list[str]:
    return [item.id for item in screen.items]


def _state(manager, name: str) -> ServerState | None:
    return next((s.state for s in manager.status() if s.name == name), None)


def test_snapshot_the_mcp_view_with_actions(snap_compare, tmp_path: Path, servers) -> None:
    thread, _record = servers
    app = _app(tmp_path, thread.manager)

    async def run_before(pilot) -> None:
        await _open(pilot, app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.asyncio
async def test_log_in_from_mcp_then_disable_and_enable(tmp_path: Path, servers) -> None:
    thread, record = servers
    manager = thread.manager
    assert _state(manager, "web") is ServerState.NEEDS_LOGIN
    app = _app(tmp_path, manager)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, app)
        assert _ids(screen) == ["reconnect:notes", "disable:notes", "login:web", "reconnect:web",
                                "disable:web", "details"]
        screen.dismiss("login:web")
        await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="the login page", timeout=15)
        page = app.screen.plain()
        assert page.startswith("To log in, open: http://127.0.0.1:")  # no browser here: shown
        url = page.split(": ", 1)[1].strip()
        threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=10).read(), daemon=True).start()
        await wait_until(pilot, lambda: "MCP server web: logged in; connecting again" in app.status.notice_text, timeout=20,
                         what="logged in")
        await wait_until(pilot, lambda: _state(manager, "web") is ServerState.READY, what="web ready")
        assert thread.tools.get("mcp__web__whoami") is not None
        assert [r["event"] for r in map(json.loads, record.read_text().splitlines())].count("authorize") == 1

        await pilot.press("escape")
        screen = await _open(pilot, app)
        screen.dismiss("disable:notes")
        await wait_until(pilot, lambda: _state(manager, "notes") is ServerState.DISABLED, what="disabled")
        assert DisabledServers(tmp_path / "mcp-disabled.json", tmp_path).names() == {"notes"}
        assert thread.tools.get("mcp__notes__change") is None
        screen = await _open(pilot, app)
        assert "enable:notes" in _ids(screen) and "reconnect:notes" not in _ids(screen)
        screen.dismiss("enable:notes")
        await wait_until(pilot, lambda: _state(manager, "notes") is ServerState.READY, what="enabled", timeout=15)
        assert DisabledServers(tmp_path / "mcp-disabled.json", tmp_path).names() == set()


@pytest.mark.asyncio
async def test_a_disabled_server_is_not_started_by_the_next_session(tmp_path: Path) -> None:
    DisabledServers(tmp_path / "mcp-disabled.json", tmp_path).set("notes", True)
    disabled = DisabledServers(tmp_path / "mcp-disabled.json", tmp_path)
    with running_manager(tmp_path, stdio("notes", CATALOG), disabled=disabled) as thread:
        [status] = thread.manager.status()
        assert status.state is ServerState.DISABLED and status.pid is None
        assert status.error == "disabled: /mcp enables it"
