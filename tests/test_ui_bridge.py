"""The bridge batches core events for the UI, and double presses are timed by an
injectable clock."""

from __future__ import annotations

import threading

from agent_tui.protocol import Notice, TextDelta, ToolOutput
from agent_tui.ui.link.bridge import EventInbox, coalesce
from agent_tui.ui.input.keys import DoublePress


def test_neighbouring_deltas_merge_and_order_is_kept() -> None:
    events = [
        TextDelta(turn_id="t1", text="a"),
        TextDelta(turn_id="t1", text="b"),
        ToolOutput(turn_id="t1", tool_use_id="x", text="1\n"),
        ToolOutput(turn_id="t1", tool_use_id="x", text="2\n"),
        ToolOutput(turn_id="t1", tool_use_id="y", text="3\n"),
        Notice(level="info", text="n"),
        TextDelta(turn_id="t1", text="c"),
    ]
    out = coalesce(events)
    assert [type(e).__name__ for e in out] == [
        "TextDelta", "ToolOutput", "ToolOutput", "Notice", "TextDelta",
    ]
    assert out[0].text == "ab" and out[1].text == "1\n2\n" and out[4].text == "c"


def test_deltas_wait_for_the_flush_and_other_events_nudge_once_per_batch() -> None:
    nudges: list[int] = []
    inbox = EventInbox(lambda: nudges.append(1))

    def flood() -> None:
        for i in range(5000):
            inbox.emit(TextDelta(turn_id="t1", text="x"))
            inbox.emit(ToolOutput(turn_id="t1", tool_use_id="x", text="y"))

    thread = threading.Thread(target=flood)
    thread.start()
    thread.join()
    assert nudges == []  # a stream does not wake the UI: the flush drains it
    inbox.emit(Notice(level="info", text="state"))
    inbox.emit(Notice(level="info", text="more"))
    assert len(nudges) == 1  # one wake-up for the batch
    drained = inbox.drain()
    assert inbox.drained == 10002
    assert [e.type for e in drained[-2:]] == ["notice", "notice"]
    assert sum(len(e.text) for e in drained if e.type == "text_delta") == 5000
    inbox.emit(Notice(level="info", text="again"))
    assert len(nudges) == 2


def test_double_press_within_the_window_only() -> None:
    now = [0.0]
    press = DoublePress(0.5, clock=lambda: now[0])
    assert press.press() is False
    now[0] = 0.4
    assert press.press() is True
    assert press.press() is False  # a completed double press starts over
    now[0] = 1.5
    assert press.press() is False  # too late: this is a new first press
    assert press.armed
    now[0] = 2.1
    assert not press.armed
