"""What changed in some files since the last look: by stat first, by content hash
when the stat moved (a file saved again unchanged is no change).

The caller says which files to look at (a function: a folder's listing may change);
each :meth:`FileWatch.look` costs a stat per file, and a read only of a file whose
mtime or size moved. Nothing is polled: the caller looks when it is about to use
what the files say (a menu opening, a turn starting).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, Field

from agent_tui.config_file import read_config


class Stamp(NamedTuple):
    mtime_ns: int
    size: int
    digest: str


class Changes(BaseModel):
    """Files added, changed (content) and removed since the last look."""

    added: list[Path] = Field(default_factory=list)
    changed: list[Path] = Field(default_factory=list)
    removed: list[Path] = Field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    @property
    def count(self) -> int:
        return len(self.added) + len(self.changed) + len(self.removed)


def content_digest(path: Path) -> str:
    """The whole file's content, as a digest (what counts as a change by default). Read
    bounded (``config_file.py``): a FIFO, a device or a huge file raises, and the watch
    takes it as not there, never waiting on it."""
    return hashlib.sha256(read_config(path)).hexdigest()


class FileWatch:
    """The files ``files()`` names, as they were at the last :meth:`look`."""

    def __init__(self, files: Callable[[], Iterable[Path]], *,
                 digest: Callable[[Path], str] = content_digest) -> None:
        """``digest``: what of a file counts (default its whole content; a file of which
        only some parts are read may say only those)."""
        self._files = files
        self._digest = digest
        self._seen: dict[Path, Stamp] = {}
        self._looked = False

    def look(self) -> Changes:
        """What changed since the last look (the first look records, and says nothing)."""
        seen: dict[Path, Stamp] = {}
        changes = Changes()
        try:
            paths = list(self._files())
        except OSError:
            paths = list(self._seen)  # an unreadable folder: look at the files known
        for path in paths:
            try:
                st = path.stat()
                before = self._seen.get(path)
                if before is not None and (before.mtime_ns, before.size) == (st.st_mtime_ns, st.st_size):
                    seen[path] = before
                    continue
                seen[path] = Stamp(st.st_mtime_ns, st.st_size, self._digest(path))
            except OSError:
                continue  # gone between the listing and the stat: removed
            if before is None:
                changes.added.append(path)
            elif before.digest != seen[path].digest:
                changes.changed.append(path)
        changes.removed = [p for p in self._seen if p not in seen]
        self._seen = seen
        if not self._looked:
            self._looked = True
            return Changes()
        return changes
