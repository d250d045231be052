"""Skills: SKILL.md folders in Claude Code's shape, offered by name, loaded only on use.

The configuration is tests/claude_code/ (a project and a home folder, some files broken
on purpose), copied into a temporary folder; the model is the fake API through the
real SDK.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from agent_tui.cancel import CancelScope
from agent_tui.core.calls.tool import ToolContext
from agent_tui.protocol import UserMessage
from agent_tui.tools.files import ReadFileTool, WriteFileTool
from agent_tui.tools.skills import SkillTool, load_skills
from agent_tui.tools.skills.catalog import SkillScope
from tests.fake_api import Reply
from tests.harness import start_session
from tests.harness import provider_for

CONFIG = Path(__file__).parent / "claude_code"


@pytest.fixture
def config(tmp_path: Path) -> tuple[Path, Path]:
    """(workspace, home): a copy of tests/claude_code/."""
    shutil.copytree(CONFIG, tmp_path / "cc")
    return tmp_path / "cc" / "project", tmp_path / "cc" / "home"


def ctx_for(workspace: Path) -> ToolContext:
    return ToolContext(scope=CancelScope("test"), workspace=workspace, tool_use_id="toolu_x",
                       operation_id="op")


def run_tool(tool, raw: dict, workspace: Path):
    return asyncio.run(tool.run(tool.parse(raw), ctx_for(workspace)))


# -- finding them --------------------------------------------------------------------


def test_skills_load_from_every_folder_and_bad_ones_are_named_with_file_and_line(config):
    workspace, home = config
    skills = load_skills(workspace, home)
    assert {s.name: s.scope for s in skills.skills} == {
        "pdf-forms": SkillScope.USER,
        "release-notes": SkillScope.PROJECT,
        "csv-summary": SkillScope.PROJECT_AGENTS,
        # no front matter: named after its folder, described by its first paragraph
        "no-front-matter": SkillScope.PROJECT,
    }
    assert skills.get("no-front-matter").description.startswith(
        "Checks that the changelog has an entry for every merged change.")
    assert all(s.folder.is_absolute() for s in skills.skills)
    problems = [str(p) for p in skills.problems]

    def about(folder: str) -> str:
        found = [p for p in problems if f"/{folder}/SKILL.md" in p]
        assert len(found) == 1, problems
        return found[0]

    assert ":4: front matter is not valid YAML" in about("broken-yaml")
    assert "not loaded" in about("broken-yaml")
    assert not [p for p in problems if "/no-front-matter/" in p]
    assert ":2: the name 'Bad_Name' must be lowercase" in about("Bad_Name")
    # allowed-tools is read and said not to grant anything
    assert ":4: allowed-tools (Bash(git log:*), Bash(git describe:*), Read) is not applied" in (
        about("release-notes"))


def test_a_users_skill_wins_over_a_projects_of_the_same_name(config):
    workspace, home = config
    shutil.copytree(home / ".claude" / "skills" / "pdf-forms",
                    workspace / ".claude" / "skills" / "pdf-forms")
    skills = load_skills(workspace, home)
    assert skills.get("pdf-forms").scope is SkillScope.USER
    assert any("also defined in" in str(p) and str(workspace) in str(p) for p in skills.problems)


def test_unknown_and_unapplied_keys_are_named(tmp_path):
    folder = tmp_path / ".claude" / "skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Deploys\ncontext: fork\nflavour: mint\n---\nDeploy.\n")
    skills = load_skills(tmp_path, tmp_path / "nohome")
    assert [s.name for s in skills.skills] == ["deploy"]  # it loads, the keys are named
    texts = [str(p) for p in skills.problems]
    assert any(":4: context: not applied by agent-tui" in t for t in texts)
    assert any(":5: flavour: unknown key" in t for t in texts)


def test_the_skill_tool_lists_names_and_descriptions_only(config):
    workspace, home = config
    tool = SkillTool(load_skills(workspace, home))
    spec = tool.spec()
    assert spec["name"] == "skill"
    assert spec["input_schema"]["required"] == ["name"]
    assert "- release-notes: Drafts release notes from the git log" in spec["description"]
    assert "- pdf-forms: Fills PDF forms: finds the fields" in spec["description"]
    assert "RELEASE-NOTES-SKILL-BODY" not in json.dumps(spec)
    assert "Bad_Name" not in spec["description"]


def test_an_unknown_skill_is_an_error_that_lists_them(config):
    workspace, home = config
    result = run_tool(SkillTool(load_skills(workspace, home)), {"name": "nope"}, workspace)
    assert result.is_error
    assert "no skill named 'nope'" in result.content and "release-notes" in result.content


def test_a_skills_body_gets_its_folder_and_the_project_as_claude_code_puts_them(tmp_path):
    workspace, home = tmp_path / "ws", tmp_path / "home"
    folder = home / ".claude" / "skills" / "lint"
    folder.mkdir(parents=True)
    workspace.mkdir()
    (folder / "SKILL.md").write_text(
        "---\ndescription: d\n---\nRun ${CLAUDE_SKILL_DIR}/lint.sh in ${CLAUDE_PROJECT_DIR}; "
        "${CLAUDE_PLUGIN_ROOT}, ${HOME} and ${user_config.k} stay.\n")
    result = run_tool(SkillTool(load_skills(workspace, home)), {"name": "lint"}, workspace)
    assert (f"Run {folder}/lint.sh in {workspace}; ${{CLAUDE_PLUGIN_ROOT}}, ${{HOME}} and "
            "${user_config.k} stay.") in result.content


def test_a_skills_effort_is_claude_code_s_default_when_none_was_chosen(tmp_path):
    """Claude Code 2.1.332, run against the fake API with no --effort (sonnet 4.6, opus 4.6
    and haiku 4.5 alike), put ``high`` for ``${CLAUDE_EFFORT}``; with ``--effort low``, low."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    folder = home / ".claude" / "skills" / "probe"
    folder.mkdir(parents=True)
    workspace.mkdir()
    (folder / "SKILL.md").write_text("---\ndescription: d\n---\nEFFORT ${CLAUDE_EFFORT} END\n")
    tool = SkillTool(load_skills(workspace, home))
    assert "EFFORT high END" in run_tool(tool, {"name": "probe"}, workspace).content
    chosen = replace(ctx_for(workspace), effort="low")
    assert "EFFORT low END" in asyncio.run(tool.run(tool.parse({"name": "probe"}), chosen)).content


