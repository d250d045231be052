"""When the user's status line runs (a part of ``ui/app/main.py``): once the session
exists, then whenever what it is told changes (model, cost, context, workspace), at most
every :data:`MIN_GAP_S` and never while a run is still going (the change waits for the
next tick), and every ``refreshInterval`` seconds when the setting asks. A run that fails
or is stopped leaves the last line shown (its error is said once). What it is told is Claude Code's JSON; how it runs is the command's own
(``hooks/status_line.py``, reached through the factory the entry point gives)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import agent_tui
from agent_tui.ui.render.usage import UsageTally

MIN_GAP_S = 0.3
#: The factory: the workspace -> (the command's runner or None, notes to say).
MakeStatusLine = Callable[[Path], tuple[Any, list[str]]]


class StatusHost(Protocol):
    usage: UsageTally

    @property
    def session(self) -> Any: ...
    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any: ...
    def call_next(self, callback: Callable[..., Any], *args: Any) -> Any: ...


def status_payload(session: Any, model: str, usage: UsageTally, started: float) -> dict[str, Any]:
    """Claude Code's status-line JSON, from what the screen knows."""
    workspace = str(session.workspace)
    transcript = getattr(getattr(getattr(session, "deps", None), "transcript", None), "path", None)
    total = usage.total()
    budget = getattr(getattr(session, "deps", None), "budget", None)
    api_ms = int(getattr(budget, "api_seconds", 0.0) * 1000)
    context = usage.context
    window = (context.window if context else None) or usage.window
    used = context.used if context else 0
    return {
        "hook_event_name": "Status",
        "session_id": getattr(session, "session_id", ""),
        "transcript_path": str(transcript) if transcript else "",
        "cwd": workspace,
        "model": {"id": model, "display_name": model},
        "workspace": {"current_dir": workspace, "project_dir": workspace,
                      "added_dirs": [str(d) for d in getattr(session, "added_dirs", [])]},
        "version": getattr(agent_tui, "__version__", ""),
        "output_style": {"name": "default"},
        "cost": {"total_cost_usd": round(total.cost_usd, 6),
                 "total_duration_ms": int((time.monotonic() - started) * 1000),
                 "total_api_duration_ms": api_ms, "total_lines_added": usage.lines_added,
                 "total_lines_removed": usage.lines_removed},
        "context_window": {"total_input_tokens": total.input_tokens,
                           "total_output_tokens": total.output_tokens,
                           "context_window_size": window,
                           "used_percentage": round(100 * used / window, 1) if window else None},
    }


def _changes(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload without what changes by itself (the clock)."""
    return {**payload, "cost": {k: v for k, v in payload["cost"].items() if k != "total_duration_ms"}}


class StatusRefresh:
    def __init__(self, app: StatusHost, make: MakeStatusLine | None,
                 show: Callable[[str], None], say: Callable[[str], None],
                 model: Callable[[], str], clock: Callable[[], float] = time.monotonic) -> None:
        self.app, self.make, self.show, self.say, self.model = app, make, show, say, model
        self.clock = clock
        self.started = time.monotonic()
        self.command: Any = None
        self.session: Any = None
        self.last: dict[str, Any] | None = None
        self.last_start = float("-inf")
        self._loop: asyncio.AbstractEventLoop | None = None  # the app's, where tick runs

    def tick(self) -> None:
        session = self.app.session
        if self.make is None or session is None:
            return
        if session is not self.session:  # a new session (/clear, /resume): set up afresh
            self.close()
            self.session, self.last = session, None
            self.command, notes = self.make(Path(session.workspace))
            for note in notes:
                self.say(note)
        if self.command is None or self.command.running or self.clock() - self.last_start < MIN_GAP_S:
            return
        payload = status_payload(session, self.model(), self.app.usage, self.started)
        every = getattr(self.command, "refresh_s", None)
        due = every is not None and self.clock() - self.last_start >= every
        if self.last == _changes(payload) and not due:
            return
        if self.command.request(payload, self._done):
            self.last, self.last_start = _changes(payload), self.clock()
            self._loop = _running_loop()

    def close(self) -> None:
        if self.command is not None:
            self.command.close()
            self.command = None

    def _done(self, text: str | None, error: str | None) -> None:
        """On the command's thread; the app may be gone. Handed to the app's loop with no
        coroutine made here (one a closed loop refuses would be "never awaited") and no
        wait for an answer (a loop that has stopped would never give one)."""
        loop = self._loop
        try:
            if loop is None:  # ticked outside a loop (a test's host): its own way in
                self.app.call_from_thread(self._shown, text, error)
            elif not loop.is_closed():
                loop.call_soon_threadsafe(self.app.call_next, self._shown, text, error)
        except Exception:
            pass  # the loop closed meanwhile: nobody is left to show it to

    def _shown(self, text: str | None, error: str | None) -> None:
        if text is not None:  # a failed or stopped run: the last good line stays
            self.show(text)
        if error:
            self.say(error)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
