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
  written); ``file.filePath`` and ``file.content`` for ``Read``; and, for every
  tool, ours: ``content`` (the result the model got), ``is_error``, ``exit_code``;
- :func:`claude_mode`: the permission mode in Claude Code's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_tui.protocol.states import PermissionMode
from agent_tui.protocol.tool_names import claude_input, claude_name

def claude_mode(ours: str) -> str:
    """A permission mode in Claude Code's words (``auto`` asks nothing, as
    ``bypassPermissions`` does); a word that is no mode is given as it is."""
    try:
        return PermissionMode.parse(ours).claude_name
    except ValueError:
        return ours


def tool_fields(ours: str, tool_input: Mapping[str, Any], workspace: str) -> dict[str, Any]:
    return {"tool_name": claude_name(ours), "tool_input": claude_input(ours, tool_input, workspace)}


def tool_response(
    ours: str, given: Mapping[str, Any], response: Mapping[str, Any]
) -> dict[str, Any]:
    """``given``: the call's input as :func:`tool_fields` gave it; ``response``: ours
    (``content``, ``is_error``, ``exit_code``)."""
    content = response.get("content", "")
    shaped: dict[str, Any] = dict(response)
    match claude_name(ours):
        case "Bash":
            shaped.update(stdout=content, stderr="", interrupted=False, isImage=False)
        case "Write" | "Edit" | "MultiEdit":
            shaped.update(filePath=given.get("file_path", ""), success=not response.get("is_error"))
            for theirs, key in (("oldString", "old_string"), ("newString", "new_string")):
                if key in given:
                    shaped[theirs] = given[key]
            if claude_name(ours) == "Write" and "content" in given:
                shaped.update(type="create", content=given["content"])  # what was written
        case "Read":
            shaped.update(type="text", file={"filePath": given.get("file_path", ""),
                                             "content": content})
        case _:
            pass
    return shaped
