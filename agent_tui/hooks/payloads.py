"""What a hook reads on stdin, in the shapes Claude Code sends, built from ours.

A hook written for Claude Code compares ``tool_name`` with ``"Bash"`` and reads
``tool_input.file_path``; agent-tui's tools are ``bash`` and ``read_file`` and take
``path``. The names and input keys go through the one table between the two
(:mod:`agent_tui.protocol.tool_names`); this module adds what only hooks see:

- :func:`tool_fields`: ``tool_name`` and ``tool_input`` of a call (``file_path``
  absolute, ``timeout`` for ``timeout_ms``; the other keys as the model sent them);
- :func:`tool_response`: ``PostToolUse``'s ``tool_response``, with the keys Claude
  Code's tools answer with where hooks read them: ``stdout``, ``stderr`` and
  ``interrupted`` for ``Bash``; ``filePath`` and ``success`` for ``Write`` and
  ``Edit`` (with ``oldString``/``newString``, and ``Write``'s ``content``: what was
  written); for ``Read``, ``file`` with ``filePath``, ``content`` (the lines read, as
  in the file: no line numbers, no note of ours; each line ends with a newline),
  ``numLines``, ``startLine`` and ``totalLines`` (when the whole rest was read); and,
  for every tool, ours: ``content`` (the result the model got), ``is_error``,
  ``exit_code``. An MCP tool's response is what Claude Code sends, a list of content
  blocks (``[{"type": "text", "text": ...}]``, images after);
- :func:`failure_error`: ``PostToolUseFailure``'s ``error`` (``Exit code N`` and the
  output for a command, as Claude Code words it);
- :func:`claude_mode`: the permission mode in Claude Code's words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, assert_never

from agent_tui.protocol.states import PermissionMode
from agent_tui.protocol.tool_names import (
    FileChange,
    HookResponse,
    claude_input,
    claude_name,
    facts_of,
    is_mcp,
)

def claude_mode(ours: str) -> str:
    """A permission mode in Claude Code's words (``auto`` asks nothing, as
    ``bypassPermissions`` does); a word that is no mode is given as it is."""
    try:
        return PermissionMode.parse(ours).claude_name
    except ValueError:
        return ours


def tool_fields(ours: str, tool_input: Mapping[str, Any], workspace: str) -> dict[str, Any]:
    return {"tool_name": claude_name(ours), "tool_input": claude_input(ours, tool_input, workspace)}


_NUMBERED = re.compile(r"^ *\d+\t(.*)$")


def _file_text(content: str) -> tuple[str, int]:
    """The lines of a read, as in the file (line numbers and our notes left out)."""
    lines = [m.group(1) for m in map(_NUMBERED.match, content.split("\n")) if m]
    return "".join(f"{line}\n" for line in lines), len(lines)


def tool_response(
    ours: str, given: Mapping[str, Any], response: Mapping[str, Any]
) -> dict[str, Any] | list[dict[str, Any]]:
    """``given``: the call's input as :func:`tool_fields` gave it; ``response``: ours
    (``content``, ``is_error``, ``exit_code``; ``details`` and ``blocks`` as the tool
    gave them, not passed on)."""
    content = response.get("content", "")
    details = response.get("details") or {}
    if is_mcp(ours):
        return [{"type": "text", "text": content}, *(response.get("blocks") or [])]
    shaped: dict[str, Any] = {k: v for k, v in response.items() if k not in ("details", "blocks")}
    told = facts_of(ours)  # the shape is the tool's own fact (``Tool.hook_response``)
    match told.hook_response:
        case HookResponse.COMMAND:
            shaped.update(stdout=content, stderr="", interrupted=False, isImage=False)
        case HookResponse.FILE_EDIT:
            shaped.update(filePath=given.get("file_path", ""), success=not response.get("is_error"))
            for theirs, key in (("oldString", "old_string"), ("newString", "new_string")):
                if key in given:
                    shaped[theirs] = given[key]
            if told.file_change is FileChange.WRITE and "content" in given:
                shaped.update(type="create", content=given["content"])  # what was written
        case HookResponse.FILE_READ:
            text, count = _file_text(content)
            file: dict[str, Any] = {"filePath": given.get("file_path", ""), "content": text,
                                    "numLines": count, "startLine": details.get("first_line", 1)}
            if details.get("complete") and isinstance(details.get("last_line"), int):
                file["totalLines"] = details["last_line"]
            shaped.update(type="text", file=file)
        case HookResponse.PLAIN:
            pass
        case _ as unreachable:
            assert_never(unreachable)
    return shaped


def failure_error(response: Mapping[str, Any]) -> str:
    """``PostToolUseFailure``'s ``error``: ``Exit code N`` then the output for a
    command that failed (as Claude Code words it), else what the model was told."""
    content = str(response.get("content", ""))
    code = response.get("exit_code")
    if isinstance(code, int) and code != 0:
        return f"Exit code {code}" + (f"\n{content}" if content.strip() else "")
    return content