# -- reading a skill's folder --------------------------------------------------------


def test_read_file_reads_a_skill_folder_outside_the_workspace_and_nothing_beside_it(config):
    workspace, home = config
    skills = load_skills(workspace, home)
    folder = skills.get("pdf-forms").folder
    (home / ".claude" / "secret.txt").write_text("SECRET")
    os.symlink(home / ".claude" / "secret.txt", folder / "escape.md")
    read = ReadFileTool(read_roots=skills.folders())

    ok = run_tool(read, {"path": str(folder / "reference.md")}, workspace)
    assert not ok.is_error and "PDF-FORMS-REFERENCE" in ok.content
    nested = run_tool(read, {"path": str(folder / "scripts" / "fill.py")}, workspace)
    assert "would fill" in nested.content

    beside = run_tool(read, {"path": str(home / ".claude" / "secret.txt")}, workspace)
    assert beside.is_error and "outside the workspace" in beside.content
    climbing = run_tool(read, {"path": str(folder / ".." / ".." / "secret.txt")}, workspace)
    assert climbing.is_error and "SECRET" not in climbing.content
    link = run_tool(read, {"path": str(folder / "escape.md")}, workspace)
    assert link.is_error and "SECRET" not in link.content
    # without the read roots the folder is outside, as before
    plain = run_tool(ReadFileTool(), {"path": str(folder / "reference.md")}, workspace)
    assert plain.is_error
    # and nothing may write there
    wrote = run_tool(WriteFileTool(), {"path": str(folder / "new.md"), "content": "x"}, workspace)
    assert wrote.is_error and not (folder / "new.md").exists()


