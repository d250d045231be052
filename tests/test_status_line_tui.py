"""The user's status line in the TUI: under the input, its colours kept and nothing
else of the terminal's, refreshed when what it is told changes; a failing command says
its error once and the screen stays usable."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from agent_tui.hooks.status_line import StatusLineCommand  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests.support import fake_factory, wait_until  # noqa: E402

SIZE = (80, 16)
# reads the JSON it is given; the title escape and the screen clear must not reach the screen
COMMAND = (f"{sys.executable} -c 'import json,sys; d=json.load(sys.stdin); "
           "e=chr(27); print(e+\"]0;pwned\"+chr(7)+e+\"[2J\"+e+\"[1;32m⎇ main\"+e+\"[0m  \"+e+\"[36m\""
           "+d[\"hook_event_name\"]+e+\"[0m  \"+e+\"[33m$\"+str(d[\"cost\"][\"total_cost_usd\"])+e+\"[0m\")'")


def _app(tmp_path: Path, command: str, log: list[str] | None = None) -> AgentApp:
    make, _ = fake_factory([], workspace=tmp_path)

    def status_line(workspace: Path):
        return StatusLineCommand(command, workspace), ["a note from the settings"] if log else []

    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, status_line=status_line)


def test_status_line_snapshot(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_until(pilot, lambda: app.status_command.display, what="the status line")
        await pilot.pause()

    assert snap_compare(_app(tmp_path, COMMAND), terminal_size=SIZE, run_before=run_before)


@pytest.mark.asyncio
async def test_a_failing_status_line_says_its_error_once_and_the_input_still_works(
        tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    command = f"echo run >> {runs}; echo 'no git here' >&2; exit 1"
    app = _app(tmp_path, command)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "no git here" in app.status.plain(), what="the error")
        assert not app.status_command.display
        app.status.clear_notice()
        app.usage.window = 200_000  # something it is told changes: it runs again
        await wait_until(pilot, lambda: runs.exists() and len(runs.read_text().split()) >= 2,
                         what="a second run")
        await pilot.pause(0.2)
        assert "no git here" not in app.status.plain()  # said once
        await pilot.press(*"still typing")
        assert app.prompt.text == "still typing"
