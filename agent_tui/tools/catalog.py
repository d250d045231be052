"""The built-in tools' classes, one row each, registered on import: what each says of
itself (its Claude Code name, its input keys) is then known to every layer that reads
a tool by name (``protocol/tool_names.py``). The entry point loads it with
:func:`agent_tui.tools.load_catalog` at the first question."""

from __future__ import annotations

from agent_tui.core.calls.tool import AnyTool, register_tool
from agent_tui.protocol import tool_names
from agent_tui.tools.background import BashOutputTool, KillShellTool
from agent_tui.tools.bash import BashTool
from agent_tui.tools.files import EditFileTool, ReadFileTool, WriteFileTool
from agent_tui.tools.plan_mode import ExitPlanModeTool
from agent_tui.tools.search.tools import GlobTool, GrepTool
from agent_tui.tools.skills import SkillTool
from agent_tui.tools.task import TaskTool
from agent_tui.tools.todo import TodoWriteTool
from agent_tui.tools.web.search import WebSearchTool
from agent_tui.tools.web.tool import WebFetchTool

BUILT_IN: tuple[type[AnyTool], ...] = (
    ReadFileTool,
    WriteFileTool,
    EditFileTool,
    GlobTool,
    GrepTool,
    BashTool,
    BashOutputTool,
    KillShellTool,
    TaskTool,
    TodoWriteTool,
    WebFetchTool,
    WebSearchTool,
    ExitPlanModeTool,
    SkillTool,
)

for _tool in BUILT_IN:
    register_tool(_tool)
tool_names.loaded()
