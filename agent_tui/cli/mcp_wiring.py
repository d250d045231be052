"""The session's MCP servers as the wiring opens them: the config files (the project's
only when trusted or approved by the user), what the user is told of each server, and
the reload between turns."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_tui.protocol import Event
    from agent_tui.settings.claude_json import ProjectApproval


def open_mcp(
    workspace: Path, emit: Callable[[Event], None], state: Path, *, trusted: bool,
    extra: list[Any], approved: ProjectApproval | None = None,
) -> tuple[Any, Any]:
    """MCP servers from the user's config (agent-tui's ``mcp.json``, Claude Code's
    ``~/.claude.json``), and the project's ``.mcp.json`` only when the project is
    trusted to run commands (auto mode, which only the user can choose) or the user
    approved them (``approved``: their settings' answer, joined with the one
    ``~/.claude.json`` records): a cloned repository must not start programs just by
    being opened.
    ``extra`` servers come from the user's client (ACP) and always start. ``state``: the
    state folder (logs, logins, the servers the user disabled). Returns the manager and
    what reads its config files again."""
    from agent_tui.protocol import Notice, NoticeCode, NoticeLevel
    from agent_tui.mcp import ServerState, ServerStatus, load_mcp
    from agent_tui.mcp.disabled import FILE as DISABLED_FILE, DisabledServers

    mcp = load_mcp(workspace, include_project=trusted, extra=extra, approved=approved,
                   log_dir=state / "mcp-logs",
                   auth_dir=state / "mcp-auth",
                   disabled=DisabledServers(state / DISABLED_FILE, workspace))
    for problem in mcp.problems:
        emit(Notice(level=NoticeLevel.WARNING, text=f"MCP config: {problem}"))
    if not trusted:
        listed = load_mcp(workspace, include_project=True, approved=approved)
        skipped = sorted({s.name for s in listed.status()} - {s.name for s in mcp.status()})
        if skipped:
            emit(Notice(level=NoticeLevel.WARNING, text=(
                f"{workspace / '.mcp.json'} lists MCP servers {', '.join(skipped)}: not "
                "started, since that would run the project's commands. Trust this folder "
                "(--trust) and use --permission-mode auto, approve them in your user "
                "settings (enabledMcpjsonServers in ~/.claude/settings.json), or add them "
                "to your user MCP config.")))

    def on_status(status: ServerStatus) -> None:
        state = status.state
        if state is ServerState.FAILED:
            emit(Notice(level=NoticeLevel.ERROR,
                        text=f"MCP server {status.name} failed: {status.error}"))
        elif state is ServerState.NEEDS_LOGIN:
            emit(Notice(level=NoticeLevel.WARNING,
                        text=f"MCP server {status.name} {status.error}"))
        elif state in (ServerState.STARTING, ServerState.READY):
            tools = f" ({len(status.tools)} tools)" if state is ServerState.READY else ""
            emit(Notice(level=NoticeLevel.INFO,
                        text=f"MCP server {status.name}: {state}{tools}"))
        if state is ServerState.READY and status.left_out:
            listing = "; ".join(f"{name} ({why})" for name, why in status.left_out.items())
            emit(Notice(level=NoticeLevel.WARNING,
                        text=f"MCP server {status.name}: not offered to the model: {listing}"))

    def on_tools_changed(change: Any) -> None:
        emit(Notice(level=NoticeLevel.INFO, code=NoticeCode.TOOLS_CHANGED, text=(
            f"MCP server {change.server} changed its tools ({change.describe()}): the "
            "model sees the new list from the next request on, so the prompt cache is "
            "rebuilt once (that request costs more)")))

    mcp.on_status(on_status)
    mcp.on_tools_changed(on_tools_changed)
    mcp.set_elicitor(_declined(emit))  # the TUI and an ACP client ask the user instead
    return mcp, _reload(mcp, workspace, emit, trusted=trusted, extra=extra, approved=approved)


def _declined(emit: Callable[[Event], None]) -> Any:
    """Print mode's answer to a server's question: no, said where the user reads."""
    from agent_tui.mcp_catalog.elicitation import ElicitAction, ElicitAnswer, Elicitation
    from agent_tui.protocol import Notice, NoticeLevel

    async def decline(request: Elicitation) -> ElicitAnswer:
        emit(Notice(level=NoticeLevel.WARNING, text=(
            f"MCP server {request.server} asked for input ({request.message[:200]!r}): declined, "
            "since nobody can answer here (print mode asks nothing; the TUI and ACP clients do)")))
        return ElicitAnswer(action=ElicitAction.DECLINE)

    return decline


def _reload(mcp: Any, workspace: Path, emit: Callable[[Event], None], *,
            trusted: bool, extra: list[Any], approved: ProjectApproval | None) -> Any:
    """The config files read again when they change (between turns), as loaded at
    the start: the project's servers only when trusted or approved. Of
    ``~/.claude.json`` only the parts read count as a change."""
    from agent_tui.paths import claude_state_file
    from agent_tui.protocol import Notice, NoticeLevel
    from agent_tui.settings.claude_json import parts_digest
    from agent_tui.settings.mcp_servers import PROJECT_FILE, USER_FILE, load_config, user_config_dir
    from agent_tui.runtime.file_watch import content_digest
    from agent_tui.mcp.reload import McpReload

    claude_json = claude_state_file()
    files = [claude_json, user_config_dir() / USER_FILE, workspace / PROJECT_FILE]

    def digest(path: Path) -> str:
        return parts_digest(path, workspace) if path == claude_json else content_digest(path)

    return McpReload(
        mcp, lambda: load_config(workspace, include_project=trusted, approved=approved,
                                 claude_json=claude_json), files,
        lambda level, text: emit(Notice(level=NoticeLevel(level), text=text)),
        fixed=frozenset(s.name for s in extra), digest=digest,
        held_file=workspace / PROJECT_FILE)
