"""The app driven as a person would, with keys. Where stopping must really stop, the
real Session runs (scripted provider, a tool that waits until it is cancelled);
elsewhere a fake session records the ops it receives."""

from __future__ import annotations

import os
import threading

os.environ["TEXTUAL_ANIMATIONS"] = "none"

from agent_tui.protocol import (  # noqa: E402
    Decide,
    Decision,
    FollowUp,
    Interrupt,
    SendNow,
    Shutdown,
    ToolState,
    ToolStateChanged,
    TurnStarted,
    UserMessage,
)
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.help import HelpScreen  # noqa: E402
from agent_tui.ui.screens.permission import PermissionScreen  # noqa: E402
from agent_tui.ui.widgets.transcript_blocks import TextBlock, UserBlock  # noqa: E402
from tests.snapshot_tests import scenarios  # noqa: E402
from tests.snapshot_tests.support import fake_factory, real_factory, settle, wait_until  # noqa: E402

import pytest  # noqa: E402

pytestmark = pytest.mark.asyncio

SIZE = (100, 30)


def _states(app: AgentApp) -> list[str]:
    return [row.state for row in app.tools_pane.rows.values()]


async def _type(pilot, text: str) -> None:
    await pilot.press(*[("space" if c == " " else c) for c in text])


# ------------------------------------------------------------ Esc really stops


async def test_esc_during_a_tool_interrupts_and_the_turn_ends_cancelled() -> None:
    app = AgentApp(real_factory(seconds=30), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "run slow")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _states(app) == ["running"], what="tool running")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.last_turn_status == "cancelled", what="turn cancelled")
        app.flush()
        assert _states(app) == ["cancelled_while_running"]
        assert app.status.plain().startswith("■ cancelled")
        row = next(iter(app.tools_pane.rows.values()))
        assert row.last_line == "step 1 of 3"


async def test_esc_during_the_stream_cancels_the_turn() -> None:
    app = AgentApp(real_factory(), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "long")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: app.transcript.text_block is not None and app.transcript.text_block.text, what="text"
        )
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.last_turn_status == "cancelled", what="turn cancelled")
        app.flush()
        streamed = list(app.transcript.blocks_of(TextBlock))[-1].text
        assert 0 < len(streamed) < len("This is a long answer that streams slowly. " * 20)


async def test_esc_when_idle_sends_nothing() -> None:
    make, made = fake_factory([])
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        await pilot.pause()
        assert made[0].interrupts == 0
        assert not any(isinstance(op, Interrupt) for op in made[0].ops)


async def test_once_started_full_cycle_collections_are_rarer_than_python_s_default() -> None:
    import gc

    from agent_tui.ui.app.core_run import FULL_COLLECTION_EVERY

    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # Python's default, whatever an earlier app set
    try:
        make, _ = fake_factory([])
        app = AgentApp(make, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.core_running, what="the core")
            assert gc.get_threshold() == (700, 10, FULL_COLLECTION_EVERY) and FULL_COLLECTION_EVERY > 10
    finally:
        gc.set_threshold(*before)


async def test_up_and_down_in_the_input_walk_the_messages_sent_before() -> None:
    make, made = fake_factory([])
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        for text in ("first message", "second message"):
            await _type(pilot, text)
            await pilot.press("enter")
        await _type(pilot, "draft")
        await pilot.press("up")
        assert app.prompt.text == "second message"
        await pilot.press("up", "up")
        assert app.prompt.text == "first message"  # the oldest stays
        await pilot.press("down")
        assert app.prompt.text == "second message"
        await pilot.press("down")
        assert app.prompt.text == "draft"  # what was being typed is back
        # Inside a message of several lines, Up moves the cursor first.
        app.prompt.text = "line one\nline two"
        app.prompt.move_cursor((1, 3))
        await pilot.press("up")
        assert app.prompt.text == "line one\nline two" and app.prompt.cursor_location[0] == 0
        sent = [op.text for op in made[0].ops if getattr(op, "type", "") == "user_message"]
        assert sent == ["first message", "second message"]


# ------------------------------------------------------------ permission prompt


async def test_esc_at_the_permission_prompt_denies_that_call_and_stops_the_turn() -> None:
    app = AgentApp(real_factory(ask=True), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "run slow")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen), what="prompt")
        assert _states(app) == ["awaiting_approval"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: _states(app) == ["denied"], what="denied")
        await wait_until(pilot, lambda: app.last_turn_status == "cancelled", what="the turn stopped")
        assert not isinstance(app.screen, PermissionScreen)


