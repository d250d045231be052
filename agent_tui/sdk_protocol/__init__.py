"""Claude Code's stream-json and control protocol, for apps built on the Claude Agent SDK.

The SDKs (Python ``claude-agent-sdk``, TypeScript ``@anthropic-ai/claude-agent-sdk``) start
their CLI with ``--output-format stream-json --verbose --input-format stream-json`` and set
``CLAUDE_CODE_ENTRYPOINT`` (``sdk-py``, ``sdk-ts``). With ``cli_path`` pointing at
agent-tui, such a run speaks Claude Code's messages instead of agent-tui's own events
(:func:`wants_claude_shape`: the entrypoint, or ``--stream-shape claude-code``):

- ``wire.py``: the lines both ways and the control requests agent-tui sends (answers
  matched by ``request_id``);
- ``messages.py``: Events as Claude Code's ``system``/``init``, ``assistant``, ``user``,
  ``stream_event`` and ``result`` messages;
- ``inbound.py``: the app's user messages as Ops;
- ``callbacks.py``: the app's side of a turn: ``can_use_tool`` and ``hook_callback``;
- ``sdk_mcp.py``: the app's in-process MCP servers, reached through ``mcp_message``;
- ``controls.py``: what the app asks about the session (context usage, MCP servers,
  ``rewind_files``, ``stop_task``) and background jobs as task messages;
- ``context_usage.py``: the ``get_context_usage`` answer in Claude Code's words;
- ``run.py``: the run: ``initialize``, then messages and control requests until stdin ends.
"""

from __future__ import annotations

from collections.abc import Mapping

#: ``CLAUDE_CODE_ENTRYPOINT`` values of the Agent SDKs start with this.
SDK_ENTRYPOINT_PREFIX = "sdk-"


def wants_claude_shape(output_format: str, shape: str | None, env: Mapping[str, str]) -> bool:
    """stream-json in Claude Code's shape: asked by ``--stream-shape claude-code``, or,
    when no shape is given, by an Agent SDK's entrypoint; agent-tui's own events
    otherwise (``--verbose`` changes nothing: scripts that pass it keep our events)."""
    if output_format != "stream-json":
        return False
    if shape is not None:
        return shape == "claude-code"
    return env.get("CLAUDE_CODE_ENTRYPOINT", "").startswith(SDK_ENTRYPOINT_PREFIX)
