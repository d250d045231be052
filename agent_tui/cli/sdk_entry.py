"""A print-mode run in Claude Code's shape (``sdk_protocol``): the Agent SDK's way in.

Picks the shape (``sdk_protocol.wants_claude_shape``), reads ``--mcp-config`` (files or
JSON; each server joins the configured ones and always starts) and Claude Code's
``MAX_THINKING_TOKENS`` (the app's ``env``: a thinking budget, 0 for none, when no flag
says one) and ``ANTHROPIC_MODEL`` (the model, when ``--model`` is not given), and builds
the session
with a policy that asks when the app answers permission questions
(``--permission-prompt-tool stdio``), else refuses what would ask, as print mode does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agent_tui.cli.options import Options, UsageError
from agent_tui.cli.wiring import Wiring


def claude_shaped(opts: Options) -> bool:
    """Whether this print-mode run speaks Claude Code's protocol; the flags that only
    mean something there are refused elsewhere, never ignored."""
    from agent_tui.sdk_protocol import wants_claude_shape

    if wants_claude_shape(opts.output_format, opts.stream_shape, os.environ):
        if opts.permission_word == "auto":  # Claude Code's auto is a classifier, ours is not
            raise UsageError("--permission-mode auto: in Claude Code's protocol that is its "
                             "classifier mode, which agent-tui does not have (bypassPermissions "
                             "is agent-tui's auto; default asks the app)")
        _env_thinking(opts)
        if opts.model is None and (model := os.environ.get("ANTHROPIC_MODEL", "").strip()):
            opts.model = model  # Claude Code's: the app's env names the model, below --model
        return True
    for flag, given in (("--include-partial-messages", opts.include_partial_messages),
                        ("--replay-user-messages", opts.replay_user_messages),
                        ("--permission-prompt-tool", opts.permission_prompt_tool),
                        ("--mcp-config", opts.mcp_config)):
        if given:
            raise UsageError(f"{flag} goes with Claude Code's stream-json (--output-format "
                             "stream-json --stream-shape claude-code, as the Agent SDK runs it)")
    return False


def _env_thinking(opts: Options) -> None:
    """``MAX_THINKING_TOKENS``, as Claude Code reads it, when no flag set the thinking."""
    given = os.environ.get("MAX_THINKING_TOKENS", "").strip()
    if not given or opts.thinking is not None:
        return
    from agent_tui.core.usage.thinking import ThinkingError, parse_thinking

    value = "off" if given == "0" else given
    try:
        parse_thinking(value)
    except ThinkingError as exc:
        raise UsageError(f"MAX_THINKING_TOKENS={given}: {exc}") from None
    opts.thinking = value


def mcp_servers(opts: Options) -> list[Any]:
    """``--mcp-config``'s servers; a problem in one is a usage error (the app asked for it)."""
    from agent_tui.settings.mcp_servers import servers_of

    servers: list[Any] = []
    for given in opts.mcp_config:
        source, text = _config_text(given)
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"--mcp-config {source}: not valid JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
            raise UsageError(f"--mcp-config {source}: expected {{\"mcpServers\": {{...}}}}")
        found, problems = servers_of(Path(source), data["mcpServers"], os.environ)
        if problems:
            raise UsageError(f"--mcp-config {source}: " + "; ".join(
                f"{p.server or ''}: {p.message}" for p in problems))
        servers.extend(found)
    return servers


def _config_text(given: str) -> tuple[str, str]:
    if given.lstrip().startswith("{"):
        return "<--mcp-config JSON>", given
    try:
        return given, Path(given).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--mcp-config {given}: {exc}") from None


def run_claude_shaped(opts: Options) -> int:
    import asyncio

    from agent_tui.runtime.process import kill_all_runs
    from agent_tui.sdk_protocol.run import run_sdk
    from agent_tui.sdk_protocol.wire import Wire

    servers = mcp_servers(opts)
    wiring = Wiring(opts, interactive=opts.permission_prompt_tool == "stdio")
    wiring.containment_for(opts.cwd)  # a sandbox that cannot run stops us here

    def make_session(emit: Any, wire: Wire) -> Any:
        from agent_tui.sdk_protocol.sdk_mcp import bridge_servers

        bridge_servers(servers, wire)
        return wiring.open_session(emit, session_id=wiring.chosen_id, fork=opts.fork_session,
                                   mcp_servers=servers)[1]

    return asyncio.run(run_sdk(
        make_session, prompt=opts.prompt, input_format=opts.input_format,
        partial=opts.include_partial_messages, replay=opts.replay_user_messages, ask_app=opts.permission_prompt_tool == "stdio",
        on_hard_exit=kill_all_runs,
    ))
