"""Images in the TUI: a pasted image path shows as a chip while the message is written
and goes with it as an image; an @-chosen image is attached as an image (other
binaries still refused); refusals say why; the transcript says what was attached.

Review snapshot changes in snapshot_report.html, then ``pytest --snapshot-update``.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import TurnEnded, TurnStarted, TurnStateChanged, UserMessage  # noqa: E402
from agent_tui.protocol.states import TurnState  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402
from tests.image_files import png  # noqa: E402

SIZE = (110, 30)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    root = tmp_path / "ws"
    (root / "shots").mkdir(parents=True)
    (root / "shots" / "login page.png").write_bytes(png(2, 2))
    (root / "shots" / "logo.gif").write_bytes(b"GIF89a" + b"\0" * 20)
    (root / "notes.png").write_text("not a picture at all")
    (root / "data.bin").write_bytes(b"\x00\x01binary")
    return root


def _app(ws: Path, events: list | None = None):
    make, made = fake_factory(events or [], workspace=ws)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, workspace=ws), made


def _chips(app) -> str:
    return app.attachment_bar.render().plain


@pytest.mark.asyncio
async def test_a_pasted_image_path_shows_a_chip_and_goes_with_the_message(ws: Path) -> None:
    app, made = _app(ws)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        app.prompt.insert("why is shots/login\\ page.png blank? notes.png too")
        await wait_until(pilot, lambda: "login page.png" in _chips(app), what="the image chip")
        assert "not attached: notes.png: not a PNG, JPEG, GIF or WebP image" in _chips(app)
        await pilot.press("enter")
        await pilot.pause()
        (op,) = made[0].ops
        assert isinstance(op, UserMessage)
        assert op.text == "why is shots/login\\ page.png blank? notes.png too"
        assert [(i.path, i.media_type, base64.b64decode(i.data)) for i in op.images] == [
            ("shots/login page.png", "image/png", png(2, 2))]
        assert "image not attached: notes.png" in app.status.plain()
        assert app.attachment_bar.has_class("-empty")


@pytest.mark.asyncio
async def test_an_image_chosen_with_at_is_attached_as_an_image_and_binaries_are_still_refused(ws: Path) -> None:
    app, made = _app(ws)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        app.prompt.insert("@data")
        await wait_until(pilot, lambda: app.suggestions.is_open and app.suggestions.items
                         and app.suggestions.items[0].value == "data.bin", what="data.bin")
        await pilot.press("enter")
        await pilot.pause()
        assert "data.bin: a binary file" in app.status.plain() and app.attachment_bar.items == []
        app.prompt.text = ""
        app.prompt.insert("look at @logo")
        await wait_until(pilot, lambda: app.suggestions.is_open and app.suggestions.items
                         and app.suggestions.items[0].value == "shots/logo.gif", what="the image")
        await pilot.press("enter")
        await pilot.pause()
        assert [(i.kind, i.path) for i in app.attachment_bar.items] == [("image", "shots/logo.gif")]
        assert "image/gif" in _chips(app)
        await pilot.press("enter")
        await pilot.pause()
        (op,) = made[0].ops
        assert "<file" not in op.text  # the image goes beside the text, not in it
        assert [(i.path, base64.b64decode(i.data)) for i in op.images] == [
            ("shots/logo.gif", b"GIF89a" + b"\0" * 20)]


def _sent_turn() -> list:
    return [TurnStarted(turn_id="t1", text="why is shots/login\\ page.png blank?",
                        images=["shots/login page.png"]),
            TurnStateChanged(turn_id="t1", state=TurnState.RUNNING),
            TurnEnded(turn_id="t1", status="completed")]


class TestImageSnapshots:
    def test_chips_for_a_pasted_image_and_a_refused_one(self, snap_compare, ws: Path) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot, pilot.app, 0)
            pilot.app.prompt.insert("why is shots/login\\ page.png blank? and notes.png")
            await wait_until(pilot, lambda: "notes.png" in _chips(pilot.app), what="the chips")
            await settle(pilot, pilot.app, 0)

        assert snap_compare(_app(ws)[0], terminal_size=SIZE, run_before=run_before)

    def test_the_transcript_says_which_image_was_attached(self, snap_compare, ws: Path) -> None:
        events = _sent_turn()

        async def run_before(pilot) -> None:
            await settle(pilot, pilot.app, len(events))

        assert snap_compare(_app(ws, events)[0], terminal_size=SIZE, run_before=run_before)
