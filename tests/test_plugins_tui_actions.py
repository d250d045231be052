"""``/plugin`` acts in the TUI, with the command line's code: a marketplace added from
a folder and listed with its plugins; a plugin installed, shown (what it will run)
before it is enabled, enabled only by a yes, disabled; a mistake named on the status
line. Snapshots: the marketplaces page and the review.

Review snapshot changes in snapshot_report.html, then ``pytest --snapshot-update``.
"""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import json  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.info import InfoScreen  # noqa: E402
from agent_tui.ui.screens.plugin_review import PluginReviewScreen  # noqa: E402
from tests.plugins_support import home  # noqa: E402, F401 (the fixture)
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

MARKET = Path(__file__).parent / "plugin_market"
SIZE = (110, 32)


@pytest.fixture
def market(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The HOME of the test, holding a copy of the marketplace fixture at ~/market."""
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "state"))
    shutil.copytree(MARKET, home / "market")
    (tmp_path / "ws").mkdir()
    return home


def _app(home: Path) -> AgentApp:
    make, _ = fake_factory([], workspace=home.parent / "ws")
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, workspace=home.parent / "ws")


async def _run(pilot, app: AgentApp, line: str) -> None:  # type: ignore[no-untyped-def]
    app.prompt.text = line
    app.prompt.move_cursor(app.prompt.document.end)
    await pilot.pause()
    if app.suggestions.is_open:
        await pilot.press("escape")
    await pilot.press("enter")
    await pilot.pause()


def _enabled(home: Path) -> dict:
    settings = home / ".claude" / "settings.json"
    return json.loads(settings.read_text()).get("enabledPlugins", {}) if settings.exists() else {}


async def _review(pilot, app: AgentApp) -> PluginReviewScreen:  # type: ignore[no-untyped-def]
    await wait_until(pilot, lambda: isinstance(app.screen, PluginReviewScreen), what="the review")
    screen = app.screen
    assert isinstance(screen, PluginReviewScreen)
    return screen


@pytest.mark.asyncio
async def test_add_list_install_enable_disable(market: Path) -> None:
    app = _app(market)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _run(pilot, app, f"/plugin marketplace add {market / 'market'}")
        await wait_until(pilot, lambda: "added marketplace acme-local" in app.status.plain(), what="added")
        assert "its plugins: kit, broken" in app.status.plain()

        await _run(pilot, app, "/plugin marketplace list")
        await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="the page")
        page = app.screen.plain()
        assert "acme-local" in page and "kit  not installed  One of each part" in page
        await pilot.press("escape")

        await _run(pilot, app, "/plugin install kit")
        review = await _review(pilot, app)
        assert "It will run:" in review.plain() and "plugin kit" in review.plain()
        review._shown_at = float("inf")  # not armed yet, however long this machine takes
        await pilot.press("y")  # typed ahead: not a yes
        await pilot.pause()
        assert app.screen is review and not _enabled(market).get("kit@acme-local")
        review._shown_at = float("-inf")  # armed
        await pilot.press("n")
        await wait_until(pilot, lambda: "not enabled" in app.status.plain(), what="the no")
        assert _enabled(market)["kit@acme-local"] is False
        assert (market / ".claude" / "plugins" / "installed_plugins.json").exists()

        await _run(pilot, app, "/plugin enable kit@acme-local")
        review = await _review(pilot, app)
        review._shown_at = float("-inf")  # armed
        await pilot.press("y")
        await wait_until(pilot, lambda: "enabled kit@acme-local" in app.status.plain(), what="the yes")
        assert _enabled(market)["kit@acme-local"] is True

        await _run(pilot, app, "/plugin")
        await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="the plugins page")
        assert "kit@acme-local  enabled" in app.screen.plain()
        await pilot.press("escape")

        await _run(pilot, app, "/plugin disable kit")
        await wait_until(pilot, lambda: "disabled kit@acme-local" in app.status.plain(), what="disabled")
        assert _enabled(market)["kit@acme-local"] is False

        await _run(pilot, app, "/plugin marketplace remove acme-local")
        await wait_until(pilot, lambda: "removed marketplace acme-local" in app.status.plain(), what="removed")
        assert "uninstalled kit@acme-local" in app.status.plain()


@pytest.mark.asyncio
async def test_mistakes_are_named(market: Path) -> None:
    app = _app(market)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _run(pilot, app, "/plugin enable nothing")
        await wait_until(pilot, lambda: "nothing" in app.status.plain(), what="not installed")
        await _run(pilot, app, f"/plugin marketplace add {market / 'no-such-folder'}")
        await wait_until(pilot, lambda: "no-such-folder" in app.status.plain(), what="no marketplace")
        await _run(pilot, app, "/plugin frobnicate")
        await wait_until(pilot, lambda: "usage: /plugin" in app.status.plain(), what="usage")
        assert not isinstance(app.screen, PluginReviewScreen)


async def _add_market(pilot, app: AgentApp) -> None:  # type: ignore[no-untyped-def]
    await settle(pilot, app, 0)
    await _run(pilot, app, "/plugin marketplace add ~/market")
    await wait_until(pilot, lambda: "added marketplace" in app.status.plain(), what="added")


class TestPluginSnapshots:
    def test_the_marketplaces_page(self, snap_compare, market: Path) -> None:
        async def run_before(pilot) -> None:
            app = pilot.app
            await _add_market(pilot, app)
            await _run(pilot, app, "/plugin marketplace list")
            await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="the page")
            await settle(pilot, app, 0)

        assert snap_compare(_app(market), terminal_size=SIZE, run_before=run_before)

    def test_the_review_before_enabling(self, snap_compare, market: Path) -> None:
        async def run_before(pilot) -> None:
            app = pilot.app
            await _add_market(pilot, app)
            await _run(pilot, app, "/plugin install kit@acme-local")
            await _review(pilot, app)
            await settle(pilot, app, 0)

        assert snap_compare(_app(market), terminal_size=SIZE, run_before=run_before)

    def test_the_plugins_page(self, snap_compare, market: Path) -> None:
        from agent_tui.cli.plugin_command import plugin_main

        assert plugin_main(["marketplace", "add", str(market / "market")]) == 0
        assert plugin_main(["install", "kit@acme-local", "--yes"]) == 0

        async def run_before(pilot) -> None:
            app = pilot.app
            await settle(pilot, app, 0)
            await _run(pilot, app, "/plugin")
            await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="the page")
            await settle(pilot, app, 0)

        assert snap_compare(_app(market), terminal_size=SIZE, run_before=run_before)
