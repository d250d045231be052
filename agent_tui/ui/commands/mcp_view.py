"""``/mcp``: the session's MCP servers, each with its state, and what can be done
with it: log in (an HTTP server that uses OAuth), reconnect, disable or enable, and
the details page (tools, resources, prompts, errors, log).

The choice is an id ``ACTION:SERVER``; :func:`action_of` reads it back. Running
one is the app's (``ui/app/mcp_requests.py``): the manager does it on the core's loop.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from rich.text import Text

from agent_tui.ui.render.safe_text import clean, first_line
from agent_tui.ui.screens.picker import PickItem

DETAILS = "details"
NAME_WIDTH = 16
STATE_WIDTH = 40
STATE_STYLE = {"ready": "green", "needs_login": "yellow", "failed": "red", "disabled": "dim",
               "starting": "cyan"}


class McpAction(StrEnum):
    LOGIN = "login"
    RECONNECT = "reconnect"
    DISABLE = "disable"
    ENABLE = "enable"


ACTION_WORDS = {
    McpAction.LOGIN: "log in",
    McpAction.RECONNECT: "reconnect",
    McpAction.DISABLE: "disable",
    McpAction.ENABLE: "enable",
}


def actions_for(status: Any, uses_oauth: bool) -> list[McpAction]:
    state = str(status.state)
    if state == "disabled":
        return [McpAction.ENABLE]
    found = [McpAction.LOGIN] if uses_oauth else []
    return [*found, McpAction.RECONNECT, McpAction.DISABLE]


def _what(status: Any) -> str:
    state = str(status.state)
    if state != "ready":
        return state.replace("_", " ")
    counts = [(len(status.tools), "tool"), (getattr(status, "resources", 0), "resource"),
              (getattr(status, "prompts", 0), "prompt")]
    parts = [f"{n} {word}{'' if n == 1 else 's'}" for k, (n, word) in enumerate(counts) if n or k == 0]
    return "ready, " + ", ".join(parts)


def mcp_items(statuses: list[Any], oauth: dict[str, bool]) -> list[PickItem]:
    """One item per server and action, then the details page."""
    items = []
    for status in statuses:
        for action in actions_for(status, oauth.get(status.name, False)):
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{clean(status.name):<{NAME_WIDTH}} ", style="bold")
            line.append(f"{_what(status):<{STATE_WIDTH}} ", style=STATE_STYLE.get(str(status.state), ""))
            line.append(ACTION_WORDS[action])
            items.append(PickItem(f"{action}:{status.name}", line,
                                  search=f"{status.name} {status.state} {ACTION_WORDS[action]}"))
    details = Text("details: every server's tools, resources, prompts, errors and log", style="dim")
    items.append(PickItem(DETAILS, details))
    return items


def intro(statuses: list[Any]) -> str:
    if not statuses:
        return ("No MCP servers are configured (see docs/mcp.md: ~/.claude.json, "
                "~/.config/agent-tui/mcp.json or the project's .mcp.json).")
    errors = [f"{s.name}: {first_line(s.error, 90)}" for s in statuses if s.error and str(s.state) == "failed"]
    text = ("The session's MCP servers. Choose what to do with one: log in (OAuth, in your "
            "browser), reconnect, disable (not started again in this project until enabled).")
    return text + ("\n" + "\n".join(errors) if errors else "")


def action_of(choice: str) -> tuple[McpAction, str] | None:
    action, sep, name = choice.partition(":")
    if not sep:
        return None
    return McpAction(action), name


__all__ = ["DETAILS", "McpAction", "action_of", "actions_for", "intro", "mcp_items"]
