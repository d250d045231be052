"""The "what changed since I last looked" helper: by stat, then by content."""

from __future__ import annotations

import os
from pathlib import Path

from agent_tui.runtime.file_watch import FileWatch


def _touch_later(path: Path) -> None:
    ns = path.stat().st_mtime_ns + 2_000_000_000
    os.utime(path, ns=(ns, ns))


def test_added_changed_and_removed_files_are_told_and_a_save_without_change_is_not(tmp_path: Path) -> None:
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text("one")
    watch = FileWatch(lambda: sorted(tmp_path.glob("*.md")))
    assert not watch.look()  # the first look records
    _touch_later(a)  # saved again, same content
    assert not watch.look()
    a.write_text("two")
    _touch_later(a)
    b.write_text("new")
    changes = watch.look()
    assert (changes.changed, changes.added, changes.removed) == ([a], [b], [])
    a.unlink()
    changes = watch.look()
    assert changes.removed == [a] and changes.count == 1
    assert not watch.look()
