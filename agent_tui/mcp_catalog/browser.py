"""The browser a login to an HTTP MCP server opens: the authorization URL shown, and
opened in the user's browser when there is one (the login itself is
:mod:`agent_tui.mcp.login`)."""

from __future__ import annotations

import os
import sys
import threading
import webbrowser
from collections.abc import Awaitable, Callable

#: How long a login waits for the browser to come back.
LOGIN_TIMEOUT_S = 300.0

OpenUrl = Callable[[str], Awaitable[None] | None]


def open_in_browser(show: Callable[[str], None], *, console: bool = True, why: str = "log in") -> OpenUrl:
    """Open the URL in the user's browser when there is one (on a thread of its own:
    some browsers' launchers wait until the browser ends); show it either way, for a
    browser that does not come up or one on another machine. Without ``console``
    (the TUI owns the terminal) only a graphical browser or the user's ``$BROWSER``
    is tried, never a text one. ``why`` finishes "To ..., open: URL"."""

    def open_url(url: str) -> None:
        graphical = bool(os.environ.get("BROWSER") or os.environ.get("DISPLAY")
                         or os.environ.get("WAYLAND_DISPLAY") or sys.platform in ("darwin", "win32"))
        try:
            if not console and not graphical:
                raise webbrowser.Error("no graphical browser")
            browser = webbrowser.get()
        except webbrowser.Error:
            show(f"To {why}, open: {url}")
            return
        show(f"Opening your browser to {why}; if it does not open, visit: {url}")
        threading.Thread(target=browser.open, args=(url,), name="mcp-login-browser", daemon=True).start()

    return open_url


__all__ = ["LOGIN_TIMEOUT_S", "OpenUrl", "open_in_browser"]
