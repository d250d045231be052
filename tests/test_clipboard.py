"""Ctrl+V in the input: the system clipboard's image as a chip (its text pasted as the
terminal would), read with wl-paste or xclip as Claude Code reads it. The tools here
are scripts on PATH written by the test, run as real processes: one that hangs is
ended in time; no tool, no display, an image too large each say so, and nothing typed
is lost.

Review snapshot changes in snapshot_report.html, then ``pytest --snapshot-update``.
"""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import UserMessage  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.input.clipboard import ClipImage, ClipNothing, ClipText, read_clipboard  # noqa: E402
from tests.image_files import png  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

SIZE = (100, 24)
# Claude Code's own words, for reference (its binary): "No image found in clipboard",
# "No image read. Install wl-clipboard to paste images" (or xclip).


def _tool(bin_dir: Path, name: str, types: str, data: bytes | None = None, *, hang: bool = False) -> Path:
    """A fake ``wl-paste`` / ``xclip``: lists ``types``, prints ``data`` for any one."""
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / f"{name}.data").write_bytes(data or b"")
    listing = "-o" if name == "xclip" else "--list-types"
    script = bin_dir / name
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{bin_dir}/{name}.calls"\n'
        + (f'echo $$ > "{bin_dir}/{name}.pid"\nexec sleep 60\n' if hang else "")
        + f'case " $* " in *" TARGETS "*|*" --list-types "*) printf "{types}"; exit 0 ;; esac\n'
        f'[ "{listing}" = "-o" ] || true\n'
        f'cat "{bin_dir}/{name}.data"\n')
    script.chmod(0o755)
    return bin_dir


def _env(bin_dir: Path, **display: str) -> dict[str, str]:
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/"), **display}


@pytest.mark.asyncio
async def test_wayland_image_is_read_with_wl_paste_as_png(tmp_path: Path) -> None:
    bin_dir = _tool(tmp_path / "bin", "wl-paste", r"text/html\nimage/png\nimage/jpeg\n", png(3, 2))
    _tool(bin_dir, "xclip", r"STRING\n", b"not this one")
    clip = await read_clipboard(_env(bin_dir, WAYLAND_DISPLAY="wayland-0", DISPLAY=":0"))
    assert isinstance(clip, ClipImage)
    assert (clip.image.media_type, base64.b64decode(clip.image.data), clip.image.size) == (
        "image/png", png(3, 2), len(png(3, 2)))
    assert (bin_dir / "wl-paste.calls").read_text().splitlines() == [
        "--list-types", "--no-newline --type image/png"]
    assert not (bin_dir / "xclip.calls").exists()


@pytest.mark.asyncio
async def test_x11_text_is_read_with_xclip_as_text(tmp_path: Path) -> None:
    bin_dir = _tool(tmp_path / "bin", "xclip", r"TARGETS\nUTF8_STRING\nSTRING\n", "héllo\nworld".encode())
    clip = await read_clipboard(_env(bin_dir, DISPLAY=":0"))
    assert clip == ClipText("héllo\nworld")
    assert (bin_dir / "xclip.calls").read_text().splitlines() == [
        "-selection clipboard -t TARGETS -o", "-selection clipboard -o -t UTF8_STRING"]


