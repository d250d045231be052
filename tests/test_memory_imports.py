"""Memory as Claude Code reads it: ``~/.claude/CLAUDE.md``, ``CLAUDE.md``,
``CLAUDE.local.md`` and their ``@path`` imports (nested, a cycle, a missing file, one
too deep, one in a code block, one a project may not read), checked on the loader,
on ``/memory``, and on the system prompt the real agent sends the fake API."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.core.memory.memory_loader import import_mentions, load_memory_with_problems
from agent_tui.ui.commands.reports import memory_report
from tests.fake_api import Reply
from tests.print_agent import env_for

FIXTURES = Path(__file__).parent / "claude_commands_fixtures"
AGENT = [sys.executable, "-m", "agent_tui.cli"]


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    ws, home = tmp_path / "project", tmp_path / "home"
    shutil.copytree(FIXTURES / "project", ws)
    shutil.copytree(FIXTURES / "home", home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return ws, home


def _names(memory, ws: Path, home: Path) -> list[str]:
    out = []
    for item in memory.files:
        path = Path(item.path)
        out.append(f"~/{path.relative_to(home)}" if home in path.parents else str(path.relative_to(ws)))
    return out


def test_files_load_in_claude_codes_order_each_followed_by_its_imports(setup) -> None:
    ws, home = setup
    memory = load_memory_with_problems(ws)

    assert _names(memory, ws, home) == [
        "~/.claude/CLAUDE.md",
        "CLAUDE.md", "docs/overview.md", "docs/nested/style.md", "docs/cycle-a.md",
        "docs/cycle-b.md", "docs/api.md", "~/.claude/my-project-notes.md",
        "CLAUDE.local.md", "deep/one.md", "deep/two.md", "deep/three.md", "deep/four.md",
        "deep/five.md",
    ]
    scopes = {Path(f.path).name: f.scope for f in memory.files}
    assert scopes["CLAUDE.md"] == "project" and scopes["CLAUDE.local.md"] == "local"
    style = next(f for f in memory.files if f.path.endswith("style.md"))
    assert style.imported_from == str(ws / "docs" / "overview.md") and style.line == 2


def test_a_cycle_a_missing_file_a_deep_one_and_one_outside_are_said_with_file_and_line(setup) -> None:
    ws, home = setup
    memory = load_memory_with_problems(ws)
    said = [str(p) for p in memory.problems]

    assert f"memory: {ws / 'docs' / 'cycle-b.md'}:2: @cycle-a.md: an import cycle " \
           "(cycle-a.md -> cycle-b.md -> cycle-a.md): not imported again" in said
    assert f"memory: {ws / 'CLAUDE.md'}:8: @docs/missing.md: no such file (not imported)" in said
    assert any(s.startswith(f"memory: {ws / 'deep' / 'five.md'}:2: @six.md: imports nest at most 5")
               for s in said)
    assert any(s.startswith(f"memory: {ws / 'CLAUDE.md'}:9: @~/private-notes.txt: outside the workspace")
               for s in said)
    assert len(said) == 4  # "@alice" is a name: not a file, not a problem
    text = "\n".join(f.text for f in memory.files)
    assert "PRIVATE-MARKER" not in text and "DEEP-6" not in text
    assert "SECRET-MARKER" not in text  # named only in a code span and a code block
    assert text.count("CYCLE-A-MARKER") == 1


def test_imports_in_code_spans_and_fences_are_not_read() -> None:
    text = "a @one.md `@two.md` b\n```\n@three.md\n```\n~~~~\n```\n@four.md\n~~~~\n@five.md me@host"
    assert import_mentions(text) == [(1, "one.md"), (9, "five.md")]


def test_the_users_memory_may_import_any_file(setup, tmp_path: Path) -> None:
    ws, home = setup
    (home / ".claude" / "CLAUDE.md").write_text("mine: @~/private-notes.txt\n")
    memory = load_memory_with_problems(ws)
    assert any("PRIVATE-MARKER" in f.text for f in memory.files)


def test_memory_report_lists_imported_files_and_what_was_not_loaded(setup) -> None:
    ws, _home = setup
    memory = load_memory_with_problems(ws)
    page = memory_report(memory.files, memory.problems).plain
    assert f"project: {ws / 'docs' / 'nested' / 'style.md'}" in page
    assert f"imported by {ws / 'docs' / 'overview.md'}:2" in page
    assert "not loaded" in page and "an import cycle" in page


def test_the_agent_sends_the_memory_and_says_what_it_could_not_import(fake_api, setup, tmp_path) -> None:
    ws, home = setup
    fake_api.enqueue(Reply.text("ok"))
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  HOME=str(home), XDG_CONFIG_HOME=str(tmp_path / "config"))
    out = subprocess.run(AGENT + ["-p", "hi", "--cwd", str(ws)], env=env,
                         capture_output=True, text=True, timeout=60)

    assert out.returncode == 0, out.stderr
    system = fake_api.requests[0]["system"]
    system = system if isinstance(system, str) else "".join(b["text"] for b in system)
    for marker in ("USER-CLAUDE-MARKER", "OVERVIEW-MARKER", "STYLE-MARKER", "CYCLE-B-MARKER",
                   "API-MARKER", "HOME-NOTES-MARKER", "DEEP-5", "sandbox is at"):
        assert marker in system
    for absent in ("SECRET-MARKER", "PRIVATE-MARKER", "DEEP-6"):
        assert absent not in system
    assert system.index("USER-CLAUDE-MARKER") < system.index("OVERVIEW-MARKER") < \
        system.index("sandbox is at")
    assert "an import cycle" in out.stderr and "cycle-b.md:2" in out.stderr


@pytest.mark.asyncio
async def test_a_subfolders_memory_brings_its_imports_when_it_joins(fake_api, tmp_path, monkeypatch) -> None:
    from agent_tui.protocol import UserMessage
    from tests.harness import QuickTool, start_session
    from tests.harness import provider_for

    ws = tmp_path / "ws"
    (ws / "pkg" / "notes").mkdir(parents=True)
    (ws / "pkg" / "AGENTS.md").write_text("pkg rules: @notes/style.md and @~/private-notes.txt\n")
    (ws / "pkg" / "notes" / "style.md").write_text("PKG-STYLE-MARKER: tabs\n")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "private-notes.txt").write_text("PRIVATE-MARKER")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    fake_api.enqueue(Reply.tool_use("quick", {"note": "x", "path": "pkg/file.py"}), Reply.text("ok"))
    run = start_session(provider_for(fake_api), [QuickTool()], ws)
    run.submit(UserMessage(text="edit pkg/file.py"))
    await run.idle()
    await run.close()
    second = str(fake_api.requests[1]["messages"])
    assert "pkg rules:" in second and "PKG-STYLE-MARKER" in second
    assert "PRIVATE-MARKER" not in second
    said = [n.text for n in run.rec.of("notice")]
    assert any(f"{ws / 'pkg' / 'AGENTS.md'}:1: @~/private-notes.txt: outside the workspace" in t for t in said)
