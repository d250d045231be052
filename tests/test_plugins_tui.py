"""``/plugin`` in the TUI: the marketplaces and installed plugins Claude Code's records
hold, each enabled or not, what a plugin that did not load has wrong, and how to change
them; ``/plugin config NAME``: a plugin's options as a form (a sensitive one unechoed,
never shown), checked and kept."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import json  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from agent_tui.cli.plugin_command import plugin_main  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.info import InfoScreen  # noqa: E402
from tests.plugins_support import PLUGIN, options_market  # noqa: E402
from tests.snapshot_tests.support import fake_factory, wait_until  # noqa: E402

MARKET = Path(__file__).parent / "plugin_market"


@pytest.mark.asyncio
async def test_plugin_lists_marketplaces_plugins_and_what_did_not_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    market = shutil.copytree(MARKET, tmp_path / "market")
    assert plugin_main(["marketplace", "add", str(market)]) == 0
    assert plugin_main(["install", "kit@acme-local", "--yes"]) == 0
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["enabledPlugins"]["gone@acme-local"] = True
    settings.write_text(json.dumps(data))

    make, _ = fake_factory([], workspace=ws)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await pilot.press(*"/plugin")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="page")
        page = app.screen.plain()
    assert "marketplaces\n  acme-local" in page
    assert "kit@acme-local  enabled" in page
    assert "One of each part a plugin may bring" in page
    assert "plugin gone@acme-local is enabled but not installed" in page
    assert "/plugin install NAME@MARKETPLACE" in page


def _options_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AgentApp:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert plugin_main(["marketplace", "add", str(options_market(tmp_path))]) == 0
    assert plugin_main(["install", PLUGIN, "--yes"]) == 0
    make, _ = fake_factory([], workspace=ws)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0)


async def _form(pilot, app: AgentApp):  # type: ignore[no-untyped-def]
    from agent_tui.ui.screens.elicitation import ElicitationScreen

    await wait_until(pilot, lambda: app.session is not None, what="session")
    await pilot.press(*"/plugin config vault")
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, ElicitationScreen), what="the form")
    form = app.screen
    await wait_until(pilot, lambda: form.focused is not None, what="the first field's focus")
    form._shown_at = float("-inf")  # armed: the keys below are answers, not type-ahead
    return form


def test_plugin_options_form_snapshot(snap_compare, tmp_path: Path,  # type: ignore[no-untyped-def]
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await _form(pilot, pilot.app)
        await pilot.press(*"s3cret")  # shown as dots
        await pilot.pause()

    assert snap_compare(_options_app(tmp_path, monkeypatch), terminal_size=(100, 30),
                        run_before=run_before)


@pytest.mark.asyncio
async def test_plugin_options_form_checks_and_keeps_the_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.widgets import Input

    from agent_tui.plugins.options import secrets_path

    app = _options_app(tmp_path, monkeypatch)
    async with app.run_test(size=(100, 30)) as pilot:
        form = await _form(pilot, app)
        boxes = list(form.query(Input))
        assert boxes[0].password and not boxes[1].password and boxes[1].value == "eu"
        boxes[0].value, boxes[1].value, boxes[2].value = "k'1", "us", "9"
        boxes[2].focus()
        await pilot.press("enter")  # 9 is over the maximum: refused, nothing kept
        await wait_until(pilot, lambda: "at most 5" in str(form.query_one("#problem-2").content),
                         what="the retries' problem")
        assert not secrets_path().exists()
        boxes[2].value = "2"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is not form, what="the form closed")
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    assert settings["pluginConfigs"][PLUGIN] == {"options": {"region": "us", "retries": 2}}
    assert json.loads(secrets_path().read_text()) == {PLUGIN: {"api_key": "k'1"}}
