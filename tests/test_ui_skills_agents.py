"""/skills and /agents in the TUI: what the session loaded from Claude Code's folders,
where each came from, and the files that could not be loaded (with their line)."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from agent_tui.core.calls.agent_types import load_agent_types  # noqa: E402
from agent_tui.core.calls.tool import ToolSet  # noqa: E402
from agent_tui.tools.skills import SkillTool, load_skills  # noqa: E402
from agent_tui.tools.task import TaskTool  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.info import InfoScreen  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

CONFIG = Path(__file__).parent / "claude_code"
SIZE = (110, 34)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(workspace, home), a copy of tests/claude_code/; HOME is that home."""
    shutil.copytree(CONFIG, tmp_path / "cc")
    home = tmp_path / "cc" / "home"
    monkeypatch.setenv("HOME", str(home))
    return tmp_path / "cc" / "project", home


def _app(workspace: Path, home: Path, *, with_skills: bool = True) -> AgentApp:
    tools = [TaskTool(load_agent_types(workspace, home))]
    if with_skills:
        tools.append(SkillTool(load_skills(workspace, home)))
    make, _ = fake_factory([], workspace=workspace)

    def made(emit):
        session = make(emit)
        session.tools = ToolSet(tools)
        return session

    return AgentApp(made, cursor_blink=False, clock=lambda: 0.0)


async def _open(pilot, app: AgentApp, command: str) -> str:
    await wait_until(pilot, lambda: app.session is not None, what="session")
    await pilot.press(*command)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="page")
    return app.screen.plain()


@pytest.mark.asyncio
async def test_skills_lists_each_skill_with_where_it_came_from(config) -> None:
    workspace, home = config
    app = _app(workspace, home)
    async with app.run_test(size=SIZE) as pilot:
        page = await _open(pilot, app, "/skills")
    assert "pdf-forms  user  ~/.claude/skills/pdf-forms" in page
    assert "release-notes  project  .claude/skills/release-notes" in page
    assert "csv-summary  project (.agents)  .agents/skills/csv-summary" in page
    # no front matter: named after its folder, described by its first paragraph
    assert "no-front-matter  project  .claude/skills/no-front-matter" in page
    assert "Checks that the changelog has an entry for every merged change." in page
    assert "Drafts release notes from the git log since the last tag." in page
    assert "allowed-tools (not applied): Bash(git log:*), Bash(git describe:*), Read" in page
    assert ".claude/skills/broken-yaml/SKILL.md:4: front matter is not valid YAML" in page
    assert ".claude/skills/Bad_Name/SKILL.md:2: the name 'Bad_Name'" in page
    assert "RELEASE-NOTES-SKILL-BODY" not in page


@pytest.mark.asyncio
async def test_skills_without_any_says_where_they_are_looked_for(config) -> None:
    workspace, home = config
    app = _app(workspace, home, with_skills=False)
    async with app.run_test(size=SIZE) as pilot:
        page = await _open(pilot, app, "/skills")
    assert "No skills loaded" in page and "~/.claude/skills, .claude/skills" in page


@pytest.mark.asyncio
async def test_agents_lists_types_tools_models_and_bad_files(config) -> None:
    workspace, home = config
    app = _app(workspace, home)
    async with app.run_test(size=SIZE) as pilot:
        page = await _open(pilot, app, "/agents")
    assert "code-reviewer  project  .claude/agents/code-reviewer.md" in page
    assert "tools: Read, Grep, Glob · model: haiku (the newest the API lists)" in page
    assert "tools: Bash, Read · model: inherit (the main agent's)" in page
    assert "explainer  user  ~/.claude/agents/explainer.md" in page
    assert "tools: all but Task · model: claude-sonnet-5-5" in page
    assert ".claude/agents/bad-yaml.md:4: front matter is not valid YAML" in page
    assert ".claude/agents/no-description.md:1: no description" in page
    assert "~/.claude/agents/code-reviewer.md: sub-agent 'code-reviewer' is also defined" in page


def _snapshot_run(command: str):
    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(pilot, app, 0)
        await _open(pilot, app, command)
        await pilot.pause()

    return run_before


def test_skills_page_snapshot(snap_compare, config) -> None:
    workspace, home = config
    assert snap_compare(_app(workspace, home), terminal_size=SIZE,
                        run_before=_snapshot_run("/skills"))


def test_agents_page_snapshot(snap_compare, config) -> None:
    workspace, home = config
    assert snap_compare(_app(workspace, home), terminal_size=SIZE,
                        run_before=_snapshot_run("/agents"))
