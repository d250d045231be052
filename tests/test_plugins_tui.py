"""``/plugin`` in the TUI: the marketplaces and installed plugins Claude Code's records
hold, each enabled or not, what a plugin that did not load has wrong, and how to change
them."""

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
    assert "agent-tui plugin install NAME@MARKETPLACE" in page
