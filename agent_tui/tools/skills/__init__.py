"""Skills in Claude Code's shape: :mod:`.catalog` finds the ``SKILL.md`` folders once per
session, :mod:`.tool` is the ``skill`` tool that loads one when the model uses it."""

from agent_tui.tools.skills.catalog import Skill, Skills, load_skills
from agent_tui.tools.skills.tool import SkillTool

__all__ = ["Skill", "SkillTool", "Skills", "load_skills"]
