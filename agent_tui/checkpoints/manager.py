"""Checkpoints of a workspace and rewinds to them.

A checkpoint is taken at every user message. It holds two things:

- a **snapshot** of the workspace in the shadow repository (``shadow.py``): every file
  not ignored by ``.gitignore`` and under the size cap, whoever changed it (file tools,
  shell commands, the user);
- the **pre-images** the file tools hand over right before each write
  (``record_pre_image``), kept in the blob store (``store.py``). They cover what the
  snapshot cannot: ignored files, files over the cap, workspaces too large (or without
  git) to snapshot at all.

``plan`` previews a rewind, ``restore`` performs it. A restore first takes a checkpoint
of the current state (so the rewind itself can be rewound), then writes back the
checkpoint's content. A file the agent wrote whose content changed since (someone else
edited it) is a *conflict*: reported, and left alone unless the caller says to
overwrite it. Old checkpoints are pruned by count and by a size budget, with a notice.

Everything here is synchronous and bounded (git runs with a timeout); one lock guards
the state, so the file tools' hook may be called from any thread.
"""

from __future__ import annotations

import os
import secrets
import shutil
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field

from agent_tui.checkpoints import disk
from agent_tui.checkpoints.disk import ABSENT, DiskState, count_lines, read_state
from agent_tui.checkpoints.models import (
    ChangeKind,
    CheckpointInfo,
    FileChange,
    RestoreReport,
    RewindPlan,
    SnapshotScope,
)
from agent_tui.checkpoints.shadow import (
    GIT_TIMEOUT,
    Entry,
    ShadowError,
    ShadowRepo,
    SnapshotTooLarge,
    user_excludes_file,
)
from agent_tui.checkpoints.store import BlobMissing, BlobStore
from agent_tui.paths import folder_bytes, private_dir

DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024
DEFAULT_MAX_FILES = 20_000
DEFAULT_MAX_CHECKPOINTS = 100
DEFAULT_BUDGET_BYTES = 512 * 1024 * 1024

_META = "checkpoints.json"
_TMP_PATTERN = ".agent-tui.*.tmp"  # the file tools' and our own temporary files


class UnknownCheckpoint(KeyError):
    pass


class _Record(BaseModel):
    id: str
    label: str
    time: datetime
    seq: int
    tree: str | None = None  # the workspace snapshot; None: file-tool pre-images only
    commit: str | None = None
    warnings: list[str] = Field(default_factory=list)
    skipped_large: list[str] = Field(default_factory=list)
    nested_repos: list[str] = Field(default_factory=list)
    # pre-images of file-tool writes after this checkpoint (the first write per path):
    # blob-store digest, or None when the file did not exist
    pre_images: dict[str, str | None] = Field(default_factory=dict)
    outside: list[str] = Field(default_factory=list)  # writes outside the workspace

    @property
    def ref(self) -> str:
        return f"refs/checkpoints/{self.seq}"

    def info(self, notices: list[str] | None = None) -> CheckpointInfo:
        return CheckpointInfo(
            id=self.id,
            label=self.label,
            time=self.time,
            scope=SnapshotScope.WORKSPACE if self.tree else SnapshotScope.FILE_TOOLS_ONLY,
            warnings=list(self.warnings),
            notices=list(notices or []),
        )


class _Meta(BaseModel):
    version: int = 1
    next_seq: int = 1
    records: list[_Record] = Field(default_factory=list)
    # path -> fingerprint of what the agent last left there (sha256, or "absent")
    written: dict[str, str] = Field(default_factory=dict)


@dataclass
class _Planned:
    change: FileChange
    current: DiskState
    entry: Entry | None = None  # restore from this snapshot blob ...
    pre_image: str | None = None  # ... or from this pre-image (blob-store digest)
    # neither: the file is deleted

    @property
    def path(self) -> str:
        return self.change.path