@pytest.mark.asyncio
async def test_no_tool_no_display_and_an_empty_clipboard_each_say_what_to_do(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    clip = await read_clipboard(_env(empty, WAYLAND_DISPLAY="wayland-0"))
    assert clip == ClipNothing("no image read: install wl-clipboard to paste images (wl-paste not found)")
    clip = await read_clipboard(_env(empty, DISPLAY=":0"))
    assert clip == ClipNothing("no image read: install xclip to paste images (xclip not found)")
    clip = await read_clipboard({"PATH": str(empty)})
    assert isinstance(clip, ClipNothing) and "neither WAYLAND_DISPLAY nor DISPLAY" in clip.why
    bin_dir = _tool(tmp_path / "bin", "xclip", r"TARGETS\nTIMESTAMP\n")
    assert await read_clipboard(_env(bin_dir, DISPLAY=":0")) == ClipNothing("no image found in the clipboard")


@pytest.mark.asyncio
async def test_an_image_too_large_in_pixels_or_of_another_type_is_refused_with_why(tmp_path: Path) -> None:
    bin_dir = _tool(tmp_path / "bin", "wl-paste", r"image/png\n", png(9000, 1))
    clip = await read_clipboard(_env(bin_dir, WAYLAND_DISPLAY="w"))
    assert clip == ClipNothing("the clipboard's image: 9000x1 pixels, larger than the 8000x8000 the "
                               "model can be sent (not attached)")
    (bin_dir / "wl-paste.data").write_bytes(b"BM" + b"\0" * 60)
    clip = await read_clipboard(_env(bin_dir, WAYLAND_DISPLAY="w"))
    assert clip == ClipNothing("the clipboard's image (wl-paste) is not a PNG, JPEG, GIF or WebP "
                               "image (not attached)")


@pytest.mark.asyncio
async def test_a_tool_that_floods_is_cut_and_refused(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "wl-paste"
    script.write_text('#!/bin/sh\ncase "$1" in --list-types) echo image/png; exit 0;; esac\n'
                      "printf '\\211PNG\\r\\n\\032\\n'; exec cat /dev/zero\n")
    script.chmod(0o755)
    started = time.monotonic()
    clip = await read_clipboard(_env(bin_dir, WAYLAND_DISPLAY="w"))
    assert clip == ClipNothing("the clipboard's image is larger than the 5 MB the model can be sent "
                               "(not attached)")
    assert time.monotonic() - started < 20


@pytest.mark.asyncio
async def test_a_hanging_tool_is_ended_in_time(tmp_path: Path) -> None:
    bin_dir = _tool(tmp_path / "bin", "xclip", "", hang=True)
    started = time.monotonic()
    clip = await read_clipboard(_env(bin_dir, DISPLAY=":0"), timeout_s=0.5)
    took = time.monotonic() - started
    assert clip == ClipNothing("could not read the clipboard: xclip did not answer in 0.5 s (ended)")
    assert took < 5, took
    pid = int((bin_dir / "xclip.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.asyncio
async def test_a_read_given_up_leaves_nothing_running(tmp_path: Path) -> None:
    import asyncio

    bin_dir = _tool(tmp_path / "bin", "xclip", "", hang=True)
    task = asyncio.ensure_future(read_clipboard(_env(bin_dir, DISPLAY=":0"), timeout_s=60))
    while not (bin_dir / "xclip.pid").exists():
        await asyncio.sleep(0.02)
    pid = int((bin_dir / "xclip.pid").read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the clipboard tool is still running")


def _app(ws: Path, monkeypatch: pytest.MonkeyPatch, bin_dir: Path) -> tuple[AgentApp, list]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(ws.parent / "config"))
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    make, made = fake_factory([], workspace=ws)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, workspace=ws), made


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.mark.asyncio
async def test_ctrl_v_attaches_the_image_as_a_chip_and_sends_it(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = _tool(ws.parent / "bin", "wl-paste", r"image/png\n", png(4, 4))
    app, made = _app(ws, monkeypatch, bin_dir)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        app.prompt.insert("what is in ")
        await pilot.press("ctrl+v")
        await wait_until(pilot, lambda: "[Image #1]" in app.prompt.text, what="the marker")
        assert "[Image #1]" in app.attachment_bar.render().plain
        await pilot.press("a", "n", "d", "ctrl+v")
        await wait_until(pilot, lambda: "[Image #2]" in app.prompt.text, what="the second")
        assert app.prompt.text == "what is in [Image #1] and[Image #2] "
        await pilot.press("enter")
        await pilot.pause()
        (op,) = made[0].ops
        assert isinstance(op, UserMessage)
        assert [(i.path, base64.b64decode(i.data)) for i in op.images] == [
            ("[Image #1]", png(4, 4)), ("[Image #2]", png(4, 4))]
        assert app.attachment_bar.has_class("-empty")


@pytest.mark.asyncio
async def test_deleting_the_marker_drops_the_chip_and_text_is_pasted(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = _tool(ws.parent / "bin", "wl-paste", r"image/png\n", png(4, 4))
    app, made = _app(ws, monkeypatch, bin_dir)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await pilot.press("ctrl+v")
        await wait_until(pilot, lambda: bool(app.attachment_bar.items), what="the chip")
        app.prompt.text = "no picture after all"
        app.prompt.move_cursor(app.prompt.document.end)
        await wait_until(pilot, lambda: not app.attachment_bar.items, what="the chip gone")
        _tool(bin_dir, "wl-paste", r"text/plain;charset=utf-8\n", b" - pasted")
        await pilot.press("ctrl+v")
        await wait_until(pilot, lambda: " - pasted" in app.prompt.text, what="the text")
        await pilot.press("enter")
        await pilot.pause()
        (op,) = made[0].ops
        assert (op.text, op.images) == ("no picture after all - pasted", [])


@pytest.mark.asyncio
async def test_a_pasted_data_uri_is_an_image(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _made = _app(ws, monkeypatch, ws.parent)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        uri = "data:image/png;base64," + base64.b64encode(png(2, 2)).decode()
        await app.prompt._on_paste(__import__("textual.events", fromlist=["Paste"]).Paste(uri))
        await wait_until(pilot, lambda: app.prompt.text == "[Image #1] ", what="the marker")
        await app.prompt._on_paste(__import__("textual.events", fromlist=["Paste"]).Paste("data:image/png;base64,@@"))
        await wait_until(pilot, lambda: "not valid base64" in app.status.plain(), what="the refusal")


class TestClipboardSnapshots:
    def test_the_chip_of_a_pasted_image(self, snap_compare, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        bin_dir = _tool(ws.parent / "bin", "wl-paste", r"image/png\n", png(4, 4))

        async def run_before(pilot) -> None:
            await settle(pilot, pilot.app, 0)
            pilot.app.prompt.insert("what is in ")
            await pilot.press("ctrl+v")
            await wait_until(pilot, lambda: "[Image #1]" in pilot.app.prompt.text, what="the marker")
            await settle(pilot, pilot.app, 0)

        assert snap_compare(_app(ws, monkeypatch, bin_dir)[0], terminal_size=SIZE, run_before=run_before)

    def test_the_no_tool_message(self, snap_compare, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot, pilot.app, 0)
            pilot.app.prompt.insert("typed text stays")
            await pilot.press("ctrl+v")
            await wait_until(pilot, lambda: "wl-clipboard" in pilot.app.status.plain(), what="the message")
            await settle(pilot, pilot.app, 0)

        assert snap_compare(_app(ws, monkeypatch, ws.parent)[0], terminal_size=SIZE, run_before=run_before)
