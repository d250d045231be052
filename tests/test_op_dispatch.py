"""One door and one handler for every op (``core/commands/op_dispatch.py``, ``Session.submit``).

Each kind of op reaches exactly its handler; an object sent as an op that is none is
answered with an error notice (never dropped); and an interrupt cancels the running
turn inside ``submit`` itself, before the session's loop has run, once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest

from agent_tui.cancel import CancelReason
from agent_tui.commands.allowed import CommandPolicy
from agent_tui.core.commands.command_run import CommandRun
from agent_tui.core.commands.op_dispatch import OP_TYPES, OpHandlers, dispatch
from agent_tui.permissions import PermissionRules, Permissions
from agent_tui.protocol import OP_ADAPTER, Interrupt, Op, PermissionMode, UserMessage
from agent_tui.providers.anthropic import AnthropicProvider
from tests.fake_api import Reply
from tests.harness import SlowTool, start_session

# One example of each op, built from its type tag alone (the rest defaults) where it can be.
_REQUIRED: dict[str, dict[str, Any]] = {
    "user_message": {"text": "hi"}, "follow_up": {"text": "hi"}, "send_now": {"text": "hi"},
    "decide": {"tool_use_id": "t", "decision": "allow_once"},
    "plan_rewind": {"checkpoint_id": "c"}, "rewind": {"checkpoint_id": "c"},
    "cancel_tool": {"tool_use_id": "t"}, "stop_background": {"id": "j"},
    "set_model": {"model": "m"}, "set_thinking": {"thinking": "off"},
    "set_permission_mode": {"mode": "plan"}, "run_shell": {"command": "true"},
    "rename_session": {"name": "n"}, "edit_queued": {"id": "s1", "text": "x"},
    "remove_queued": {"id": "s1"},
}


def _every_op() -> list[Any]:
    ops: list[Any] = []
    for cls in get_args(get_args(Op)[0]):
        tag = cls.model_fields["type"].default
        ops.append(OP_ADAPTER.validate_python({"type": tag, **_REQUIRED.get(tag, {})}))
    ops.append(CommandRun(name="c", steps=[], compose=lambda outputs: ""))
    return ops


class _Calls:
    """Each handler notes its name and the op it got."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("on_"):
            raise AttributeError(name)
        return lambda op: self.calls.append((name, op))


def test_each_kind_of_op_reaches_one_handler_of_its_own() -> None:
    ops = _every_op()
    assert {type(op) for op in ops} == set(OP_TYPES)
    handlers = [n for n in OpHandlers.__dict__ if n.startswith("on_")]
    seen: dict[str, set[type]] = {}
    for op in ops:
        calls = _Calls()
        dispatch(calls, op)  # _Calls answers any on_* name
        assert [c[1] for c in calls.calls] == [op], op
        seen.setdefault(calls.calls[0][0], set()).add(type(op))
    assert sorted(seen) == sorted(handlers)  # every handler is some op's
    # only the three kinds of message share one
    assert [n for n, kinds in seen.items() if len(kinds) > 1] == ["on_message"]


@pytest.mark.asyncio
async def test_an_object_that_is_no_op_is_an_error_notice(fake_api, tmp_path: Path) -> None:
    run = start_session(AnthropicProvider(api_key="k", base_url=fake_api.url), [], tmp_path)
    run.submit({"type": "user_message", "text": "a dict, not an op"})
    await run.idle()
    errors = [e for e in run.rec.of("notice") if e.level == "error"]
    assert [e.text for e in errors] == ["unknown op 'dict': the session did not handle it"]
    fake_api.enqueue(Reply.text("still here"))
    run.submit(UserMessage(text="hi"))  # the session goes on
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "completed"
    await run.close()


@pytest.mark.asyncio
async def test_an_interrupt_cancels_inside_submit_and_only_once(fake_api, tmp_path: Path) -> None:
    slow = SlowTool()
    fake_api.enqueue(Reply.tool_use("slow", {"note": "x"}))
    fake_api.enqueue(Reply.text("after"))
    run = start_session(AnthropicProvider(api_key="k", base_url=fake_api.url), [slow], tmp_path)
    run.submit(UserMessage(text="go"))
    await slow.started.wait()
    turn = run.session.slot.turn
    assert turn is not None and not turn.scope.cancelled
    run.submit(Interrupt())
    # No await since: the session's loop (this one) has not run, and the turn is stopped.
    assert turn.scope.reason is CancelReason.USER_INTERRUPT
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    states = [(e.state, e.detail) for e in run.rec.of("turn_state") if e.state != "running"]
    # one cancel (then the running call's end, told while cancelling), not two
    assert [s for s, _ in states] == ["cancelling", "cancelling", "cancelled"], states
    assert states[1][1] == "1 of 1 running tool calls ended"
    assert slow.calls == ["x"]
    await run.close()


def test_a_commands_policy_has_the_sessions_mode(tmp_path: Path) -> None:
    base = Permissions(tmp_path, "ask", PermissionRules())
    policy = CommandPolicy(base, [], tmp_path, "review")
    assert policy.mode is PermissionMode.ASK
    policy.set_mode(PermissionMode.PLAN)  # plan mode, entered or left in the command's turn
    assert base.mode is PermissionMode.PLAN and policy.mode is PermissionMode.PLAN
