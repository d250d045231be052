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


@pytest.mark.asyncio
async def test_the_status_line_is_told_the_lines_edits_changed_and_the_api_time(
        tmp_path: Path) -> None:
    from agent_tui.protocol import ToolState, ToolStateChanged, TurnStarted
    from agent_tui.ui.link.status_refresh import status_payload

    edit = {"path": "a.txt", "old_string": "one\ntwo", "new_string": "one\n2\n3\nfour"}
    events = [TurnStarted(turn_id="t1", text="edit it")] + [
        ToolStateChanged(turn_id="t1", tool_use_id="toolu_1", name="edit_file", state=state,
                         summary="a.txt", input=edit)
        for state in (ToolState.QUEUED, ToolState.RUNNING, ToolState.SUCCEEDED,
                      ToolState.SUCCEEDED)]  # told twice, counted once
    make, _ = fake_factory(events, workspace=tmp_path)
    seen = tmp_path / "seen.json"
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0, status_line=lambda ws: (
        StatusLineCommand(f"cat > {seen}; echo ok", ws), []))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.usage.lines_added > 0, what="the edit counted")
        payload = status_payload(app.session, "m", app.usage, 0.0)
        assert (payload["cost"]["total_lines_added"], payload["cost"]["total_lines_removed"]) == (3, 1)
        await wait_until(pilot, lambda: seen.exists() and '"total_lines_added": 3' in seen.read_text(),
                         what="the command told it")

    class Budget:
        api_seconds = 1.25

    class Deps:
        budget = Budget()

    class Session:
        workspace, deps = tmp_path, Deps()

    assert status_payload(Session(), "m", app.usage, 0.0)["cost"]["total_api_duration_ms"] == 1250


def test_the_status_line_gets_the_users_settings_env(tmp_path: Path, monkeypatch) -> None:
    from agent_tui.hooks.status_line import status_line_for

    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(
        {"statusLine": {"type": "command", "command": "printf %s \"$TEAM\""}}))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-shown")
    command, _ = status_line_for(tmp_path, env={"TEAM": "core"})
    assert command is not None
    assert command.env["TEAM"] == "core" and "ANTHROPIC_API_KEY" not in command.env


def test_a_run_that_ends_after_the_app_is_gone_leaves_no_coroutine_unawaited(tmp_path: Path) -> None:
    import asyncio
    import gc
    import threading
    import warnings

    app = _app(tmp_path, "cat > /dev/null; sleep 30; echo late")

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.status_refresh.command is not None
                             and app.status_refresh.command.running, what="a run going")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())  # the app's loop ends and closes while the run goes on
        for thread in [t for t in threading.enumerate() if t.name == "status-line"]:
            thread.join(20)  # the run, ended with the app, has said it ended
            assert not thread.is_alive()  # nothing waits for an answer from a closed loop
        gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []
