"""The command menu as Claude Code behaves (observed with Claude Code 2.1.x): a name typed
in full is the command that runs, never a longer one that starts with it (``/commit``
next to ``/commit-push-pr``), and Enter on a complete command line runs what was typed."""

from __future__ import annotations

import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import UserMessage  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.commands.builtin import BUILTIN  # noqa: E402
from agent_tui.ui.commands.registry import Command, CommandKind, Commands  # noqa: E402
from tests.snapshot_tests.support import fake_factory, wait_until  # noqa: E402

SIZE = (110, 34)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    commands = tmp_path / "project" / ".claude" / "commands"
    commands.mkdir(parents=True)
    # The official plugin's pair: the longer name was listed first.
    (commands / "commit-push-pr.md").write_text(
        "---\ndescription: Commit, push, and open a PR\n---\nPUSH AND OPEN A PR $ARGUMENTS\n")
    (commands / "commit.md").write_text(
        "---\ndescription: Create a git commit\n---\nCOMMIT ONLY $ARGUMENTS\n")
    return tmp_path / "project"


def _custom(name: str) -> Command:
    return Command(name=name, description=f"the {name} command", kind=CommandKind.CUSTOM)


def test_an_exact_name_is_first_whatever_the_order_listed() -> None:
    commands = Commands(BUILTIN, [_custom("commit-push-pr"), _custom("commit")])
    assert [c.name for c in commands.matching("commit")] == ["commit", "commit-push-pr"]
    assert [c.name for c in commands.matching("comm")][:2] == ["commit-push-pr", "commit"]


async def _type(pilot, text: str) -> None:
    await pilot.press(*[("space" if c == " " else c) for c in text])


def _app(ws: Path):
    make, made = fake_factory([], workspace=ws)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, workspace=ws), made


async def _typed_commit(app, pilot) -> None:
    await wait_until(pilot, lambda: app.session is not None, what="session")
    await _type(pilot, "/commit")
    await pilot.pause()


@pytest.mark.asyncio
async def test_enter_on_slash_commit_runs_commit_not_commit_push_pr(ws: Path) -> None:
    app, made = _app(ws)
    async with app.run_test(size=SIZE) as pilot:
        await _typed_commit(app, pilot)
        assert [item.value for item in app.suggestions.items][:2] == ["commit", "commit-push-pr"]
        await pilot.press("enter")  # the command takes arguments: run as typed, with none
        await wait_until(pilot, lambda: bool(made[0].ops), what="the command's prompt")
        assert [op.text.strip() for op in made[0].ops if isinstance(op, UserMessage)] == ["COMMIT ONLY"]
        assert app.prompt.text == ""


@pytest.mark.asyncio
async def test_enter_after_moving_to_another_item_takes_that_item(ws: Path) -> None:
    app, made = _app(ws)
    async with app.run_test(size=SIZE) as pilot:
        await _typed_commit(app, pilot)
        await pilot.press("down", "enter")  # chosen on purpose: completed, not run
        await pilot.pause()
        assert app.prompt.text == "/commit-push-pr " and made[0].ops == []