async def test_y_at_the_permission_prompt_allows_once() -> None:
    app = AgentApp(real_factory(ask=True, seconds=0.05), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "run slow")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen), what="prompt")
        await wait_until(pilot, lambda: app.screen.armed, what="the prompt takes answers")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.last_turn_status == "completed", what="turn end")
        assert _states(app) == ["succeeded"]


async def test_typing_when_the_permission_prompt_opens_goes_to_the_input_not_to_an_answer(
    monkeypatch,
) -> None:
    from agent_tui.ui.screens import permission

    # However slowly the keys arrive on a loaded machine, they count as typing...
    monkeypatch.setattr(permission, "ARM_DELAY", 60.0)
    app = AgentApp(real_factory(ask=True), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "run slow")
        await pilot.press("enter")
        # The user goes on typing the next message while the prompt opens.
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen), what="prompt")
        await _type(pilot, "edit a file")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PermissionScreen)
        assert _states(app) == ["awaiting_approval"]  # "a" granted nothing, Enter allowed nothing
        assert app.prompt.text == "edit a file"  # nothing typed was lost
        assert "typing" in str(app.screen.query_one("#typing").render())
        # ... and once the user has stopped typing for the delay, the keys answer.
        assert not app.screen.armed
        monkeypatch.setattr(permission, "ARM_DELAY", 0.2)
        await wait_until(pilot, lambda: app.screen.armed, what="the prompt takes answers")
        await pilot.press("n")
        await wait_until(pilot, lambda: _states(app) == ["denied"], what="denied")
        assert app.prompt.text == "edit a file"


async def test_deny_with_a_note_sends_the_note() -> None:
    make, made = fake_factory(scenarios.PERMISSION)
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenarios.PERMISSION))
        assert isinstance(app.screen, PermissionScreen)
        await wait_until(pilot, lambda: app.screen.armed, what="the prompt takes answers")
        await pilot.press("d")
        await _type(pilot, "use make clean")
        await pilot.press("enter")
        await pilot.pause()
        decides = [op for op in made[0].ops if isinstance(op, Decide)]
        assert decides == [Decide(tool_use_id="toolu_p", decision=Decision.DENY, note="use make clean")]
        assert not isinstance(app.screen, PermissionScreen)


async def test_the_prompt_closes_when_the_turn_is_interrupted_elsewhere() -> None:
    app = AgentApp(real_factory(ask=True), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "run slow")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen), what="prompt")
        app.session.interrupt_now()  # e.g. a signal: the call stops waiting by itself
        await wait_until(pilot, lambda: not isinstance(app.screen, PermissionScreen), what="closed")
        await wait_until(pilot, lambda: app.last_turn_status == "cancelled", what="turn cancelled")
        assert _states(app) == ["cancelled_before_start"]


# ------------------------------------------------------------ steering


async def test_enter_while_running_queues_a_steer_that_is_then_applied() -> None:
    gate = threading.Event()
    app = AgentApp(real_factory(gate=gate), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "run slow")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _states(app) == ["running"], what="tool running")
        await _type(pilot, "also lint")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.queue_pane.queued == 1, what="queued")
        assert [i.state for i in app.queue_pane.items.values()] == ["queued"]
        gate.set()  # the tool finishes by itself: the steer rides with its result
        await wait_until(
            pilot,
            lambda: [i.state for i in app.queue_pane.items.values()] == ["applied"],
            what="applied",
        )
        await wait_until(pilot, lambda: app.last_turn_status == "completed", what="turn end")
        steers = [e for e in app.transcript.blocks_of(UserBlock) if e.is_steer]
        assert len(steers) == 1


async def test_after_an_interrupt_returned_messages_go_back_into_the_input() -> None:
    app = AgentApp(real_factory(seconds=30), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "run slow")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _states(app) == ["running"], what="tool running")
        await _type(pilot, "use the release profile")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.queue_pane.queued == 1, what="queued")
        assert app.prompt.text == ""
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.last_turn_status == "cancelled", what="turn cancelled")
        assert app.prompt.text == "use the release profile"
        assert [i.state for i in app.queue_pane.items.values()] == ["returned"]


async def test_follow_up_key_sends_a_follow_up() -> None:
    make, made = fake_factory([])
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "then summarise")
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert made[0].ops == [FollowUp(text="then summarise")]
        await _type(pilot, "hello")
        await pilot.press("ctrl+j")
        await _type(pilot, "world")
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops[-1] == UserMessage(text="hello\nworld")


# ------------------------------------------------------------ quitting, rewind, help


async def test_ctrl_c_twice_quits_and_shuts_the_core_down() -> None:
    make, made = fake_factory([])
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert "press Ctrl+C again to quit" in app.status.plain()
        assert app.is_running
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.is_running, what="app exit")
    assert any(isinstance(op, Shutdown) for op in made[0].ops)
    assert not app.core_running
    assert app.return_code == 0


