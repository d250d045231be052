"""The plan pane: the model's checklist (``todo_write``), live, folded once all done.

One line per item: symbol, the item (its ``activeForm`` while in progress) and, for
the items that are not plainly pending or done, the word (``in progress``,
``interrupted``). Hidden while there is no plan; a plan whose items are all done
folds to one line.

The plan is the one :mod:`agent_tui.core.modes.plan` derives from the journal; the pane
follows the same events the journal records (a ``todo_write`` call that succeeded,
a turn interrupted, a rewind of the conversation) and reads the saved records when a
session is resumed. It keeps the plan that was in force before each turn, so a
rewind to a message shows the plan as it was then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from agent_tui.protocol.states import PlanItemState
from agent_tui.protocol.tool_names import writes_plan
from agent_tui.ui.render.safe_text import first_line
from agent_tui.ui.render.states import PLAN_LOOKS, role_style

if TYPE_CHECKING:
    from agent_tui.core.modes.plan import Plan



class PlanPane(VerticalScroll):
    DEFAULT_CSS = """
    PlanPane {
        height: auto;
        max-height: 9;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    PlanPane.-empty { display: none; }
    PlanPane > Static { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="-empty")
        self.plan: Plan | None = None
        self._before: dict[str, Plan | None] = {}  # turn id -> the plan when it started
        self._body = Static("")

    def compose(self) -> ComposeResult:
        yield self._body

    def on_mount(self) -> None:
        self.border_title = "plan"

    # -- what changes the plan ------------------------------------------------------

    def on_core_event(self, event: Any) -> None:
        """Follow one of the core's events (the app hands it every event)."""
        kind = event.type
        if kind == "tool_state":
            if writes_plan(event.name) and event.parent_tool_use_id is None \
                    and event.state == "succeeded":
                from agent_tui.core.modes.plan import Plan, plan_items

                items = plan_items(event.input)
                if items is not None:
                    self.show(Plan(items=items, tool_use_id=event.tool_use_id))
        elif kind == "turn_started":
            self._before[event.turn_id] = self.plan
        elif kind == "turn_ended":
            if event.status == "cancelled" and self.plan is not None and not self.plan.interrupted:
                self.show(self.plan.model_copy(update={"interrupted": True}))
        elif kind == "rewound":
            if event.restore != "code" and event.checkpoint_id in self._before:
                self.show(self._before[event.checkpoint_id])
        elif kind == "conversation_cleared":
            self._before.clear()
            self.show(None)

    def show_records(self, records: list[Any]) -> None:
        """A resumed session: the plan its journal leaves, and each turn's before it."""
        from agent_tui.core.history.history import effective_records
        from agent_tui.core.journal.records import UserMessageRecord
        from agent_tui.core.modes.plan import PlanTracker

        tracker = PlanTracker()
        for record in effective_records(records):
            if isinstance(record, UserMessageRecord):
                self._before[record.turn_id] = tracker.plan
            tracker.feed(record)
        self.show(tracker.plan)

    # -- drawing --------------------------------------------------------------------

    def show(self, plan: Plan | None) -> None:
        self.plan = plan
        self.set_class(plan is None or not plan.items, "-empty")
        if plan is None or not plan.items:
            self._body.update("")
            return
        variables = self.app.theme_variables
        muted = role_style(variables, "text-muted")
        total, done = len(plan.items), plan.done
        out = Text(no_wrap=True, overflow="ellipsis")
        if plan.complete:
            look = PLAN_LOOKS[PlanItemState.COMPLETED]
            out.append(f"{look.symbol} ", style=role_style(variables, look.role, bold=True))
            out.append(f"all {total} items done", style=muted)
            self.border_title = f"plan: {done} of {total} done"
            self._body.update(out)
            return
        focus: int | None = None  # the line to keep in view: the item being worked on
        for index, item in enumerate(plan.items):
            state = plan.state_of(item)
            look = PLAN_LOOKS[state]
            if out:
                out.append("\n")
            out.append(f"{look.symbol} ", style=role_style(variables, look.role, bold=True))
            text = item.content
            if state is PlanItemState.IN_PROGRESS and item.active_form:
                text = item.active_form
            out.append(first_line(text, 300), style=muted if state is PlanItemState.COMPLETED
                       else role_style(variables, look.role) if state is PlanItemState.INTERRUPTED
                       else "")
            if state in (PlanItemState.IN_PROGRESS, PlanItemState.INTERRUPTED):
                out.append(f"  · {look.word}", style=role_style(variables, look.role))
                focus = index if focus is None else focus
        title = f"plan: {done} of {total} done"
        if plan.interrupted and plan.cut_off():
            title += ", interrupted"
        self.border_title = title
        self._body.update(out)
        self.call_after_refresh(self.scroll_to, y=max(0, (focus or 0) - 1), animate=False)
