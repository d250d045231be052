"""A Claude Code user's memory, commands, skills and sub-agents in the real TUI: the
``agent-tui`` binary in tmux, ``HOME`` a home folder with ``~/.claude/`` and the
workspace a project with ``.claude/``, both copied from the fixtures
(``tests/claude_commands_fixtures``, ``tests/claude_code``), the fake API over HTTP.
What the user sees on screen and what the model receives are both checked."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_api import FakeAnthropicServer, Reply
from tests.tmux_agent import REPO, Tmux, agent_command

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TESTS = Path(__file__).parent


def _start(fake_api: FakeAnthropicServer, tmp_path: Path, fixtures: Path) -> Iterator[Tmux]:
    shutil.copytree(fixtures, tmp_path / "cc")
    workspace, home = tmp_path / "cc" / "project", tmp_path / "cc" / "home"
    tmux = Tmux(f"agent-tui-cc-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    env = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.url,
        "HOME": str(home),  # ~/.claude is the fixture's
        "AGENT_TUI_HOME": str(tmp_path / "agent-tui-home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": str(REPO),
        "AGENT_TUI_NOTIFY": "off",
    }
    tmux.start(agent_command(workspace), env, workspace)
    try:
        tmux.wait_for("Type a message")
        tmux.wait_for("auto: nothing asked")  # the session has started: its mode is shown
        yield tmux
    finally:
        tmux.quit()


@pytest.fixture
def commands_tui(fake_api: FakeAnthropicServer, tmp_path: Path) -> Iterator[Tmux]:
    yield from _start(fake_api, tmp_path, TESTS / "claude_commands_fixtures")


@pytest.fixture
def skills_tui(fake_api: FakeAnthropicServer, tmp_path: Path) -> Iterator[Tmux]:
    yield from _start(fake_api, tmp_path, TESTS / "claude_code")


def _inside(screen: str) -> str:
    """A page's text: the box's borders gone, its wrapped lines joined with spaces."""
    lines = (line.strip().strip("│╭╮╰╯─").strip() for line in screen.splitlines())
    return " ".join(line for line in lines if line)


def _flat(screen: str) -> str:
    """A page's text with no spaces or line ends: what wraps compares the same."""
    return "".join(_inside(screen).split())


def _first_text(body: dict) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_memory_imports_show_on_the_memory_page_and_a_command_runs_with_its_arguments(
    commands_tui: Tmux, fake_api: FakeAnthropicServer,
) -> None:
    tmux = commands_tui
    # the cycle is said where the user sees it, with the file and line
    tmux.wait_for("warning: memory:")
    tmux.type("/memory")
    tmux.keys("Enter")
    tmux.wait_for("─ memory ─")
    tmux.keys("End")  # the end of the page: what was not loaded, and why
    # with the file and line of the @path (the page wraps long lines: compared unspaced)
    screen = tmux.wait_for(lambda s: "cycle-b.md:2:@cycle-a.md:animportcycle" in _flat(s))
    assert "deep/five.md:2:@six.md:importsnestatmost5deep" in _flat(screen), screen
    tmux.keys("Escape")
    tmux.wait_for(lambda s: "─ memory ─" not in s)

    fake_api.enqueue(Reply.text("Reviewed the PR."))
    tmux.type('/review-pr 42 "very high" ada')
    tmux.keys("Enter")
    tmux.wait_for("Reviewed the PR.")
    sent = _first_text(fake_api.requests[0])
    assert sent == ("Review PR #42 with priority very high and assign it to ada.\n\n"
                    'ARGUMENTS: 42 "very high" ada')
    # the memory the model receives holds the imports, not the cycle twice
    system = json.dumps(fake_api.requests[0]["system"])
    assert "STYLE-MARKER" in system and system.count("CYCLE-A-MARKER") == 1


def test_skills_and_agents_pages_and_a_typed_subagent_run_from_the_tui(
    skills_tui: Tmux, fake_api: FakeAnthropicServer,
) -> None:
    tmux = skills_tui
    tmux.wait_for("warning:")  # the bad files are said where the user sees them
    tmux.type("/skills")
    tmux.keys("Enter")
    screen = _inside(tmux.wait_for("─ skills ─"))
    assert "no-front-matter project" in " ".join(screen.split()), screen  # its folder's name
    tmux.keys("End")
    screen = tmux.wait_for(lambda s: "broken-yaml/SKILL.md:4:" in _flat(s))
    assert "broken-yaml/SKILL.md:4:frontmatterisnotvalidYAML" in _flat(screen), screen
    tmux.keys("Escape")
    tmux.wait_for(lambda s: "─ skills ─" not in s)
    tmux.type("/agents")
    tmux.keys("Enter")
    screen = _inside(tmux.wait_for("─ sub-agents ─"))
    assert "code-reviewer project" in " ".join(screen.split()), screen
    assert "model:haiku(thenewesttheAPIlists)" in "".join(screen.split()), screen
    tmux.keys("Escape")
    tmux.wait_for(lambda s: "─ sub-agents ─" not in s)

    def answer(body: dict) -> Reply:
        if _first_text(body) == "review this":
            return Reply.text("the review: fine")
        steps = sum(1 for m in body["messages"] if m["role"] == "assistant")
        script = [
            Reply.tool_use("skill", {"name": "no-front-matter"}, id="toolu_skill"),
            Reply.tool_use("task", {"description": "review", "prompt": "review this",
                                    "subagent_type": "code-reviewer"}, id="toolu_task"),
        ]
        return script[steps] if steps < len(script) else Reply.text("All checked.")

    fake_api.enqueue(*[answer for _ in range(6)])
    tmux.type("check the changelog")
    tmux.keys("Enter")
    tmux.wait_for("All checked.")
    main = [r for r in fake_api.requests if _first_text(r) == "check the changelog"]
    assert "NO-FRONT-MATTER-SKILL-BODY" not in json.dumps(main[0])
    assert "NO-FRONT-MATTER-SKILL-BODY" in json.dumps(main[1]["messages"])
    child = next(r for r in fake_api.requests if _first_text(r) == "review this")
    assert [t["name"] for t in child["tools"]] == ["read_file", "glob", "grep"]
    assert child["model"] == "claude-haiku-4-5"
