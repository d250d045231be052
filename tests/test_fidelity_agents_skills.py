"""Sub-agent and skill files as Claude Code 2.1.332 reads them (``fidelity_fixtures/
claude_code_agents_skills.json``): agents in subfolders of ``.claude/agents/``, a
description over several lines, every Claude Code tool name in ``tools:`` (given,
stood in for, or said missing), and a skill whose ``name`` is a title."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.core.calls.agent_types import load_agent_types
from agent_tui.protocol import UserMessage
from agent_tui.tools.files import ReadFileTool
from agent_tui.tools.skills.catalog import load_skills
from agent_tui.tools.task import TaskTool
from tests.fake_api import Reply
from tests.harness import provider_for, serve, start_session

SEEN = json.loads((Path(__file__).parent / "fidelity_fixtures" /
                   "claude_code_agents_skills.json").read_text())

MULTI = """---
name: code-explorer
description: Use this agent when the user asks to trace a feature. Examples:
  <example>Context: the user wants to know how login works. user: "How does login work?"
  assistant: "I'll use the code-explorer agent."</example>
tools: Glob, Grep, LS, Read, NotebookRead, WebFetch, TodoWrite, WebSearch, KillShell, BashOutput, MultiEdit, NotebookEdit
model: sonnet
---
You trace features.
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_agents_in_subfolders_and_over_several_lines_load(tmp_path: Path) -> None:
    assert "sub-simple" in " ".join(SEEN["agents"]["listed"])  # Claude Code reads subfolders
    _write(tmp_path, {
        ".claude/agents/review/simple.md": "---\nname: sub-simple\ndescription: Simple one in a "
                                           "subfolder\ntools: Read\n---\nYou review.\n",
        ".claude/agents/explore/deep/explorer.md": MULTI,
    })
    types = load_agent_types(tmp_path, home=tmp_path / "home")
    assert sorted(types.names()) == ["code-explorer", "sub-simple"]
    explorer = types.get("code-explorer")
    assert explorer is not None
    assert explorer.description.startswith("Use this agent when the user asks to trace a feature. "
                                           "Examples: <example>Context: the user wants")
    assert explorer.description.endswith("\"I'll use the code-explorer agent.\"</example>")
    # every Claude Code name maps: LS is glob, MultiEdit is edit_file, NotebookRead read_file
    assert set(explorer.tools or ()) == {"glob", "grep", "read_file", "web_fetch", "todo_write",
                                         "web_search", "kill_shell", "bash_output", "edit_file"}
    said = [str(p) for p in types.problems]
    assert said == [f"{tmp_path / '.claude/agents/explore/deep/explorer.md'}:6: tools: "
                    "'NotebookEdit': agent-tui has no such tool; left out"]


def test_a_key_indented_by_mistake_is_still_an_error(tmp_path: Path) -> None:
    _write(tmp_path, {".claude/agents/x.md": "---\nname: x\n  description: wrong\n---\nBody\n"})
    types = load_agent_types(tmp_path, home=tmp_path / "home")
    assert types.names() == [] and "not valid YAML" in str(types.problems[0])


def test_a_skill_named_by_a_title_is_called_by_its_folder(tmp_path: Path) -> None:
    assert SEEN["skills"]["listed"][0].startswith("- writing-rules:")
    _write(tmp_path, {
        ".claude/skills/writing-rules/SKILL.md": "---\nname: Writing Hookify Rules\ndescription: "
        "This skill should be used when the user asks to create a hookify rule.\nversion: 0.1.0\n"
        "---\n# Writing rules\nBODY\n"})
    skills = load_skills(tmp_path, home=tmp_path / "home")
    assert [s.name for s in skills.skills] == ["writing-rules"]
    assert any("'Writing Hookify Rules' is a title" in str(p) for p in skills.problems)


@pytest.mark.asyncio
async def test_a_listed_tool_the_session_does_not_offer_is_said_when_the_sub_agent_starts(
        fake_api, tmp_path: Path) -> None:
    _write(tmp_path, {".claude/agents/searcher.md": "---\nname: searcher\ndescription: Searches\n"
                      "tools: Read, WebSearch, mcp__github\n---\nSearch.\n"})
    types = load_agent_types(tmp_path, tmp_path / "nohome")
    serve(fake_api, {
        ("go", 0): Reply.tool_use("task", {"description": "search", "prompt": "search it",
                                           "subagent_type": "searcher"}, id="toolu_s"),
        ("search it", 0): Reply.text("found"),
        ("go", 1): Reply.text("done"),
    })
    run = start_session(provider_for(fake_api), [ReadFileTool(), TaskTool(types)], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.idle(timeout=20)
    said = [n.text for n in run.rec.of("notice")]
    assert "sub-agent searcher: WebSearch, mcp__github not offered in this session; it runs without" in said
    assert run.rec.tool_states("toolu_s")[-1] == "succeeded"
    await run.close()
