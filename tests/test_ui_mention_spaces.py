"""@ mentions of paths with spaces: the picker writes them escaped as a shell would
(``@my\\ notes/plan\\ draft.txt``), a quoted mention (``@"my notes/plan draft.txt"``)
reads back too, and the file is attached and sent (Textual pilot, ripgrep listing)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.input.attachments import mentions  # noqa: E402
from agent_tui.ui.input.completion import MenuKind, span_at  # noqa: E402
from tests.snapshot_tests.support import fake_factory, wait_until  # noqa: E402

SIZE = (110, 34)
SENT_FILE = '\n\n<file path="my notes/plan draft.txt">\nstep one\n</file>'


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    root = tmp_path / "ws"
    (root / "my notes").mkdir(parents=True)
    (root / "my notes" / "plan draft.txt").write_text("step one\n")
    (root / "README.md").write_text("# demo\n")
    return root


def test_mentions_read_escaped_and_quoted_paths_back() -> None:
    text = ('see @"my notes/plan draft.txt", @\'a b.md\' and @my\\ notes/x\\ y.txt '
            "then @plain.py and @don't.txt or mail me@example.com")
    assert mentions(text) == {"my notes/plan draft.txt", "a b.md", "my notes/x y.txt",
                              "plain.py", "don't.txt"}


def test_the_picker_follows_a_path_with_spaces_being_typed() -> None:
    for typed, query in (('@"my no', "my no"), ("@my\\ no", "my no"), ("@'my no", "my no"),
                         ("@my\\", "my"), ("@src/ap", "src/ap")):
        line = f"read {typed}"
        span = span_at(line, 0, len(line))
        assert span is not None and span.kind is MenuKind.FILE, typed
        assert (span.query, span.start, span.end) == (query, 5, len(line)), typed
    line = 'read @"my notes/plan draft.txt" now'  # the cursor inside a quoted mention
    span = span_at(line, 0, 12)
    assert span is not None and (span.query, span.start, span.end) == ("my no", 5, 31)
    assert span_at('read @"done" ', 0, 12) is None  # after its closing quote


def _app(ws: Path):
    make, made = fake_factory([], workspace=ws)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, workspace=ws), made


async def _type(pilot, text: str) -> None:
    keys = {" ": "space", "@": "@", "/": "slash", "\\": "backslash", '"': "quotation_mark"}
    await pilot.press(*[keys.get(c, c) for c in text])


def _items(app) -> list[str]:
    return [i.value for i in app.suggestions.items] if app.suggestions.is_open else []


@pytest.mark.asyncio
async def test_the_picker_attaches_a_path_with_spaces_escaped(ws: Path) -> None:
    app, made = _app(ws)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _type(pilot, "read @plan")
        await wait_until(pilot, lambda: _items(app)[:1] == ["my notes/plan draft.txt"],
                         what="the file")
        await pilot.press("enter")
        await pilot.pause()
        assert app.prompt.text == "read @my\\ notes/plan\\ draft.txt "
        assert [i.path for i in app.attachment_bar.items] == ["my notes/plan draft.txt"]
        await _type(pilot, "now")
        await pilot.press("enter")
        await pilot.pause()
        (op,) = made[0].ops
        assert op.text == "read @my\\ notes/plan\\ draft.txt now" + SENT_FILE


@pytest.mark.asyncio
async def test_tab_goes_into_a_folder_with_a_space_and_a_quoted_mention_is_found(ws: Path) -> None:
    app, made = _app(ws)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _type(pilot, "@")
        await wait_until(pilot, lambda: _items(app)[:1] == ["my notes/"], what="the folder")
        await pilot.press("tab")  # into it
        await pilot.pause()
        assert app.prompt.text == "@my\\ notes/"
        await wait_until(pilot, lambda: _items(app) == ["my notes/plan draft.txt"],
                         what="its entries")
        await pilot.press("enter")
        await pilot.pause()
        assert app.prompt.text == "@my\\ notes/plan\\ draft.txt "
        app.prompt.text = ""
        await _type(pilot, '@"my notes/')  # typed quoted: the picker follows
        await wait_until(pilot, lambda: _items(app) == ["my notes/plan draft.txt"],
                         what="the entries again")
        await pilot.press("enter")
        await pilot.pause()
        assert app.prompt.text == "@my\\ notes/plan\\ draft.txt "
        # Written quoted by hand instead, the mention still names the attached file.
        app.prompt.text = 'read @"my notes/plan draft.txt"'
        await pilot.pause()
        assert [i.path for i in app.attachment_bar.items] == ["my notes/plan draft.txt"]
        await pilot.press("enter")
        await pilot.pause()
        (op,) = made[0].ops
        assert op.text == 'read @"my notes/plan draft.txt"' + SENT_FILE
