"""The @ picker's folder listings over the sorted paths, and a long menu laid out in
two steps (the first screenful first) that still holds every item."""

from __future__ import annotations

import os
import re

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402
from rich.text import Text  # noqa: E402
from textual.app import App  # noqa: E402

from agent_tui.ui.input.file_index import FileIndex  # noqa: E402
from agent_tui.ui.widgets.suggestions import Suggestion, SuggestionList  # noqa: E402

PATHS = ["a/x", "a.b", "a-c/y", "a/z/w", "a0", "ab/c", "a/z/v", "b", "a/x.py", "ab.txt",
         "a/zz", "a/z.d/e", "c/d/e/f", "a/ä/x"]


def _reference(paths: list[str], prefix: str) -> list[str]:
    """The folder listing as a regular expression over every path reads it."""
    blob = "\n".join(paths)
    found = set(re.findall(r"^" + re.escape(prefix) + r"([^/\n]+)(/?)", blob, re.MULTILINE))
    return (sorted(prefix + n + "/" for n, s in found if s)
            + sorted(prefix + n for n, s in found if not s))


@pytest.mark.parametrize("prefix", ["", "a/", "a/z/", "ab/", "c/", "c/d/", "nothing/"])
def test_a_folder_lists_its_folders_then_its_files_each_once(prefix: str) -> None:
    index = FileIndex("/")
    index._publish(index._stop, list(PATHS), done=True)
    assert index.folder(prefix) == _reference(PATHS, prefix)


@pytest.mark.asyncio
async def test_a_long_menu_holds_every_item_once_painted() -> None:
    class Host(App[None]):
        def compose(self):
            yield SuggestionList(id="menu")

    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        menu = app.query_one(SuggestionList)
        items = [Suggestion(f"item{i}", Text(f"item{i}")) for i in range(40)]
        menu.show(items, title="files", empty="none")
        assert menu.option_count == SuggestionList.FIRST  # the first screenful first
        await pilot.pause()
        await pilot.pause()
        assert menu.option_count == 40
        menu.move(100)
        assert menu.current is not None and menu.current.value == "item39"
        menu.show(items[:3], title="files", empty="none")
        await pilot.pause()
        assert menu.option_count == 3  # a later show drops what was still to come
