"""What the user's enabled plugins bring to a session that the wiring adds itself:
their skills (``PLUGIN:SKILL``) and sub-agent types (``PLUGIN:AGENT``), and the
notices (a plugin that did not load, what a project's settings suggest). Their
commands, hooks and MCP servers are found by those loaders (``plugins/loaded.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_tui.frontmatter import FileProblem, load_definitions


def add_plugin_definitions(skills: Any, agent_types: Any, workspace: Path) -> list[str]:
    """Adds the plugins' skills and sub-agent types (after the user's and the project's:
    a name is namespaced, so none hides another); returns every problem to say."""
    from agent_tui.core.calls.agent_types import AgentScope, _agent_files, parse_agent_file
    from agent_tui.plugins import enabled_plugins
    from agent_tui.plugins.offered import offered
    from agent_tui.tools.skills.catalog import MAX_SKILLS, SkillScope, _skill_files, parse_skill

    found = enabled_plugins()
    problems: list[str] = [*found.problems, *offered(workspace)]
    if not found.plugins:
        return problems
    from agent_tui.plugins.option_use import in_text, skill_values  # with the first plugin

    for owner in found.plugins:
        for folder in owner.skills:
            more, issues = load_definitions(
                [(SkillScope.PLUGIN, folder)], _skill_files,
                lambda path, scope: parse_skill(path.parent.absolute(), scope),
                lambda skill: skill.name, "skill", cap=MAX_SKILLS, workspace=workspace, home=None)
            values = skill_values(owner)  # its folder and plain option values, put in when used
            skills.skills.extend(s.model_copy(update={"values": values})
                                 for s in _named(more, owner.name))
            problems += _said(issues)
    for owner in found.plugins:
        for folder in owner.agents:
            types, issues = load_definitions(
                [(AgentScope.PLUGIN, folder)], _agent_files, parse_agent_file,
                lambda agent: agent.name, "sub-agent", cap=200, workspace=workspace, home=None)
            agent_types.types.extend(  # its prompt with the plugin's folders and plain values
                t.model_copy(update={"system": in_text(owner, t.system, workspace)})
                for t in _named(types, owner.name))
            problems += _said(issues)
    return problems


def _named(items: list[Any], plugin: str) -> list[Any]:
    return [i.model_copy(update={"name": f"{plugin}:{i.name}"}) for i in items]


def _said(issues: list[FileProblem]) -> list[str]:
    return [str(issue) for issue in issues]
