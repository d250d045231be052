"""The custom commands of a session, read again when their files change.

:class:`CommandSet` looks at the command folders' files (``runtime/file_watch.py``: a
stat each, a read only of a file that moved) each time it is asked, which is when
the menu opens or a ``/name`` is run, never on a timer. When something changed it
reads them all again and says so once ("custom commands changed: N reloaded"); a
file an edit broke keeps its last good version, and the problem names the file (and
line).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from agent_tui.commands.files import MAX_FILES, CommandFile, LoadedCommands, command_dirs, load_commands
from agent_tui.runtime.file_watch import FileWatch


class CommandSet:
    """One workspace's custom commands, as of the last look at their files."""

    def __init__(self, workspace: Path, user_dir: Path | None = None,
                 claude_dir: Path | None = None, taken: frozenset[str] = frozenset()) -> None:
        self.workspace = Path(workspace)
        self._dirs = (user_dir, claude_dir)
        self.taken = taken
        self._watch = FileWatch(self._files)
        self._loaded: LoadedCommands | None = None
        self._good: dict[str, CommandFile] = {}  # by file: its last version that read

    def _files(self) -> Iterator[Path]:
        for _scope, folder in command_dirs(self.workspace, *self._dirs):
            if folder.is_dir():
                yield from sorted(folder.rglob("*.md"))[:MAX_FILES]

    def current(self) -> tuple[LoadedCommands, str | None]:
        """The commands, and a notice when their files changed since the last call."""
        changes = self._watch.look()
        if self._loaded is not None and not changes:
            return self._loaded, None
        first = self._loaded is None
        self._loaded = load_commands(self.workspace, *self._dirs, taken=self.taken,
                                     last_good=self._good)
        self._good = {c.source: c for c in self._loaded.commands}
        if first:
            return self._loaded, None
        return self._loaded, f"custom commands changed: {changes.count} reloaded"
