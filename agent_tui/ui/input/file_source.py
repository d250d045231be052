"""The ``@`` picker's items: the workspace's files, searched as the user types, and a
folder's entries when what is typed ends with ``/``; the MCP servers' resources
(``@server:uri``, ``ui/input/mcp_offers.py``) that match come first.

The file list is made once in the background (``ui/input/file_index.py``) and again each
time the picker opens after a pause, so new files show; a search runs on a thread and
answers on the UI's, and a newer query or a closed menu stops the one before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from rich.text import Text

from agent_tui.ui.input.attachments import Attachment, AttachmentRefused, check, mention
from agent_tui.ui.input.completion import Accepted, ShowFn
from agent_tui.ui.input.file_index import FileIndex, Found
from agent_tui.ui.input.mcp_offers import ResourceItem
from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.widgets.suggestions import Suggestion

RELIST_AFTER = 10.0  # seconds: a picker opened later than this lists the files again
WAIT_FOR_LISTING = 5.0  # a search over a partial listing is done again when it ends


def found_prompt(found: Found) -> Text:
    line = Text(no_wrap=True, overflow="ellipsis")
    path = clean(found.path)
    marks = set(found.positions)
    for i, ch in enumerate(path):
        line.append(ch, style="bold underline" if i in marks else ("bold" if path.endswith("/") else ""))
    return line


class FileSource:
    def __init__(self, root: Callable[[], Path], on_ui: Callable[[Callable[[], None]], None],
                 attach: Callable[[Attachment], None], refuse: Callable[[str], None],
                 resources: Callable[[str], list[Suggestion]] = lambda _q: []) -> None:
        self._root = root
        self._resources = resources
        self._on_ui = on_ui  # runs a function on the UI's thread (from another)
        self._attach = attach
        self._refuse = refuse
        self.index: FileIndex | None = None
        self._listed_at = 0.0
        self._search_stop = threading.Event()

    @property
    def title(self) -> str:
        try:
            what = "files and MCP resources" if self._resources("") else "files"
        except Exception:  # noqa: BLE001 - the files are still listed
            what = "files"
        if self.index is not None and not self.index.respects_gitignore:
            return f"{what} (ripgrep not found: .gitignore is not read)"
        return what

    def _index(self) -> FileIndex:
        root = self._root()
        now = time.monotonic()
        if self.index is None or Path(self.index.root) != root:
            self.index = FileIndex(root)
            self.index.refresh()
            self._listed_at = now
        elif not self.index.listing and (not self.index.complete or now - self._listed_at > RELIST_AFTER):
            self.index.refresh()
            self._listed_at = now
        return self.index

    def listing(self, folder: str) -> list[str]:
        return self._index().folder(folder)

    def search(self, query: str, show: ShowFn) -> None:
        index = self._index()
        self._search_stop.set()
        stop = self._search_stop = threading.Event()

        def answer(items: list[Suggestion], empty: str) -> None:
            if not stop.is_set():
                self._on_ui(lambda: show(items, empty, query=query))

        def run() -> None:
            if not index.complete:
                index.wait_for(1, 0.1)  # the first paths arrive within milliseconds
            answer(*self._items(index, query))
            if not index.complete and not stop.is_set():
                index.wait(WAIT_FOR_LISTING)
                if not stop.is_set():
                    answer(*self._items(index, query))

        threading.Thread(target=run, name="agent-tui-file-search", daemon=True).start()

    def _items(self, index: FileIndex, query: str) -> tuple[list[Suggestion], str]:
        try:
            offered = self._resources(query)
        except Exception:  # noqa: BLE001 - the files are still listed
            offered = []
        items, empty = self._file_items(index, query)
        return offered + items, empty

    def _file_items(self, index: FileIndex, query: str) -> tuple[list[Suggestion], str]:
        if query == "" or query.endswith("/"):
            entries = index.folder(query) if query else index.folder("")
            if entries or query:
                items = [Suggestion(e, found_prompt(Found(e, ())), e) for e in entries[:200]]
                return items, f"no files in {clean(query)}" if query else "no files here"
        found = index.search(query, cancelled=self._search_stop)
        items = [Suggestion(f.path, found_prompt(f), f.path) for f in found]
        state = "" if index.complete else " (still listing files…)"
        return items, f"no file matches @{clean(query)}{state}"

    def accept(self, item: Suggestion, *, enter: bool) -> Accepted:
        if isinstance(item.data, ResourceItem):  # read when the message is sent
            return Accepted(f"{mention(item.value)} ")
        path: str = item.data
        if path.endswith("/") and not enter:
            return Accepted(mention(path))  # Tab on a folder: into it
        try:
            attachment = check(self._root(), path, self.listing)
        except AttachmentRefused as exc:
            self._refuse(str(exc))
            return Accepted(f"{mention(path)} ")
        self._attach(attachment)
        return Accepted(f"{mention(path)} ")

    def cancel(self) -> None:
        """The picker closed: stop the search, and a listing still running (the next
        ``@`` lists again)."""
        self._search_stop.set()
        if self.index is not None and self.index.listing:
            self.index.cancel()
