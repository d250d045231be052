"""Running the TUI as the command line does: the app, the notification settings from
the environment, and the exit code (a core that did not stop in time ends the process)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agent_tui.ui.app.main import AgentApp
from agent_tui.ui.link.core_host import MakeSession, SessionDirectory
from agent_tui.ui.app.notify import NotifySettings


def run_tui(
    make_session: MakeSession,
    *,
    theme: str = "dark",
    title: str = "agent-tui",
    welcome: bool = True,
    sessions: SessionDirectory | None = None,
    workspace: Path | None = None,
) -> int:
    """Run the TUI until the user quits; returns the process exit code (``welcome``:
    the first-run hint above the transcript; a resumed session shows its own past;
    ``sessions``: where ``/resume`` finds saved sessions)."""
    notify, problem = NotifySettings.from_environ(os.environ)
    app = AgentApp(make_session, theme=theme, title=title, welcome=welcome, sessions=sessions,
                   workspace=workspace, notify=notify)
    if problem:
        app._startup_notice = app._startup_notice or problem
    code = app.run()
    if app.core_running:
        # The core did not stop in time: its thread would keep the process alive.
        sys.stderr.write("agent-tui: the agent core did not stop in time; exiting anyway\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(1)
    if app.return_code not in (None, 0):
        return app.return_code
    return code or 0
