"""@ mentions: the file list (ripgrep: .gitignore respected), the fuzzy search, the
picker in the input, attachments (a chip; read when sent; size cap; binary files and
images of other types refused; folders listed), and that closing the picker stops its work."""

from __future__ import annotations

import os
import threading
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import UserMessage  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.input.attachments import MAX_FILE_BYTES, split_for_display  # noqa: E402
from agent_tui.ui.input.file_index import FileIndex  # noqa: E402
from tests.snapshot_tests.support import fake_factory, wait_until  # noqa: E402

SIZE = (110, 34)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    root = tmp_path / "ws"
    (root / "src" / "ui").mkdir(parents=True)
    (root / "build").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / "src" / "ui" / "widgets.py").write_text("class Button: ...\n")
    (root / "src" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "src" / "data.bin").write_bytes(b"\x00\x01\x02binary")
    (root / "src" / "huge.txt").write_text("x" * (MAX_FILE_BYTES + 10))
    (root / "build" / "app.py").write_text("generated\n")
    (root / "README.md").write_text("# demo\n")
    (root / ".gitignore").write_text("build/\n")
    return root


def _index(root: Path) -> FileIndex:
    index = FileIndex(root)
    index.refresh()
    assert index.wait(10)
    return index


def test_the_listing_respects_gitignore(ws: Path) -> None:
    paths = set(_index(ws).paths())
    assert "src/app.py" in paths and ".gitignore" in paths
    assert "build/app.py" not in paths


def test_a_match_in_the_file_name_ranks_first(ws: Path) -> None:
    (ws / "apps").mkdir()
    (ws / "apps" / "yaml.txt").write_text("")
    index = _index(ws)
    assert [f.path for f in index.search("apy")][:1] == ["src/app.py"]
    assert [f.path for f in index.search("widg")] == ["src/ui/widgets.py"]
    assert index.search("zzz") == []
    assert index.folder("src/") == ["src/ui/", "src/app.py", "src/data.bin", "src/huge.txt", "src/logo.png"]


def test_cancel_stops_a_listing_and_its_process(tmp_path: Path) -> None:
    for i in range(100):
        folder = tmp_path / f"d{i}"
        folder.mkdir()
        for j in range(50):
            (folder / f"f{j}.txt").write_text("")
    index = FileIndex(tmp_path)
    index.refresh()
    index.wait_for(1, 5)
    index.cancel()
    index.wait(5)
    assert not index.listing
    assert index._proc is not None and index._proc.poll() is not None  # rg is gone
    index.refresh()  # a new listing after a cancel lists everything
    assert index.wait(10) and len(index.paths()) == 5000


def test_a_search_stops_when_told(ws: Path) -> None:
    index = _index(ws)
    stop = threading.Event()
    stop.set()
    assert index.search("a", cancelled=stop) == []


def test_attachments_fold_to_a_line_each_in_the_transcript() -> None:
    text = 'look at @a.py\n\n<file path="a.py">\nx = 1\ny = 2\n</file>\n\n<folder path="src/">\nb.py\n</folder>'
    message, shown = split_for_display(text)
    assert message == "look at @a.py"
    assert [(s.kind.value, s.path, s.lines) for s in shown] == [("file", "a.py", 2), ("folder", "src/", 1)]
    assert split_for_display("no attachment <file path=x>") == ("no attachment <file path=x>", [])


# ------------------------------------------------------------ the picker in the app


def _app(ws: Path):
    make, made = fake_factory([], workspace=ws)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, workspace=ws), made


async def _type(pilot, text: str) -> None:
    await pilot.press(*[{" ": "space", "@": "@", "/": "slash"}.get(c, c) for c in text])


def _items(app) -> list[str]:
    return [i.value for i in app.suggestions.items] if app.suggestions.is_open else []


@pytest.mark.asyncio
async def test_at_opens_the_picker_a_file_is_attached_as_a_chip_and_sent_with_the_message(ws: Path) -> None:
    app, made = _app(ws)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _type(pilot, "explain @")
        await wait_until(pilot, lambda: "src/" in _items(app), what="the root's entries")
        assert "build/" not in _items(app)
        await _type(pilot, "apy")
        await wait_until(pilot, lambda: _items(app)[:1] == ["src/app.py"], what="filtered")
        await pilot.press("enter")
        await pilot.pause()
        assert app.prompt.text == "explain @src/app.py "
        assert [i.path for i in app.attachment_bar.items] == ["src/app.py"]
        assert "src/app.py" in app.attachment_bar.render().plain  # the chip
        await _type(pilot, "briefly")
        await pilot.press("enter")
        await pilot.pause()
        (op,) = made[0].ops
        assert op.text == ('explain @src/app.py briefly\n\n<file path="src/app.py">\n'
                           'def main():\n    return 42\n</file>')
        assert app.attachment_bar.items == []


@pytest.mark.asyncio
async def test_binary_files_other_images_and_big_files_are_refused_with_the_reason(ws: Path) -> None:
    (ws / "src" / "icon.bmp").write_bytes(b"BM\x1e\0\0\0\0\0\0\0\x1a\0\0\0")
    app, made = _app(ws)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        for name, why in (("data.bin", "a binary file"), ("icon.bmp", "an image the model cannot be sent"),
                          ("huge.txt", "larger than")):
            app.prompt.text = ""
            await _type(pilot, f"@{name.split('.')[0]}")
            await wait_until(pilot, lambda: _items(app)[:1] == [f"src/{name}"], what=name)
            await pilot.press("enter")
            await pilot.pause()
            assert why in app.status.plain()
            assert app.attachment_bar.items == []
        assert made[0].ops == []


@pytest.mark.asyncio
async def test_at_folder_lists_the_folder_and_attaching_it_sends_its_listing(ws: Path) -> None:
    app, made = _app(ws)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _type(pilot, "@src/")
        await wait_until(pilot, lambda: _items(app)[:2] == ["src/ui/", "src/app.py"], what="folder entries")
        await pilot.press("tab")  # Tab on a folder goes into it
        await pilot.pause()
        assert app.prompt.text == "@src/ui/"
        await wait_until(pilot, lambda: _items(app) == ["src/ui/widgets.py"], what="sub folder")
        app.prompt.text = "what is in "
        app.prompt.move_cursor(app.prompt.document.end)
        await _type(pilot, "@src/")
        await wait_until(pilot, lambda: _items(app)[:1] == ["src/ui/"], what="entries")
        await pilot.press("escape")  # closes the picker; the typed mention stays
        await pilot.pause()
        assert not app.suggestions.is_open and made[0].interrupts == 0
        await pilot.press("backspace", "slash")  # typing again opens it again
        await wait_until(pilot, lambda: _items(app)[:1] == ["src/ui/"], what="reopened")
        await pilot.press("enter")  # Enter on a folder attaches it
        await pilot.pause()
        assert [(i.kind.value, i.path) for i in app.attachment_bar.items] == [("folder", "src/ui/")]
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops == [UserMessage(
            text='what is in @src/ui/\n\n<folder path="src/ui/">\nwidgets.py\n</folder>')]


@pytest.mark.asyncio
async def test_a_deleted_mention_drops_its_chip(ws: Path) -> None:
    app, made = _app(ws)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _type(pilot, "@READ")
        await wait_until(pilot, lambda: _items(app)[:1] == ["README.md"], what="readme")
        await pilot.press("enter")
        await pilot.pause()
        assert [i.path for i in app.attachment_bar.items] == ["README.md"]
        app.prompt.text = "never mind"
        await pilot.pause()
        assert app.attachment_bar.items == []
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops == [UserMessage(text="never mind")]
