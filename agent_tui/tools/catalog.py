"""The built-in tools, one row each: the tool's class and how a session makes it.

A row is all a new tool needs beside its own module. On import the catalog registers
what each class says of itself (its Claude Code name, its input keys, how the front ends
show it), so every layer that reads a tool by name knows it (``protocol/tool_names.py``;
the entry point loads the catalog at the first such question, through
:func:`agent_tui.tools.load_catalog`), and ``tools/registry.py`` offers a session the
tools in the rows' order, the order the model sees them in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_tui.core.calls.tool import AnyTool, register_tool
from agent_tui.protocol import tool_names
from agent_tui.tools.background import BackgroundJobs, BashOutputTool, KillShellTool
from agent_tui.tools.bash import BashTool
from agent_tui.tools.files import (
    EditFileTool,
    OnAfterWrite,
    OnBeforeWrite,
    ReadFileTool,
    WriteFileTool,
)
from agent_tui.tools.plan_mode import ExitPlanModeTool
from agent_tui.tools.search.tools import GlobTool, GrepTool
from agent_tui.tools.skills import Skills, SkillTool
from agent_tui.tools.task import TaskTool
from agent_tui.tools.todo import TodoWriteTool
from agent_tui.tools.web.search import WebSearchTool
from agent_tui.tools.web.tool import WebFetchTool

if TYPE_CHECKING:
    from agent_tui.core.calls.agent_types import AgentTypes


@dataclass(frozen=True)
class Offer:
    """What a session gives the tools it offers (``registry.default_tools`` says each)."""

    jobs: BackgroundJobs | None = None
    on_before_write: OnBeforeWrite | None = None
    on_after_write: OnAfterWrite | None = None
    allow_private_fetch: bool = False
    web_search: bool = False
    skills: Skills | None = None
    agent_types: AgentTypes | None = None


#: (the tool's class, the tool a session is offered, None: not this session).
Row = tuple[type[AnyTool], Callable[[Offer], AnyTool | None]]

BUILT_IN: tuple[Row, ...] = (
    (ReadFileTool, lambda o: ReadFileTool(read_roots=o.skills.folders() if o.skills else ())),
    (WriteFileTool, lambda o: WriteFileTool(o.on_before_write, o.on_after_write)),
    (EditFileTool, lambda o: EditFileTool(o.on_before_write, o.on_after_write)),
    (GlobTool, lambda o: GlobTool()),
    (GrepTool, lambda o: GrepTool()),
    (BashTool, lambda o: BashTool(jobs=o.jobs)),
    (BashOutputTool, lambda o: BashOutputTool(o.jobs) if o.jobs is not None else None),
    (KillShellTool, lambda o: KillShellTool(o.jobs) if o.jobs is not None else None),
    (TaskTool, lambda o: TaskTool(o.agent_types)),
    (TodoWriteTool, lambda o: TodoWriteTool()),
    (WebFetchTool, lambda o: WebFetchTool(allow_private=o.allow_private_fetch)),
    (WebSearchTool, lambda o: WebSearchTool() if o.web_search else None),
    (ExitPlanModeTool, lambda o: ExitPlanModeTool()),
    (SkillTool, lambda o: SkillTool(o.skills) if o.skills is not None and o.skills.skills else None),
)

for _tool, _make in BUILT_IN:
    register_tool(_tool)
tool_names.loaded()