@dataclass
class _Now:
    tree: str | None = None
    skipped_large: list[str] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class Checkpoints:
    def __init__(
        self,
        state_dir: Path,
        workspace: Path,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_files: int = DEFAULT_MAX_FILES,
        max_checkpoints: int = DEFAULT_MAX_CHECKPOINTS,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        git: str | None = "git",
        git_timeout: float = GIT_TIMEOUT,
    ) -> None:
        self.state_dir = private_dir(Path(os.path.abspath(state_dir)))
        self.workspace = Path(os.path.realpath(workspace))
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.max_checkpoints = max(1, max_checkpoints)
        self.budget_bytes = budget_bytes
        self._lock = threading.RLock()
        self._blobs = BlobStore(self.state_dir / "blobs")
        self._meta_path = self.state_dir / _META
        self._pending_warnings: list[str] = []
        self._meta = self._load()
        git_path = shutil.which(git) if git else None
        self._shadow: ShadowRepo | None = None
        if git_path is None:
            self._no_git = "git is not installed" if git else "snapshots are turned off"
        else:
            self._no_git = ""
            self._shadow = ShadowRepo(
                self.state_dir / "shadow.git",
                self.workspace,
                git=git_path,
                timeout=git_timeout,
                excludes_file=user_excludes_file(git_path),
            )

    # -- public API ----------------------------------------------------------------------

    def take(self, label: str, checkpoint_id: str | None = None) -> CheckpointInfo:
        """A checkpoint at a user message: snapshot the workspace and record it."""
        with self._lock:
            return self._take(label, checkpoint_id, protect=set())

    def record_pre_image(self, path: Path, old: bytes | None) -> None:
        """The file tools' hook, right before a write: keep the old content.

        ``old`` is None when the file did not exist. Only the first pre-image of a path
        after a checkpoint matters (that is the content at the checkpoint). Raises if the
        pre-image cannot be saved durably, so the tool does not write.
        """
        with self._lock:
            if not self._meta.records:
                return  # no checkpoint to rewind to yet
            latest = self._meta.records[-1]
            rel = self._relative(path)
            if rel is None:
                shown = str(path)
                if shown not in latest.outside:
                    latest.outside.append(shown)
                    self._save()
                return
            if rel in latest.pre_images:
                return
            latest.pre_images[rel] = None if old is None else self._blobs.put(old)
            self._save()

    def record_written(self, path: Path, new: bytes | None) -> None:
        """After a file tool wrote ``new`` to ``path``: what the agent left there.

        A later rewind treats the file as a conflict if its content is no longer this.
        """
        with self._lock:
            rel = self._relative(path)
            if rel is None:
                return
            self._meta.written[rel] = disk.fingerprint_bytes(new)
            self._save()

    def command_started(self) -> str | None:
        """Before an agent's shell command: returns a token for ``command_finished``.

        Optional. With it, what a command changes counts as the agent's doing, so a
        file the agent wrote and then changed with ``sed`` is not a conflict, and a file
        a command wrote but the user changed afterwards is one. Costs one snapshot.
        """
        with self._lock:
            return self._snapshot_now().tree

    def command_finished(self, token: str | None) -> None:
        """After the command: record what it left in every file it changed."""
        if token is None or self._shadow is None:
            return
        with self._lock:
            after = self._snapshot_now().tree
            if after is None:
                return
            try:
                old, new = self._entries(token), self._entries(after)
            except ShadowError:
                return  # the token's objects were pruned meanwhile
            changed = [p for p in set(old) | set(new) if old.get(p) != new.get(p)]
            for path in changed:
                self._meta.written[path] = read_state(self.workspace, path).fingerprint()
            if changed:
                self._save()

    def plan(self, checkpoint_id: str, extra_not_undoable: Iterable[str] = ()) -> RewindPlan:
        """What a rewind to ``checkpoint_id`` would change (nothing is changed)."""
        with self._lock:
            rec = self._record(checkpoint_id)
            now = self._snapshot_now()
            planned, warnings, not_undoable = self._compute(rec, now)
            return RewindPlan(
                checkpoint_id=rec.id,
                label=rec.label,
                time=rec.time,
                changes=[p.change for p in planned],
                not_undoable=not_undoable + list(extra_not_undoable),
                warnings=now.warnings + warnings,
            )

    def restore(
        self,
        checkpoint_id: str,
        *,
        overwrite_conflicts: bool = False,
        extra_not_undoable: Iterable[str] = (),
    ) -> RestoreReport:
        """Rewind the workspace's files to ``checkpoint_id``.

        Takes a checkpoint of the current state first (``undo_checkpoint_id``: restore
        to it to undo this rewind). Conflicting files are skipped unless
        ``overwrite_conflicts``.
        """
        with self._lock:
            rec = self._record(checkpoint_id)
            undo_info = self._take(
                f"before rewind to “{rec.label}”", None, protect={rec.id}
            )
            undo = self._record(undo_info.id)
            now = _Now(tree=undo.tree, skipped_large=undo.skipped_large)
            planned, warnings, not_undoable = self._compute(rec, now)
            covered = self._entries(undo.tree) if undo.tree else {}
            report = RestoreReport(
                checkpoint_id=rec.id,
                undo_checkpoint_id=undo.id,
                not_undoable=not_undoable + list(extra_not_undoable),
                warnings=list(undo.warnings) + warnings,
                notices=undo_info.notices,
            )
            keep_dirs = self._folders_of(rec)
            # deletions first: a folder may have to go before a file takes its name
            order = sorted(planned, key=lambda p: p.change.kind != ChangeKind.DELETED)
            for item in order:
                if item.change.conflict and not overwrite_conflicts:
                    report.skipped_conflicts.append(item.change)
                    continue
                try:
                    self._apply(item, undo, covered, keep_dirs)
                except (OSError, ShadowError, BlobMissing) as exc:
                    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                    report.errors.append(f"{item.path}: {reason}")
                    continue
                report.restored.append(item.change)
            self._save()
            return report

    def list(self) -> list[CheckpointInfo]:
        with self._lock:
            return [r.info() for r in self._meta.records]

    def get(self, checkpoint_id: str) -> CheckpointInfo:
        with self._lock:
            return self._record(checkpoint_id).info()

    def usage_bytes(self) -> int:
        """Bytes the checkpoints take on disk (snapshots, pre-images, records)."""
        return folder_bytes(self.state_dir)

    # -- taking ----------------------------------------------------------------------------

    def _take(self, label: str, checkpoint_id: str | None, protect: set[str]) -> CheckpointInfo:
        cid = checkpoint_id or f"cp-{int(time.time() * 1000):x}-{secrets.token_hex(3)}"
        if any(r.id == cid for r in self._meta.records):
            raise ValueError(f"a checkpoint with id {cid!r} exists already")
        rec = _Record(id=cid, label=label, time=datetime.now(timezone.utc), seq=self._meta.next_seq)
        self._meta.next_seq += 1
        rec.warnings = self._pending_warnings
        self._pending_warnings = []
        now = self._snapshot_now()
        rec.warnings += now.warnings
        rec.skipped_large = now.skipped_large
        if now.tree is not None and self._shadow is not None:
            try:
                rec.commit = self._shadow.commit(now.tree, f"{label}\n\ncheckpoint {cid}\n", rec.ref)
                rec.tree = now.tree
                rec.nested_repos = now.nested
            except ShadowError as exc:
                rec.warnings.append(self._fallback_warning(f"could not record the snapshot: {exc}"))
        self._meta.records.append(rec)
        self._save()
        notices = self._enforce_retention(protect | {cid})
        self._save()
        return rec.info(notices)

    def _fallback_warning(self, why: str) -> str:
        return (
            f"{why}; changes made by shell commands cannot be rewound from this checkpoint, "
            "only write_file/edit_file edits are covered"
        )

    def _snapshot_now(self) -> _Now:
        now = _Now()
        if self._shadow is None:
            now.warnings.append(self._fallback_warning(f"no workspace snapshot ({self._no_git})"))
            return now
        try:
            self._shadow.ensure(self._exclude_lines())
            snap = self._shadow.snapshot(
                max_files=self.max_files, max_file_bytes=self.max_file_bytes
            )
        except SnapshotTooLarge as exc:
            now.warnings.append(
                f"workspace too large to snapshot: {exc.files} files over the cap of "
                f"{exc.cap}; only file-tool edits are covered from here"
            )
            return now
        except (ShadowError, OSError) as exc:
            now.warnings.append(self._fallback_warning(f"could not snapshot the workspace ({exc})"))
            return now
        now.tree = snap.tree
        now.skipped_large = snap.skipped_large
        now.nested = snap.nested_repos
        if snap.skipped_large:
            now.warnings.append(
                f"{_count(len(snap.skipped_large), 'file')} over {_size(self.max_file_bytes)} "
                f"not snapshotted ({_some(snap.skipped_large)}): only file-tool edits to "
                "them can be rewound"
            )
        if snap.nested_repos:
            now.warnings.append(
                f"nested git repositories not snapshotted ({_some(snap.nested_repos)}): "
                "changes inside them cannot be rewound"
            )
        if snap.unreadable:
            now.warnings.append(
                f"unreadable files not snapshotted ({_some(snap.unreadable)})"
            )
        return now

    def _exclude_lines(self) -> list[str]:
        lines = ["# written by agent-tui: the user's excludes and agent-tui's own files"]
        user_git = self.workspace / ".git"
        if user_git.is_dir():  # the user's repository is read, never written
            try:
                lines += (user_git / "info" / "exclude").read_text(errors="replace").splitlines()
            except OSError:
                pass
        lines.append(_TMP_PATTERN)
        state = Path(os.path.realpath(self.state_dir))
        if state == self.workspace or self.workspace in state.parents:
            rel = state.relative_to(self.workspace).as_posix() if state != self.workspace else ""
            lines.append("/" + _escape_pattern(rel) + "/" if rel else "/*")
        return lines

    # -- planning --------------------------------------------------------------------------

    def _compute(self, rec: _Record, now: _Now) -> tuple[list[_Planned], list[str], list[str]]:
        planned: dict[str, _Planned] = {}
        warnings: list[str] = []
        not_undoable: list[str] = []
        governed: set[str] = set()  # paths whose old state the snapshot decides
        tree_ok = False
        if rec.tree is not None and self._shadow is not None:
            try:
                self._plan_from_snapshot(rec, now, planned, governed, warnings, not_undoable)
                tree_ok = True
            except ShadowError as exc:
                planned.clear()
                governed.clear()
                warnings.append(f"the snapshot of this checkpoint cannot be read ({exc})")
        if not tree_ok:
            not_undoable.append(
                "changes made by shell commands since this checkpoint (the workspace was not "
                "snapshotted): only write_file/edit_file edits are undone"
            )
        pre_images = self._pre_images_since(rec)
        if tree_ok:
            self._govern_absent(rec, pre_images, planned, governed)
        for path, digest in pre_images.items():
            if path in planned or path in governed:
                continue
            item = self._plan_pre_image(path, digest, warnings)
            if item is not None:
                planned[path] = item
        for later in self._since(rec):
            for outside in later.outside:
                note = f"{outside}: written outside the workspace, not restored"
                if note not in not_undoable:
                    not_undoable.append(note)
        # conflicts: the agent's last write is no longer what is there
        for item in planned.values():
            written = self._meta.written.get(item.path)
            if written is not None and written != item.current.fingerprint():
                item.change.conflict = True
        return [planned[p] for p in sorted(planned)], warnings, not_undoable

    def _plan_from_snapshot(
        self,
        rec: _Record,
        now: _Now,
        planned: dict[str, _Planned],
        governed: set[str],
        warnings: list[str],
        not_undoable: list[str],
    ) -> None:
        assert rec.tree is not None
        old = self._entries(rec.tree)
        governed.update(p for p, e in old.items() if not e.is_gitlink)
        if rec.skipped_large:
            not_undoable.append(
                f"files over the size cap at this checkpoint ({_some(rec.skipped_large)}): "
                "only write_file/edit_file edits to them are undone"
            )
        if rec.nested_repos:
            not_undoable.append(
                f"nested git repositories ({_some(rec.nested_repos)}): not restored"
            )
        need_lines: list[_Planned] = []
        if now.tree is None:
            warnings.append(
                "the workspace cannot be snapshotted now, so files created since this "
                "checkpoint are not deleted (unless write_file created them)"
            )
            for path, entry in old.items():
                if entry.is_gitlink:
                    continue
                current = read_state(self.workspace, path)
                if _same(current, entry):
                    continue
                kind = ChangeKind.MODIFIED if current.exists else ChangeKind.ADDED
                item = _Planned(FileChange(path=path, kind=kind), current, entry=entry)
                planned[path] = item
                need_lines.append(item)
            self._fill_lines(need_lines)
            return
        new = self._entries(now.tree)
        stats = self._shadow.numstat(now.tree, rec.tree) if self._shadow else {}
        skipped_then = set(rec.skipped_large)
        to_delete: list[str] = []
        for path in sorted(set(old) | set(new)):
            o, n = old.get(path), new.get(path)
            if o == n or (o is not None and o.is_gitlink) or (n is not None and n.is_gitlink):
                continue
            if o is not None and n is not None:
                item = _Planned(
                    FileChange(path=path, kind=ChangeKind.MODIFIED),
                    read_state(self.workspace, path),
                    entry=o,
                )
                _set_lines(item.change, stats.get(path))
                planned[path] = item
            elif o is not None:
                # not in today's snapshot: gone, or present but ignored/over the cap now
                current = read_state(self.workspace, path)
                if _same(current, o):
                    continue
                if current.exists:
                    item = _Planned(FileChange(path=path, kind=ChangeKind.MODIFIED), current, entry=o)
                    need_lines.append(item)
                else:
                    item = _Planned(FileChange(path=path, kind=ChangeKind.ADDED), current, entry=o)
                    _set_lines(item.change, stats.get(path))
                planned[path] = item
            elif path not in skipped_then:  # over the cap then: existed, never snapshotted
                to_delete.append(path)
        if to_delete and _gitignores(old) != _gitignores(new) and self._shadow is not None:
            # the ignore rules changed: a file ignored at the checkpoint was never in its
            # snapshot, yet existed; never delete it as if it were new
            kept = self._shadow.ignored_under(rec.tree, to_delete)
            if kept:
                warnings.append(
                    f"kept {_some(sorted(kept))}: ignored by .gitignore at this checkpoint, "
                    "so it may have existed then"
                )
                to_delete = [p for p in to_delete if p not in kept]
        for path in to_delete:
            item = _Planned(
                FileChange(path=path, kind=ChangeKind.DELETED), read_state(self.workspace, path)
            )
            _set_lines(item.change, stats.get(path))
            planned[path] = item
            governed.add(path)
        new_large = [p for p in now.skipped_large if p not in old and p not in skipped_then]
        if new_large:
            not_undoable.append(
                f"files over the size cap created since ({_some(new_large)}): not deleted "
                "unless write_file created them"
            )
        self._fill_lines(need_lines)

    def _govern_absent(
        self,
        rec: _Record,
        pre_images: dict[str, str | None],
        planned: dict[str, _Planned],
        governed: set[str],
    ) -> None:
        """Pre-images of files the snapshot says did not exist at the checkpoint.

        A file-tool pre-image holds what was there when the tool wrote, which is not
        the checkpoint's content if a command created the file after the checkpoint.
        Unless the snapshot could not have held the file (over the cap, ignored then,
        inside a nested repository), the snapshot's word wins: it did not exist.
        """
        nested = tuple(rec.nested_repos)
        candidates = [
            p for p, digest in pre_images.items()
            if digest is not None and p not in planned and p not in governed
            and p not in rec.skipped_large and not p.startswith(nested or ("\0",))
        ]
        if not candidates or self._shadow is None or rec.tree is None:
            return
        ignored = self._shadow.ignored_under(rec.tree, candidates)
        for path in candidates:
            if path in ignored:
                continue
            governed.add(path)
            current = read_state(self.workspace, path)
            if current.exists:
                change = FileChange(path=path, kind=ChangeKind.DELETED)
                now_bytes = current.data if current.kind == "file" else None
                _set_lines(change, count_lines(now_bytes, None))
                planned[path] = _Planned(change, current)

    def _fill_lines(self, items: list[_Planned]) -> None:
        if not items or self._shadow is None:
            return
        blobs = self._shadow.read_blobs([i.entry.sha for i in items if i.entry])
        for item in items:
            assert item.entry is not None
            target = blobs[item.entry.sha]
            current = item.current.data if item.current.kind in ("file", "link") else None
            lines = None if item.entry.is_link else count_lines(current, target)
            _set_lines(item.change, lines)

    def _plan_pre_image(self, path: str, digest: str | None, warnings: list[str]) -> _Planned | None:
        current = read_state(self.workspace, path)
        now_bytes = current.data if current.kind == "file" else None
        if digest is None:
            if not current.exists:
                return None
            change = FileChange(path=path, kind=ChangeKind.DELETED, source="pre_image")
            _set_lines(change, count_lines(now_bytes, None))
            return _Planned(change, current)
        try:
            old = self._blobs.get(digest)
        except BlobMissing:
            warnings.append(f"{path}: its saved old content is missing; not restored")
            return None
        if current.kind == "file" and current.data == old:
            return None
        kind = ChangeKind.MODIFIED if current.exists else ChangeKind.ADDED
        change = FileChange(path=path, kind=kind, source="pre_image")
        _set_lines(change, count_lines(now_bytes, old))
        return _Planned(change, current, pre_image=digest)

    # -- restoring -------------------------------------------------------------------------

    def _apply(
        self, item: _Planned, undo: _Record, covered: dict[str, Entry], keep_dirs: set[str]
    ) -> None:
        # what a restore overwrites must be restorable too: the undo checkpoint's
        # snapshot has it, or it gets a pre-image like a file-tool write
        if item.path not in covered and item.current.kind in ("file", ABSENT):
            if item.path not in undo.pre_images:
                old = item.current.data if item.current.kind == "file" else None
                undo.pre_images[item.path] = None if old is None else self._blobs.put(old)
        if item.entry is not None:
            assert self._shadow is not None
            data = self._shadow.read_blobs([item.entry.sha])[item.entry.sha]
            disk.write_file(
                self.workspace, item.path, data,
                link=item.entry.is_link, executable=item.entry.executable,
            )
        elif item.pre_image is not None:
            disk.write_file(self.workspace, item.path, self._blobs.get(item.pre_image))
        else:
            disk.delete_file(self.workspace, item.path)
            disk.remove_empty_parents(self.workspace, item.path, keep_dirs)
        # the restore is the agent's doing: a later change by someone else conflicts
        self._meta.written[item.path] = read_state(self.workspace, item.path).fingerprint()

    def _folders_of(self, rec: _Record) -> set[str]:
        folders: set[str] = set()
        if rec.tree is None or self._shadow is None:
            return folders
        try:
            paths = self._entries(rec.tree)
        except ShadowError:
            return folders
        for path in paths:
            parts = path.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                folders.add("/".join(parts[:i]))
        return folders

    # -- retention -------------------------------------------------------------------------

    def _enforce_retention(self, protect: set[str]) -> list[str]:
        notices: list[str] = []
        dropped: list[_Record] = []
        while len(self._meta.records) > self.max_checkpoints:
            victim = next((r for r in self._meta.records if r.id not in protect), None)
            if victim is None:
                break
            self._drop(victim)
            dropped.append(victim)
        if dropped:
            self._gc()
            notices.append(
                f"Removed {_oldest(dropped)} to keep at most {self.max_checkpoints} "
                "checkpoints: you can no longer rewind to "
                + ("it." if len(dropped) == 1 else "them.")
            )
        if self.budget_bytes and self.usage_bytes() > self.budget_bytes:
            self._gc()
            dropped = []
            while self.usage_bytes() > self.budget_bytes and len(self._meta.records) > 1:
                victim = next((r for r in self._meta.records if r.id not in protect), None)
                if victim is None:
                    break
                self._drop(victim)
                dropped.append(victim)
                self._gc()
            if dropped:
                notices.append(
                    f"Removed {_oldest(dropped)} to keep checkpoints within "
                    f"{_size(self.budget_bytes)}: you can no longer rewind to "
                    + ("it." if len(dropped) == 1 else "them.")
                )
            usage = self.usage_bytes()
            if usage > self.budget_bytes:
                notices.append(
                    f"Checkpoints take {_size(usage)}, over their budget of "
                    f"{_size(self.budget_bytes)}, even with only the newest kept."
                )
        return notices

    def _drop(self, rec: _Record) -> None:
        self._meta.records.remove(rec)
        if rec.commit and self._shadow is not None:
            try:
                self._shadow.delete_ref(rec.ref)
            except ShadowError:
                pass
        still = {d for r in self._meta.records for d in r.pre_images.values() if d}
        for digest in rec.pre_images.values():
            if digest and digest not in still:
                self._blobs.delete(digest)
        self._save()

    def _gc(self) -> None:
        if self._shadow is not None and (self._shadow.git_dir / "HEAD").exists():
            try:
                self._shadow.prune()
            except ShadowError:
                pass

    # -- records ---------------------------------------------------------------------------

    def _record(self, checkpoint_id: str) -> _Record:
        for rec in self._meta.records:
            if rec.id == checkpoint_id:
                return rec
        raise UnknownCheckpoint(checkpoint_id)

    def _since(self, rec: _Record) -> list[_Record]:
        return [r for r in self._meta.records if r.seq >= rec.seq]

    def _pre_images_since(self, rec: _Record) -> dict[str, str | None]:
        earliest: dict[str, str | None] = {}
        for later in self._since(rec):
            for path, digest in later.pre_images.items():
                earliest.setdefault(path, digest)
        return earliest

    def _entries(self, tree: str) -> dict[str, Entry]:
        assert self._shadow is not None
        return self._shadow.entries(tree)

    def _relative(self, path: Path) -> str | None:
        path = Path(path)
        real = Path(os.path.realpath(path.parent)) / path.name
        if real == self.workspace or self.workspace not in real.parents:
            return None
        return real.relative_to(self.workspace).as_posix()

    def _load(self) -> _Meta:
        try:
            text = self._meta_path.read_text()
        except FileNotFoundError:
            return _Meta()
        try:
            return _Meta.model_validate_json(text)
        except ValueError:
            aside = self._meta_path.with_name(f"{_META}.damaged-{int(time.time())}")
            os.replace(self._meta_path, aside)
            self._pending_warnings.append(
                f"the checkpoint records were damaged (kept as {aside.name}); earlier "
                "checkpoints are lost"
            )
            return _Meta()

    def _save(self) -> None:
        data = self._meta.model_dump_json().encode()
        tmp = self._meta_path.with_name(f".{_META}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self._meta_path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


# -- small helpers ---------------------------------------------------------------------------


def _same(current: DiskState, entry: Entry) -> bool:
    if entry.is_link:
        return current.kind == "link" and current.git_sha() == entry.sha
    return current.kind == "file" and current.git_sha() == entry.sha


def _set_lines(change: FileChange, lines: tuple[int, int] | None | object) -> None:
    if isinstance(lines, tuple):
        change.lines_added, change.lines_removed = lines
    else:
        change.binary = True


def _gitignores(entries: dict[str, Entry]) -> dict[str, str]:
    return {
        p: e.sha for p, e in entries.items() if p == ".gitignore" or p.endswith("/.gitignore")
    }


def _escape_pattern(rel: str) -> str:
    out = "".join("\\" + c if c in "*?[\\" else c for c in rel)
    return "\\" + out if out[:1] in ("#", "!") else out


def _some(paths: list[str], limit: int = 5) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


def _oldest(dropped: list[_Record]) -> str:
    if len(dropped) == 1:
        return f"the oldest checkpoint (“{dropped[0].label}”)"
    return f"the {len(dropped)} oldest checkpoints (“{dropped[0].label}” to “{dropped[-1].label}”)"
