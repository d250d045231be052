"""Running one MCP tool hook (Claude Code's ``"type": "mcp_tool"``): a tool of a
configured MCP server is called with the hook's ``input``, and its answer is read as a
command hook's stdout.

``input``'s string values may name parts of the hook's input JSON, as Claude Code's do:
``"${tool_input.file_path}"`` becomes that value (a missing part is empty). The call goes
through the session's MCP tool (``mcp/tool.py``: its timeout, its cancel), under the
hook's own timeout. A text answer is the hook's output (``{"decision": "block", ...}``
and the rest, as for a command); an error answer, a server that is not connected or a
tool it does not have is a failed hook (a gate's ``onFailure`` decides, as for a
command that cannot start). A project's settings file may not call the user's MCP
servers: such a hook is refused where the hooks are read (``config.py``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_tui.cancel import CancelScope
from agent_tui.core.calls.tool import AnyTool, InvalidInput, ToolContext
from agent_tui.hooks.runner import CommandRun
from agent_tui.protocol.states import HookEnding, ToolState

_NAMED = re.compile(r"\$\{([A-Za-z0-9_.]+)\}")


def interpolate(value: Any, given: Any) -> Any:
    """``value`` with each ``${a.b}`` in its strings replaced by that part of ``given``."""
    if isinstance(value, str):
        return _NAMED.sub(lambda m: _part(given, m.group(1)), value)
    if isinstance(value, list):
        return [interpolate(v, given) for v in value]
    if isinstance(value, dict):
        return {k: interpolate(v, given) for k, v in value.items()}
    return value


def _part(given: Any, path: str) -> str:
    for key in path.split("."):
        given = given.get(key) if isinstance(given, dict) else None
    if given is None:
        return ""
    return given if isinstance(given, str) else json.dumps(given)


async def call_tool(tools: Sequence[AnyTool], server: str, tool: str, arguments: dict[str, Any],
                    given: Any, *, workspace: Path, timeout_s: float,
                    scope: CancelScope) -> CommandRun:
    """Call ``server``'s ``tool``; always returns (a failure is a failed hook)."""
    started = time.monotonic()
    found = next((t for t in tools if getattr(t, "server", None) == server
                  and getattr(t, "remote_name", None) == tool), None)
    if found is None:
        return CommandRun(ending=HookEnding.NOT_STARTED, error=(
            f"MCP server {server!r} is not connected or has no tool {tool!r}"))
    try:
        args = found.parse(interpolate(arguments, given))
    except InvalidInput as exc:
        return CommandRun(ending=HookEnding.NOT_STARTED, error=str(exc))
    own = scope.child("mcp tool hook")  # its timeout must not cancel what it gates
    own.cancel_after(timeout_s)
    try:
        result = await found.run(args, ToolContext(scope=own, workspace=workspace,
                                                   tool_use_id="hook", operation_id="hook"))
    finally:
        own.detach()
    took = round(time.monotonic() - started, 3)
    if result.outcome is ToolState.SUCCEEDED and not result.is_error:
        return CommandRun(ending=HookEnding.EXITED, exit_code=0, stdout=result.content,
                          duration_s=took)
    if own.cancelled and not scope.cancelled:
        return CommandRun(ending=HookEnding.TIMED_OUT, duration_s=took)
    if scope.cancelled:
        return CommandRun(ending=HookEnding.CANCELLED, duration_s=took)
    return CommandRun(ending=HookEnding.EXITED, exit_code=0, duration_s=took,
                      failure=f"the MCP tool answered with an error: {result.content[:500]}")