async def test_ctrl_c_presses_far_apart_do_not_quit() -> None:
    now = [0.0]
    make, _ = fake_factory([])
    app = AgentApp(make, cursor_blink=False, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        now[0] = 10.0
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert "press Ctrl+C again to quit" in app.status.plain()


async def test_quitting_while_a_tool_runs_stops_it() -> None:
    app = AgentApp(real_factory(seconds=30), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "run slow")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _states(app) == ["running"], what="tool running")
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, what="app exit", timeout=10)
    assert not app.core_running
    assert app.session_closed or not app.core_running


async def test_esc_esc_far_apart_does_not_open_the_rewind_menu() -> None:
    now = [0.0]
    make, made = fake_factory([])
    app = AgentApp(make, cursor_blink=False, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        now[0] = 5.0
        await pilot.press("escape")
        await pilot.pause()
        assert app.rewind_slot.screen is None
        assert made[0].ops == []


async def test_send_now_key_sends_send_now() -> None:
    make, made = fake_factory([])
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "stop waiting and read the log")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert made[0].ops == [SendNow(text="stop waiting and read the log")]
        assert app.prompt.text == ""


async def test_f1_opens_help() -> None:
    make, _ = fake_factory([])
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_help_lists_every_key_of_the_main_screen() -> None:
    from agent_tui.ui.input.keys import APP_BINDINGS, HELP

    listed = " ".join(keys for keys, _what in HELP)
    for binding in APP_BINDINGS:
        for key in binding.key.split(","):
            shown = {"escape": "Esc", "question_mark": "?"}.get(key) or "+".join(
                part.capitalize() if len(part) > 1 else part.upper() for part in key.split("+"))
            assert shown in listed, f"{key} ({binding.action}) is not in the help"
    make, _ = fake_factory([])
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        import io

        from rich.console import Console

        console = Console(width=90, file=io.StringIO(), record=True)
        for static in app.screen.query("Static"):
            console.print(static.content)
        assert "Ctrl+Q" in console.export_text()


async def test_help_scrolls_on_a_small_terminal() -> None:
    make, _ = fake_factory([])
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        box = app.screen.query_one("#info")
        assert box.max_scroll_y > 0  # more keys than rows
        await pilot.press("end")
        await pilot.pause()
        assert box.scroll_y == box.max_scroll_y


async def test_unknown_theme_falls_back_to_dark_with_a_notice() -> None:
    make, _ = fake_factory([])
    app = AgentApp(make, theme="solarized-neon", cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme_name == "dark"
        assert "unknown theme 'solarized-neon'" in app.status.plain()


# ------------------------------------------------------------ safety and load


async def test_hostile_text_is_never_markup_or_control() -> None:
    events = [
        TurnStarted(turn_id="t1", text="[red]hi[/red]"),
        ToolStateChanged(
            turn_id="t1", tool_use_id="x", name="bash\x1b[2J", state=ToolState.RUNNING,
            summary="echo [bold]x[/bold] \x1b]0;title\x07",
        ),
    ]
    make, _ = fake_factory(events)
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        text = app.tools_pane.render_rows().plain
        assert "echo [bold]x[/bold]" in text
        assert "\x1b" not in text and "title" not in text


async def test_a_flood_of_deltas_arrives_whole() -> None:
    events = [TurnStarted(turn_id="t1", text="go")] + scenarios._text("x" * 20000, size=2)
    make, _ = fake_factory(events)
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert list(app.transcript.blocks_of(TextBlock))[-1].text == "x" * 20000


async def test_a_session_that_cannot_start_is_reported_not_crashed() -> None:
    def broken(emit):
        raise RuntimeError("journal unreadable")

    app = AgentApp(broken, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "cannot start the session: journal unreadable" in app.status.plain()
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, what="app exit")
    assert app.return_value == 1


async def test_every_event_type_has_a_case_in_the_dispatch() -> None:
    """The dispatch's ``match`` names every member of the protocol's Event union (a new
    event without a case would fall to ``assert_never``)."""
    import ast
    import inspect
    import typing

    from agent_tui.protocol import Event
    from agent_tui.ui.link import event_dispatch

    tree = ast.parse(inspect.getsource(event_dispatch.EventDispatch.handle).strip().replace("\n    ", "\n"))
    named = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.MatchClass) and isinstance(node.cls, ast.Name):
            named.add(node.cls.id)
    members = {cls.__name__ for cls in typing.get_args(Event)}
    assert members - named == set()
