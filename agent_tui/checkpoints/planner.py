"""Planning a rewind: from what a checkpoint holds and what the workspace holds now, the
file changes that take the workspace back, and what cannot be taken back.

:func:`plan_rewind` is pure: it reads the snapshots and the files through the two
read-only ports it is handed (:class:`SnapshotReader`, which the shadow repository is,
and :class:`FileReader`), writes nothing and returns a :class:`Plan`. The manager
previews that plan or carries it out.

Which source decides a file's old content:

- the checkpoint's **snapshot**, for every file it could hold (not ignored, under the
  size cap, outside nested repositories): a file it lacks did not exist then, even if
  a file tool saved a pre-image of it later (a command may have created it first);
- a file tool's **pre-image**, for the rest: files the snapshot could not hold, and
  all files when the checkpoint has no snapshot.

A planned file is a *conflict* when the agent wrote it last and its content has
changed since: someone else edited it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from agent_tui.checkpoints import wording
from agent_tui.checkpoints.disk import DiskState, count_lines
from agent_tui.checkpoints.models import ChangeKind, FileChange
from agent_tui.checkpoints.shadow import Entry, ShadowError
from agent_tui.checkpoints.store import BlobMissing


class SnapshotReader(Protocol):
    """Read access to the snapshots (``ShadowRepo``); each may raise ``ShadowError``."""

    def entries(self, tree: str) -> dict[str, Entry]: ...

    def numstat(self, a: str, b: str) -> dict[str, tuple[int, int] | None]: ...

    def read_blobs(self, shas: list[str]) -> dict[str, bytes]: ...

    def ignored_under(self, tree: str, paths: list[str]) -> set[str]: ...


class FileReader(Protocol):
    """Read access to the workspace's files and the saved pre-images."""

    def state(self, path: str) -> DiskState: ...

    def pre_image(self, digest: str) -> bytes:
        """The saved content; raises ``BlobMissing`` when it is gone or damaged."""
        ...


@dataclass(frozen=True)
class RewindFacts:
    """What the planner decides from, besides the file contents it reads."""

    then_tree: str | None  # the checkpoint's snapshot; None: it has none
    then_skipped_large: tuple[str, ...] = ()
    then_nested: tuple[str, ...] = ()
    now_tree: str | None = None  # a snapshot of the workspace now; None: none could be had
    now_skipped_large: tuple[str, ...] = ()
    # per path, the earliest file-tool pre-image since the checkpoint (None: was absent)
    pre_images: Mapping[str, str | None] = field(default_factory=dict)
    outside: tuple[str, ...] = ()  # files written outside the workspace since
    written: Mapping[str, str] = field(default_factory=dict)  # what the agent left last
    where: str = "the workspace"  # the folder planned, as the user is told


@dataclass(frozen=True)
class PlannedChange:
    change: FileChange
    current: DiskState
    entry: Entry | None = None  # restore from this snapshot blob ...
    pre_image: str | None = None  # ... or from this pre-image (blob-store digest)
    # neither: the file is deleted

    @property
    def path(self) -> str:
        return self.change.path


@dataclass(frozen=True)
class Plan:
    items: tuple[PlannedChange, ...]  # sorted by path
    warnings: tuple[str, ...] = ()
    not_undoable: tuple[str, ...] = ()

    @property
    def changes(self) -> list[FileChange]:
        return [item.change for item in self.items]


def plan_rewind(
    facts: RewindFacts, files: FileReader, snapshots: SnapshotReader | None
) -> Plan:
    """The changes that take the workspace back to the checkpoint ``facts`` describe."""
    return _Planning(facts, files, snapshots).run()


