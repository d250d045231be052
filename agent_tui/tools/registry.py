"""The default tool set a session offers: file tools, searches, `bash`, job tools,
`task`, the plan, `web_fetch`, `web_search` (when settings enable it) and `skill`.

The CLI calls :func:`default_tools` once per session and hands the :class:`ToolSet` to
the core. The tools and their order come from the catalog's rows (``tools/catalog.py``;
the order is the one the model sees them in, and the prompt cache keys on it):
read_file, write_file, edit_file, glob, grep, bash, bash_output, kill_shell, task,
todo_write, web_fetch, web_search (only with settings ``webSearch.enabled``),
exit_plan_mode, skill (only when there are skills); MCP tools come after. The file
tools take their workspace from each call's ``ToolContext``; the workspace given here
is checked up front so a bad ``--cwd`` fails at startup, not at the first tool call.
"""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

from agent_tui.core.calls.tool import ToolSet
from agent_tui.tools.catalog import BUILT_IN, Offer

if TYPE_CHECKING:
    from agent_tui.core.calls.agent_types import AgentTypes
    from agent_tui.tools.background import BackgroundJobs
    from agent_tui.tools.files import OnAfterWrite, OnBeforeWrite
    from agent_tui.tools.skills import Skills


def default_tools(
    workspace: str | os.PathLike[str],
    *,
    jobs: BackgroundJobs | None = None,
    on_before_write: OnBeforeWrite | None = None,
    on_after_write: OnAfterWrite | None = None,
    allow_private_fetch: bool = False,
    web_search: bool = False,
    skills: Skills | None = None,
    agent_types: AgentTypes | None = None,
) -> ToolSet:
    """The tools above (the job tools only when ``jobs`` is given).

    ``on_before_write(path, old_bytes_or_None)`` is the checkpoint layer's pre-image
    hook, called right before each file write; ``on_after_write(path, new_bytes)``
    notes what was written (so a rewind can tell when someone changed it since).
    ``allow_private_fetch`` lets web_fetch open loopback and private addresses
    (settings ``webFetch.allowPrivate``); ``web_search`` offers the web_search tool
    (settings ``webSearch.enabled``, off by default: each search is billed).
    ``skills`` are offered through the ``skill`` tool, and read_file may read inside
    their folders; ``agent_types`` are the sub-agent types ``task`` offers.
    """
    if not os.path.isdir(workspace):
        raise NotADirectoryError(
            errno.ENOTDIR, "workspace is not a directory", os.fspath(workspace)
        )
    offer = Offer(jobs=jobs, on_before_write=on_before_write, on_after_write=on_after_write,
                  allow_private_fetch=allow_private_fetch, web_search=web_search,
                  skills=skills, agent_types=agent_types)
    return ToolSet(tool for _cls, make in BUILT_IN if (tool := make(offer)) is not None)
