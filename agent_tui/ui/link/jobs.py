"""The background jobs the UI has been told of (``background_job`` events), kept by the
app for the status line and the jobs screen (:mod:`agent_tui.ui.screens.background`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agent_tui.protocol.states import BackgroundState

if TYPE_CHECKING:
    from agent_tui.protocol import BackgroundJobChanged


@dataclass
class Jobs:
    """Every background job seen in this session, in the order they started."""

    jobs: dict[str, BackgroundJobChanged] = field(default_factory=dict)
    stopping: set[str] = field(default_factory=set)  # asked to stop, not ended yet

    def update(self, event: BackgroundJobChanged) -> None:
        self.jobs[event.id] = event
        if event.state is not BackgroundState.RUNNING:
            self.stopping.discard(event.id)

    @property
    def running(self) -> int:
        return sum(1 for job in self.jobs.values() if job.state is BackgroundState.RUNNING)

    def state_of(self, job: BackgroundJobChanged) -> str:
        if job.state is BackgroundState.RUNNING and job.id in self.stopping:
            return "stopping"
        return job.state