# -- through the model ---------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_skills_body_reaches_the_model_only_after_it_is_used(fake_api, config):
    workspace, home = config
    skills = load_skills(workspace, home)
    folder = skills.get("pdf-forms").folder
    fake_api.enqueue(
        Reply.tool_use("skill", {"name": "pdf-forms"}, id="toolu_skill"),
        Reply.tool_use("read_file", {"path": str(folder / "reference.md")}, id="toolu_ref"),
        Reply.text("filled"),
    )
    run = start_session(provider_for(fake_api),
                        [ReadFileTool(read_roots=skills.folders()), SkillTool(skills)], workspace)
    run.submit(UserMessage(text="fill my form"))
    await run.idle(timeout=20)
    assert fake_api.rejections == []
    first, second, third = fake_api.requests
    assert "PDF-FORMS-SKILL-BODY" not in json.dumps(first)
    skill_spec = next(t for t in first["tools"] if t["name"] == "skill")
    assert "pdf-forms: Fills PDF forms" in skill_spec["description"]

    def result_of(request: dict, tool_use_id: str) -> str:
        for message in request["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result" and block["tool_use_id"] == tool_use_id:
                    content = block["content"]
                    return content if isinstance(content, str) else json.dumps(content)
        raise AssertionError(f"no result for {tool_use_id}")

    loaded = result_of(second, "toolu_skill")
    assert "PDF-FORMS-SKILL-BODY" in loaded
    assert f"Base directory for this skill: {folder}" in loaded
    assert "PDF-FORMS-REFERENCE" in result_of(third, "toolu_ref")
    # the tools (and their descriptions) did not change along the way: the cache holds
    assert first["tools"] == second["tools"] == third["tools"]
    # a skill never used never reaches the model
    assert all("RELEASE-NOTES-SKILL-BODY" not in json.dumps(r) for r in fake_api.requests)
    await run.close()


def test_hooks_see_the_skill_call_in_claude_codes_shape():
    from agent_tui.protocol.tool_names import claude_input, claude_name, our_input, our_name

    assert claude_name("skill") == "Skill" and our_name("Skill") == "skill"
    assert claude_input("skill", {"name": "pdf-forms"}, "/ws") == {"skill": "pdf-forms"}
    assert our_input("skill", {"skill": "pdf-forms"}) == {"name": "pdf-forms"}


def test_a_long_list_of_skills_keeps_the_tool_description_bounded(tmp_path):
    from agent_tui.tools.skills.tool import LISTING_BUDGET

    for i in range(40):
        folder = tmp_path / ".claude" / "skills" / f"skill-{i:02d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:02d}\ndescription: {'word ' * 199}end\n---\nbody\n")
    tool = SkillTool(load_skills(tmp_path, tmp_path / "nohome"))
    assert len(tool.description) < LISTING_BUDGET + 4000
    assert "- skill-39 (description left out: the list is long)" in tool.description
    assert "- skill-00: word word" in tool.description


def test_a_value_put_in_a_skills_body_is_never_read_again(tmp_path):
    from agent_tui.tools.skills.catalog import Skill
    from agent_tui.tools.skills.tool import with_values

    skill = Skill(name="p:s", description="d", folder=tmp_path, scope=SkillScope.PLUGIN,
                  values={"user_config.k": "${CLAUDE_SKILL_DIR}", "CLAUDE_PLUGIN_ROOT": "/p"})
    assert with_values(skill, "${user_config.k} ${CLAUDE_PLUGIN_ROOT} ${CLAUDE_SKILL_DIR}",
                       tmp_path) == f"${{CLAUDE_SKILL_DIR}} /p {tmp_path}"
    # the session's id and effort when there are ones; else as written
    both = "${CLAUDE_SESSION_ID} ${CLAUDE_EFFORT}"
    assert with_values(skill, both, tmp_path, session_id="s-1", effort="max") == "s-1 max"
    assert with_values(skill, both, tmp_path) == both
