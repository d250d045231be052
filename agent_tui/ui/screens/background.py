"""The background jobs list (Ctrl+B): commands and sub-agents that keep running after
their turn (Esc does not stop them). ``k`` asks the core to stop the selected one
(``StopBackground``); the row says "stopping…" until the core reports how it ended.
The app keeps the jobs (from ``background_job`` events) and refreshes this screen."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_tui.protocol import BackgroundJobChanged, Op, StopBackground
from agent_tui.ui.link.jobs import Jobs
from agent_tui.ui.render.safe_text import clean, first_line
from agent_tui.ui.render.states import Look, role_style

JOB_LOOKS: dict[str, Look] = {
    "running": Look("▶", "running", "primary"),
    "stopping": Look("◼", "stopping…", "warning"),
    "exited": Look("✓", "exited", "success"),
    "completed": Look("✓", "completed", "success"),
    "killed": Look("■", "killed", "warning"),
    "cancelled": Look("■", "cancelled", "warning"),
    "failed": Look("✗", "failed", "error"),
}


def job_look(state: str) -> Look:
    return JOB_LOOKS.get(state) or Look("·", clean(state), "text")


class BackgroundScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    BackgroundScreen { align: center middle; }
    BackgroundScreen > #dialog {
        width: 96%;
        max-width: 120;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    BackgroundScreen #jobs { height: auto; max-height: 20; margin: 1 0 0 0; }
    BackgroundScreen #keys { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS = [
        Binding("k", "stop", "stop job", show=False),
        Binding("escape,q,ctrl+b", "close", "close", show=False),
    ]

    def __init__(self, jobs: Jobs, submit: Callable[[Op], None]) -> None:
        super().__init__()
        self.jobs = jobs
        self._submit = submit

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(
                Text("Commands and sub-agents that keep running in the background: "
                     "Esc does not stop them, k does."),
                id="intro",
            )
            yield OptionList(id="jobs")
            yield Static(Text("↑↓ choose   k stop the selected job   esc close"), id="keys")

    def on_mount(self) -> None:
        self.query_one("#dialog").border_title = "background jobs"
        self.refresh_jobs()
        self.query_one("#jobs", OptionList).focus()

    def refresh_jobs(self) -> None:
        listing = self.query_one("#jobs", OptionList)
        keep = listing.highlighted
        if not self.jobs.jobs:
            listing.set_options([Option(Text("no background jobs in this session"), disabled=True)])
        else:
            listing.set_options([self._option(job) for job in reversed(self.jobs.jobs.values())])
            listing.highlighted = min(keep or 0, len(self.jobs.jobs) - 1)
        running = self.jobs.running
        self.query_one("#dialog").border_title = (
            f"background jobs: {running} running" if running else "background jobs"
        )

    def _option(self, job: BackgroundJobChanged) -> Option:
        variables = self.app.theme_variables
        look = job_look(self.jobs.state_of(job))
        width = max(len(look.word) for look in JOB_LOOKS.values())
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{look.symbol} {look.word:<{width}}", style=role_style(variables, look.role, bold=True))
        line.append(f"  {clean(job.kind):<5}  ")
        line.append(clean(job.id), style=role_style(variables, "text-muted"))
        line.append("  ")
        line.append(first_line(job.description, 300), style="bold")
        if job.detail:
            line.append("  · " + first_line(job.detail, 120), style=role_style(variables, "text-muted"))
        return Option(line, id=job.id)

    def action_stop(self) -> None:
        listing = self.query_one("#jobs", OptionList)
        option = listing.highlighted_option
        if option is None or option.id is None:
            return
        job = self.jobs.jobs.get(option.id)
        if job is None or job.state != "running" or job.id in self.jobs.stopping:
            return
        self.jobs.stopping.add(job.id)
        self._submit(StopBackground(id=job.id))
        self.refresh_jobs()

    def action_close(self) -> None:
        self.dismiss(None)
