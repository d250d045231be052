"""The model's plan (``todo_write``), derived from the journal and nothing else.

The plan is the input of the last ``todo_write`` call that succeeded in the effective
records (``history.effective_records``): resume and rewind restore it with no state of
its own. A turn interrupted after that call leaves the plan *interrupted*: its
``in_progress`` items are shown as interrupted, not done, and the next request tells
the model which item was cut off (:func:`cut_off_wording`, called from
``history.interrupted_note``).

Pure functions of records; the tool (``tools/todo.py``), the TUI's plan pane and the
ACP ``plan`` updates all read the plan through here.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
from collections.abc import Iterable
from typing import Any

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.core.journal.records import ToolIntentRecord, ToolResultRecord, TurnEndedRecord
from agent_tui.protocol.tool_names import writes_plan
from agent_tui.protocol.states import (
    PlanItemState,
    TodoPriority,
    TodoStatus,
    ToolState,
    TurnStatus,
)

MAX_ITEMS = 50


class PlanItem(DeferredModel):
    """One item of the plan, as the model writes it."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    content: str = Field(
        min_length=1, max_length=500,
        description="What to do, in the imperative: 'Run the tests'",
    )
    status: TodoStatus = Field(description="pending, in_progress or completed")
    active_form: str | None = Field(
        default=None, alias="activeForm", max_length=500,
        description="The same in the present continuous, shown while in progress: "
        "'Running the tests'",
    )
    priority: TodoPriority | None = Field(default=None, description="high, medium or low")


_ITEMS: TypeAdapter[list[PlanItem]] = TypeAdapter(list[PlanItem], config=ConfigDict(defer_build=True))


class Plan(DeferredModel):
    """The plan in force, and whether a turn was interrupted since it was written."""

    model_config = ConfigDict(frozen=True)

    items: tuple[PlanItem, ...] = ()
    interrupted: bool = False  # a turn was interrupted after the plan was written
    tool_use_id: str = ""  # the todo_write call that wrote it

    def state_of(self, item: PlanItem) -> PlanItemState:
        if item.status is TodoStatus.IN_PROGRESS and self.interrupted:
            return PlanItemState.INTERRUPTED
        return PlanItemState(item.status.value)

    @property
    def done(self) -> int:
        return sum(1 for item in self.items if item.status is TodoStatus.COMPLETED)

    @property
    def complete(self) -> bool:
        return bool(self.items) and self.done == len(self.items)

    def cut_off(self) -> list[PlanItem]:
        """The items that were in progress when a turn was interrupted."""
        return [i for i in self.items if self.state_of(i) is PlanItemState.INTERRUPTED]


def plan_items(raw: Any) -> tuple[PlanItem, ...] | None:
    """The items of a ``todo_write`` input, or None if it does not parse."""
    todos = raw.get("todos") if isinstance(raw, dict) else None
    try:
        items = _ITEMS.validate_python(todos)
    except ValidationError:
        return None
    return tuple(items) if len(items) <= MAX_ITEMS else None


class PlanTracker:
    """Follows records in journal order; ``plan`` is the plan after the last one fed."""

    def __init__(self) -> None:
        self.plan: Plan | None = None
        self._inputs: dict[str, Any] = {}  # todo_write calls started, by tool_use_id

    def feed(self, record: Any) -> None:
        if isinstance(record, ToolIntentRecord) and writes_plan(record.name):
            self._inputs[record.tool_use_id] = record.input
        elif isinstance(record, ToolResultRecord) and writes_plan(record.name):
            raw = self._inputs.pop(record.tool_use_id, None)
            items = plan_items(raw) if record.state is ToolState.SUCCEEDED else None
            if items is not None:
                self.plan = Plan(items=items, tool_use_id=record.tool_use_id)
        elif isinstance(record, TurnEndedRecord) and record.status is TurnStatus.CANCELLED:
            if self.plan is not None and not self.plan.interrupted:
                self.plan = self.plan.model_copy(update={"interrupted": True})


def plan_of(records: Iterable[Any]) -> Plan | None:
    """The plan after ``records``, taken as they are: give it the effective records
    (``history.effective_records``) for the plan in force, rewinds applied."""
    tracker = PlanTracker()
    for record in records:
        tracker.feed(record)
    return tracker.plan


def cut_off_wording(records: Iterable[Any]) -> str:
    """For the note after an interrupted turn: which plan item was cut off, if any."""
    return plan_cut_off_wording(plan_of(records))


def plan_cut_off_wording(plan: Plan | None) -> str:
    """:func:`cut_off_wording` of the plan in force."""
    items = plan.cut_off() if plan is not None else []
    if not items:
        return ""
    names = ", ".join(f'"{item.content}"' for item in items)
    which = "item was" if len(items) == 1 else "items were"
    return (
        f" The plan {which} in progress when it was cut off, and is not done: {names}."
    )
