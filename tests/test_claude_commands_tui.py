"""Claude Code's custom commands in the TUI: the menu lists ``.claude/commands`` and
``~/.claude/commands`` with their descriptions and scopes, a command runs through the
real session (its ``!`` line through the real ``bash`` tool), and Esc while that line
runs ends its process and sends nothing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import psutil  # noqa: E402
import pytest  # noqa: E402

from agent_tui.core.services.deps import AgentConfig, SessionDeps  # noqa: E402
from agent_tui.core.journal.journal import Journal  # noqa: E402
from agent_tui.core.calls.permission import AllowAll  # noqa: E402
from agent_tui.core.session.session import Session  # noqa: E402
from agent_tui.core.calls.tool import ToolSet  # noqa: E402
from agent_tui.protocol import UserMessage  # noqa: E402
from agent_tui.providers.scripted import ScriptedProvider  # noqa: E402
from agent_tui.tools.bash import BashTool  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests.support import demo_script, fake_factory, wait_until  # noqa: E402

FIXTURES = Path(__file__).parent / "claude_commands_fixtures"
SIZE = (110, 34)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace, home = tmp_path / "project", tmp_path / "home"
    shutil.copytree(FIXTURES / "project", workspace)
    shutil.copytree(FIXTURES / "home", home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return workspace


def _cmdline(proc: psutil.Process) -> str:
    try:
        return " ".join(proc.cmdline())
    except psutil.Error:  # gone, or a zombie not yet reaped
        return ""


async def _type(pilot, text: str) -> None:
    await pilot.press(*[("space" if c == " " else c) for c in text])


def _lines(app) -> dict[str, str]:
    return {item.value: item.prompt.plain for item in app.suggestions.items}


@pytest.mark.asyncio
async def test_the_menu_lists_claude_code_commands_with_descriptions_and_scopes(ws: Path) -> None:
    make, made = fake_factory([], workspace=ws)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0, workspace=ws)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/")
        await pilot.pause()
        shown = _lines(app)
        assert "Create a git commit" in shown["commit"] and "(project)" in shown["commit"]
        assert shown["commit"].startswith("/commit [message]")
        assert "Create a React component" in shown["frontend:component"]
        assert "(project:frontend)" in shown["frontend:component"]
        assert "(project:backend)" in shown["backend:test"]
        assert "Write my standup" in shown["standup"] and "(user)" in shown["standup"]
        assert "unclosed" not in shown
        await _type(pilot, "review")
        await pilot.pause()
        assert list(_lines(app))[0] == "review-pr"
        await pilot.press("tab")
        await _type(pilot, "42 high ada")
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops == [UserMessage(
            text="Review PR #42 with priority high and assign it to ada.\n\nARGUMENTS: 42 high ada")]


def _bash_session(ws: Path):
    def make(emit):
        deps = SessionDeps(
            config=AgentConfig(workspace=ws, model="scripted", cleanup_budget=2.0),
            provider=ScriptedProvider(demo_script(1.0), delay=0.01),
            tools=ToolSet([BashTool(grace=0.5)]), policy=AllowAll(), journal=Journal(), emit=emit,
        )
        return Session(deps)

    return make


@pytest.mark.asyncio
async def test_esc_while_a_bang_line_runs_ends_its_process_and_sends_nothing(ws: Path) -> None:
    app = AgentApp(_bash_session(ws), cursor_blink=False, clock=lambda: 0.0, workspace=ws)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.host.session is not None, what="the session")
        await _type(pilot, "/slow")
        await pilot.press("enter")
        try:
            await wait_until(pilot, lambda: (ws / "slow-started").exists(), timeout=15)
        except AssertionError:
            raise AssertionError(f"the step never started: {app.status.plain()!r}") from None
        sleepers: list[psutil.Process] = []

        def sleeping() -> bool:
            sleepers[:] = [p for p in psutil.Process().children(recursive=True)
                           if "sleep" in _cmdline(p)]
            return bool(sleepers)

        await wait_until(pilot, sleeping, what="the sleep")
        await wait_until(pilot, lambda: app.running, what="the app sees it running")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "nothing was sent" in app.status.plain(), timeout=15,
                         what="the stop said")
        await wait_until(pilot, lambda: not any(
            p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in sleepers),
            timeout=10, what="the sleep ended")
        assert not app.running
        assert "Slow context" not in app.transcript.plain_text()  # no turn, no message


def _bump(path: Path, text: str) -> None:
    """Write ``text``, with an mtime surely not the one before (coarse clocks)."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


@pytest.mark.asyncio
async def test_a_command_file_edited_during_the_session_is_read_again_and_a_broken_edit_keeps_the_last(
        ws: Path) -> None:
    commit = ws / ".claude" / "commands" / "commit.md"
    make, made = fake_factory([], workspace=ws)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0, workspace=ws)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/")
        await pilot.pause()
        assert "Create a git commit" in _lines(app)["commit"]
        _bump(commit, "---\ndescription: Commit it all, now\n---\nCommit everything.\n")
        (ws / ".claude" / "commands" / "fresh.md").write_text("A new one: $ARGUMENTS\n")
        await pilot.press("backspace")
        await _type(pilot, "/")
        await pilot.pause()
        shown = _lines(app)
        assert "Commit it all, now" in shown["commit"] and "fresh" in shown
        assert "custom commands changed: 2 reloaded" in app.status.notice_text
        app.status.clear_notice()
        await pilot.press("backspace")
        await _type(pilot, "/")
        await pilot.pause()
        assert "reloaded" not in app.status.notice_text  # said once
        # an edit that breaks the file: the last good version is kept, the problem named
        _bump(commit, "---\ndescription: half typed\nCommit\n")
        await pilot.press("backspace")
        await _type(pilot, "/")
        await pilot.pause()
        assert "Commit it all, now" in _lines(app)["commit"]
        notice = app.status.notice_text
        assert "custom commands changed: 1 reloaded" in notice
        assert f"{commit}: line 1:" in notice and "last good version is kept" in notice
        await _type(pilot, "commit")
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops == [UserMessage(text="Commit everything.")]
