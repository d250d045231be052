"""Running the TUI as the command line does: the app, the notification settings from
the environment, and the exit code (a core that did not stop in time ends the process)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from agent_tui.ui.app.main import SHUTDOWN_TIMEOUT, AgentApp
from agent_tui.ui.app.notify import NotifySettings
from agent_tui.ui.link.core_host import MakeSession, SessionDirectory
from agent_tui.ui.link.status_refresh import MakeStatusLine
from agent_tui.ui.screens.trust import TrustQuestion


class Signals(Protocol):
    """The process's answer to SIGHUP and SIGTERM (``runtime/hangup.py``, given by the
    entry point): the TUI says how to quit gracefully and how long that may take."""

    @property
    def exit_code(self) -> int | None: ...

    def install(self, quit: Callable[[int], object], deadline_s: float) -> None: ...

    def uninstall(self) -> None: ...

    def exit_now(self) -> None: ...


def run_tui(
    make_session: MakeSession,
    *,
    theme: str = "dark",
    title: str = "agent-tui",
    welcome: bool = True,
    sessions: SessionDirectory | None = None,
    workspace: Path | None = None,
    signals: Signals | None = None,
    status_line: MakeStatusLine | None = None,
    trust: Callable[[], TrustQuestion | None] | None = None,
) -> int:
    """Run the TUI until the user quits; returns the process exit code (``welcome``:
    the first-run hint above the transcript; a resumed session shows its own past;
    ``sessions``: where ``/resume`` finds saved sessions; ``signals``: the answer
    to SIGHUP and SIGTERM, which quit as quitting does and end every process of ours at
    once past a deadline); ``trust``: the trust dialog's question, if the folder needs one)."""
    from agent_tui.log_setup import setup_logging
    from agent_tui.paths import state_home
    from agent_tui.ui.app.escape_key import lone_escape_at_once

    lone_escape_at_once(os.environ)
    setup_logging(state_home() / "agent-tui.log")  # stderr would land on the screen

    notify, problem = NotifySettings.from_environ(os.environ)
    app = AgentApp(make_session, theme=theme, title=title, welcome=welcome, sessions=sessions,
                   workspace=workspace, notify=notify, status_line=status_line,
                   trust=trust)
    if problem:
        app._startup_notice = app._startup_notice or problem

    async def quit_after_signal(signum: int) -> None:
        if signum != signal.SIGHUP:
            await app.action_quit()  # the terminal is still there: leave it as quitting does
            return
        await app.core_run.shutdown()  # the core ends what runs and records how it ended
        if signals is not None:
            signals.exit_now()  # the terminal is gone: nothing to restore, nobody to tell

    if signals is not None:
        signals.install(lambda signum: app.run_worker(quit_after_signal(signum), exclusive=False),
                        deadline_s=SHUTDOWN_TIMEOUT + 5.0)
    try:
        code = app.run()
    finally:
        if signals is not None:
            signals.uninstall()
    if app.core_running:
        # The core did not stop in time: its thread would keep the process alive.
        sys.stderr.write("agent-tui: the agent core did not stop in time; exiting anyway\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(1)
    if signals is not None and signals.exit_code is not None:
        return signals.exit_code
    if app.return_code not in (None, 0):
        return app.return_code
    return code or 0
