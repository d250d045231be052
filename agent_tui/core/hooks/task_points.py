"""``TaskCreated`` and ``TaskCompleted``: a ``todo_write`` call is shown to them before it runs.

Claude Code runs them from its task tools (``TaskCreate``, ``TaskUpdate``); agent-tui's
tasks are the items of ``todo_write``'s plan. An item the new plan adds (no item of the
plan in force has its ``content``) is created; an item it marks ``completed`` that was
not is completed (one added as completed is both). ``task_id`` is the item's place in
the new plan (``"1"`` first), ``task_subject`` its ``content``, ``task_description``
its ``activeForm``. A block (exit 2, ``decision: "block"``) refuses the whole call
before it runs, as Claude Code rolls the task back: the plan stays as it was and the
model is told the reason; the first block ends the asking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from agent_tui.cancel import CancelScope
from agent_tui.core.history.scope import effective_records
from agent_tui.core.modes.plan import PlanItem, plan_items, plan_of
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.services.hooks_port import HookAnswer
from agent_tui.protocol.states import HookDecision, HookEvent, TodoStatus

E = HookEvent


class HookPoints(Protocol):
    """What of ``hook_points.HookPoints`` this asks."""

    deps: SessionDeps
    scope: CancelScope

    def wanted(self, event: HookEvent, subject: str | None = None,
               tool_input: dict[str, Any] | None = None) -> bool: ...

    async def dispatch(
        self, event: HookEvent, subject: str | None, fields: Mapping[str, Any],
    ) -> HookAnswer | None: ...


def task_events(before: tuple[PlanItem, ...], after: tuple[PlanItem, ...]
                ) -> list[tuple[HookEvent, str, PlanItem]]:
    """The task events of a plan written over another: (event, task id, item)."""
    old = {item.content: item for item in before}
    done = TodoStatus.COMPLETED
    events: list[tuple[HookEvent, str, PlanItem]] = []
    for n, item in enumerate(after, 1):
        prior = old.get(item.content)
        if prior is None:
            events.append((E.TASK_CREATED, str(n), item))
        if item.status is done and (prior is None or prior.status is not done):
            events.append((E.TASK_COMPLETED, str(n), item))
    return events


async def plan_hooks(points: HookPoints, tool_input: dict[str, Any]) -> HookAnswer | None:
    """The task hooks of a ``todo_write`` call: the first block, or None."""
    if not (points.wanted(E.TASK_CREATED) or points.wanted(E.TASK_COMPLETED)):
        return None
    after = plan_items(tool_input)
    if after is None:  # not a plan: the call fails by itself
        return None
    plan = plan_of(effective_records(points.deps.journal.records))
    for event, task_id, item in task_events(plan.items if plan else (), after):
        fields = {"task_id": task_id, "task_subject": item.content,
                  **({"task_description": item.active_form} if item.active_form else {})}
        answer = await points.dispatch(event, None, fields)
        points.scope.raise_if_cancelled()  # cancel point: while a hook judges a task
        if answer is not None and answer.decision is HookDecision.BLOCK:
            answer.reason = answer.reason or f"a {event} hook refused the plan"
            return answer
    return None