class _Planning:
    """One planning pass; its fields fill as the sources are read."""

    def __init__(
        self, facts: RewindFacts, files: FileReader, snapshots: SnapshotReader | None
    ) -> None:
        self.facts = facts
        self.files = files
        self.snapshots = snapshots
        self.planned: dict[str, PlannedChange] = {}
        self.governed: set[str] = set()  # paths whose old state the snapshot decides
        self.warnings: list[str] = []
        self.not_undoable: list[str] = []

    def run(self) -> Plan:
        facts = self.facts
        tree_ok = False
        if facts.then_tree is not None and self.snapshots is not None:
            try:
                self._from_snapshot(facts.then_tree, self.snapshots)
                tree_ok = True
            except ShadowError as exc:
                self.planned.clear()
                self.governed.clear()
                self.warnings.append(wording.snapshot_unreadable(exc))
        if not tree_ok:
            self.not_undoable.append(wording.not_snapshotted(facts.where))
        if tree_ok:
            assert facts.then_tree is not None and self.snapshots is not None
            self._govern_absent(facts.then_tree, self.snapshots)
        for path, digest in facts.pre_images.items():
            if path in self.planned or path in self.governed:
                continue
            item = self._from_pre_image(path, digest)
            if item is not None:
                self.planned[path] = item
        for path in facts.outside:
            note = wording.outside(path)
            if note not in self.not_undoable:
                self.not_undoable.append(note)
        # conflicts: the agent's last write is no longer what is there
        for item in self.planned.values():
            written = facts.written.get(item.path)
            if written is not None and written != item.current.fingerprint():
                item.change.conflict = True
        return Plan(
            items=tuple(self.planned[p] for p in sorted(self.planned)),
            warnings=tuple(self.warnings),
            not_undoable=tuple(self.not_undoable),
        )

    # -- the snapshot's word ---------------------------------------------------------------

    def _from_snapshot(self, then_tree: str, snapshots: SnapshotReader) -> None:
        facts = self.facts
        old = snapshots.entries(then_tree)
        self.governed.update(p for p, e in old.items() if not e.is_gitlink)
        if facts.then_skipped_large:
            self.not_undoable.append(wording.large_then(facts.then_skipped_large))
        if facts.then_nested:
            self.not_undoable.append(wording.nested_then(facts.then_nested))
        if facts.now_tree is None:
            self._without_snapshot_now(old, snapshots)
            return
        new = snapshots.entries(facts.now_tree)
        stats = snapshots.numstat(facts.now_tree, then_tree)
        skipped_then = set(facts.then_skipped_large)
        need_lines: list[PlannedChange] = []
        to_delete: list[str] = []
        for path in sorted(set(old) | set(new)):
            o, n = old.get(path), new.get(path)
            if o == n or (o is not None and o.is_gitlink) or (n is not None and n.is_gitlink):
                continue
            if o is not None and n is not None:
                change = FileChange(path=path, kind=ChangeKind.MODIFIED)
                _set_lines(change, stats.get(path))
                self.planned[path] = PlannedChange(change, self.files.state(path), entry=o)
            elif o is not None:
                # not in today's snapshot: gone, or present but ignored/over the cap now
                current = self.files.state(path)
                if _same(current, o):
                    continue
                if current.exists:
                    change = FileChange(path=path, kind=ChangeKind.MODIFIED)
                    item = PlannedChange(change, current, entry=o)
                    need_lines.append(item)
                else:
                    change = FileChange(path=path, kind=ChangeKind.ADDED)
                    _set_lines(change, stats.get(path))
                    item = PlannedChange(change, current, entry=o)
                self.planned[path] = item
            elif path not in skipped_then:  # over the cap then: existed, never snapshotted
                to_delete.append(path)
        if to_delete and _gitignores(old) != _gitignores(new):
            # the ignore rules changed: a file ignored at the checkpoint was never in its
            # snapshot, yet existed; never delete it as if it were new
            kept = snapshots.ignored_under(then_tree, to_delete)
            if kept:
                self.warnings.append(wording.kept_ignored(sorted(kept)))
                to_delete = [p for p in to_delete if p not in kept]
        for path in to_delete:
            change = FileChange(path=path, kind=ChangeKind.DELETED)
            _set_lines(change, stats.get(path))
            self.planned[path] = PlannedChange(change, self.files.state(path))
            self.governed.add(path)
        new_large = [
            p for p in facts.now_skipped_large if p not in old and p not in skipped_then
        ]
        if new_large:
            self.not_undoable.append(wording.large_since(new_large))
        self._fill_lines(need_lines, snapshots)

    def _without_snapshot_now(self, old: dict[str, Entry], snapshots: SnapshotReader) -> None:
        self.warnings.append(wording.NO_SNAPSHOT_NOW)
        need_lines: list[PlannedChange] = []
        for path, entry in old.items():
            if entry.is_gitlink:
                continue
            current = self.files.state(path)
            if _same(current, entry):
                continue
            kind = ChangeKind.MODIFIED if current.exists else ChangeKind.ADDED
            item = PlannedChange(FileChange(path=path, kind=kind), current, entry=entry)
            self.planned[path] = item
            need_lines.append(item)
        self._fill_lines(need_lines, snapshots)

    def _govern_absent(self, then_tree: str, snapshots: SnapshotReader) -> None:
        """Pre-images of files the snapshot says did not exist at the checkpoint.

        A file-tool pre-image holds what was there when the tool wrote, which is not
        the checkpoint's content if a command created the file after the checkpoint.
        Unless the snapshot could not have held the file (over the cap, ignored then,
        inside a nested repository), the snapshot's word wins: it did not exist.
        """
        facts = self.facts
        nested = facts.then_nested or ("\0",)
        candidates = [
            p for p, digest in facts.pre_images.items()
            if digest is not None and p not in self.planned and p not in self.governed
            and p not in facts.then_skipped_large and not p.startswith(nested)
        ]
        if not candidates:
            return
        ignored = snapshots.ignored_under(then_tree, candidates)
        for path in candidates:
            if path in ignored:
                continue
            self.governed.add(path)
            current = self.files.state(path)
            if current.exists:
                change = FileChange(path=path, kind=ChangeKind.DELETED)
                now_bytes = current.data if current.kind == "file" else None
                _set_lines(change, count_lines(now_bytes, None))
                self.planned[path] = PlannedChange(change, current)

    def _fill_lines(self, items: list[PlannedChange], snapshots: SnapshotReader) -> None:
        if not items:
            return
        blobs = snapshots.read_blobs([i.entry.sha for i in items if i.entry])
        for item in items:
            assert item.entry is not None
            target = blobs[item.entry.sha]
            current = item.current.data if item.current.kind in ("file", "link") else None
            lines = None if item.entry.is_link else count_lines(current, target)
            _set_lines(item.change, lines)

    # -- the pre-images' word --------------------------------------------------------------

    def _from_pre_image(self, path: str, digest: str | None) -> PlannedChange | None:
        current = self.files.state(path)
        now_bytes = current.data if current.kind == "file" else None
        if digest is None:
            if not current.exists:
                return None
            change = FileChange(path=path, kind=ChangeKind.DELETED, source="pre_image")
            _set_lines(change, count_lines(now_bytes, None))
            return PlannedChange(change, current)
        try:
            old = self.files.pre_image(digest)
        except BlobMissing:
            self.warnings.append(wording.pre_image_missing(path))
            return None
        if current.kind == "file" and current.data == old:
            return None
        kind = ChangeKind.MODIFIED if current.exists else ChangeKind.ADDED
        change = FileChange(path=path, kind=kind, source="pre_image")
        _set_lines(change, count_lines(now_bytes, old))
        return PlannedChange(change, current, pre_image=digest)


def _same(current: DiskState, entry: Entry) -> bool:
    if entry.is_link:
        return current.kind == "link" and current.git_sha() == entry.sha
    return current.kind == "file" and current.git_sha() == entry.sha


def _set_lines(change: FileChange, lines: tuple[int, int] | None) -> None:
    if isinstance(lines, tuple):
        change.lines_added, change.lines_removed = lines
    else:
        change.binary = True


def _gitignores(entries: dict[str, Entry]) -> dict[str, str]:
    return {
        p: e.sha for p, e in entries.items() if p == ".gitignore" or p.endswith("/.gitignore")
    }

