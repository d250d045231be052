"""The hosted core as the app runs it (a part of ``ui/app/main.py``): started on a thread
worker once the first frame is drawn, switched for a saved session (``/resume``), and
stopped at quit, waiting (bounded) for it to end what runs. The session itself is
hosted by :mod:`agent_tui.ui.link.core_host`."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.worker import Worker, WorkerState

from agent_tui.ui.link.bridge import CoreEventsReady
from agent_tui.ui.link.core_host import CoreHost, CoreState, MakeSession
from agent_tui.ui.link.jobs import Jobs
from agent_tui.ui.link.status_refresh import StatusRefresh
from agent_tui.ui.render.usage import UsageTally

if TYPE_CHECKING:
    from textual.message import Message

    from agent_tui.protocol.states import PermissionMode
    from agent_tui.ui.widgets.queue_pane import QueuePane
    from agent_tui.ui.widgets.status_line import StatusLine
    from agent_tui.ui.widgets.tools_pane import ToolsPane
    from agent_tui.ui.widgets.transcript import Transcript

# Young collections between two full ones (Python's default is 10).
FULL_COLLECTION_EVERY = 100


class CoreRunHost(Protocol):
    """What running the core uses of the app: what a new session starts afresh, and
    where what the core says at its start goes."""

    host: CoreHost
    status: StatusLine
    transcript: Transcript
    tools_pane: ToolsPane
    queue_pane: QueuePane
    usage: UsageTally
    status_refresh: StatusRefresh
    jobs: Jobs
    events_handled: int
    turn_state: str
    turn_id: str | None
    last_turn_status: str | None
    session_ending: bool

    @property
    def is_running(self) -> bool: ...
    def flush(self) -> None: ...
    def show_past(self, records: list[Any]) -> None: ...
    def session_started(self, badges: list[str], mode: PermissionMode) -> None: ...
    def start_failed(self, error: str) -> None: ...
    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any: ...
    def post_message(self, message: Message) -> bool: ...
    def run_worker(self, work: Any, name: str | None = "", group: str = "default", description: str = "",
                   exit_on_error: bool = True, start: bool = True, exclusive: bool = False,
                   thread: bool = False) -> Worker[Any]: ...


class CoreRun:
    """The core's thread worker: started, switched for another session, stopped."""

    def __init__(self, app: CoreRunHost, shutdown_timeout: float) -> None:
        self.app = app
        self.worker: Worker[None] | None = None
        self._shutdown_timeout = shutdown_timeout

    def start(self) -> None:
        # What exists after the first frame (modules, classes, the widgets) lives as
        # long as the app: out of the cycle collector's way, so that a full collection
        # while the user types costs a few milliseconds, not tens.
        gc.freeze()
        # A full collection still visits everything made since (a long transcript's
        # lines, the journal): tens of milliseconds, every 10 young collections by
        # default, that is several times a second while a fast stream renders. Every
        # FULL_COLLECTION_EVERY instead; the young ones (where most cycles die) as before.
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)
        self.worker = self._run()
        # What the first frame did without (Markdown, the screens) is imported off the
        # UI's thread now, so that the first answer or prompt does not wait for it.
        threading.Thread(target=_preload, name="agent-tui-preload", daemon=True).start()

    def _run(self) -> Worker[None]:
        app = self.app

        def run() -> None:
            app.host.run(self.from_core(app.show_past), self.from_core(app.start_failed),
                         self.from_core(app.session_started))

        return app.run_worker(run, thread=True, exit_on_error=False, name="agent-core", group="core")

    def from_core(self, fn: Callable[..., None]) -> Callable[..., None]:
        """``fn`` run on the UI's thread, called from another (the core's)."""
        def call(*args: Any) -> None:
            try:
                self.app.call_from_thread(fn, *args)
            except Exception:
                pass  # the app is already closing
        return call

    def worker_state_changed(self, event: Worker.StateChanged) -> None:
        host = self.app.host
        if event.worker is not self.worker or host.state is CoreState.START_FAILED:
            return
        if event.state is WorkerState.ERROR:
            host.ended(repr(event.worker.error))
            self.app.status.set_notice("error", f"the agent core stopped: {host.error}")
        elif event.state is WorkerState.SUCCESS and host.ended(None) is CoreState.CRASHED:
            self.app.status.set_notice("error", "the agent core stopped")

    def switch(self, make: MakeSession) -> None:
        """Stop this session and open another (``/resume``): a new core host."""
        self.app.run_worker(self._switch(make), exclusive=True, group="switch")

    async def _switch(self, make: MakeSession) -> None:
        app = self.app
        app.status.set_notice("info", "closing this session…")
        await self.shutdown()
        app.flush()
        app.host = CoreHost(make, lambda: app.post_message(CoreEventsReady()))
        app.events_handled = 0
        app.turn_state, app.turn_id, app.last_turn_status = "idle", None, None
        app.usage = UsageTally()
        app.jobs = Jobs()
        app.transcript.clear()
        app.tools_pane.clear()
        app.tools_pane.flush()
        app.queue_pane.clear_all()
        app.status.reset()
        app.status.set_notice("info", "opening the saved session…")
        self.worker = self._run()

    async def shutdown(self) -> None:
        """Ask the core to stop (ending what runs) and wait for it, bounded."""
        app = self.app
        app.status_refresh.close()  # a status-line run still going is ended too
        if app.host.stop():
            try:
                app.status.set_hint("")
                app.status.set_notice("info", "shutting down: stopping what runs…")
            except Exception:
                pass  # the screen is already gone (called while unmounting)
        for _ in range(500):  # quit before the core started (after the first frame): wait for it
            if self.worker is not None or not app.is_running:
                break
            await app.host.wait_stopped(0.01)  # (its thread has not begun: a short sleep)
        if self.worker is None:
            return
        await app.host.wait_stopped(self._shutdown_timeout)
        while app.session_ending and not app.host.done:  # each bounded by its timeout
            await app.host.wait_stopped(1.0)


def _preload() -> None:
    try:
        import rich.markdown  # noqa: F401

        import agent_tui.ui.screens.background  # noqa: F401
        import agent_tui.ui.screens.help  # noqa: F401
        import agent_tui.ui.screens.permission  # noqa: F401
        import agent_tui.ui.screens.rewind  # noqa: F401
    except Exception:
        pass  # imported again where needed, and any error is reported there
