"""Checkpoints of a workspace and rewinds to them: the layer's one entry point.

A checkpoint is taken at every user message. It holds two things:

- a **snapshot** of the workspace in the shadow repository (``shadow.py``): every file
  not ignored by ``.gitignore`` and under the size cap, whoever changed it (file tools,
  shell commands, the user);
- the **pre-images** the file tools hand over right before each write
  (``record_pre_image``), kept in the blob store (``store.py``). They cover what the
  snapshot cannot: ignored files, files over the cap, workspaces too large (or without
  git) to snapshot at all.

``plan`` previews a rewind, ``restore`` performs it; both take their plan from
``planner.py``. A restore first takes a checkpoint of the current state (so the rewind
itself can be rewound), then writes back the checkpoint's content. A file the agent
wrote whose content changed since (someone else edited it) is a *conflict*: reported,
and left alone unless the caller says to overwrite it. The records live in
``meta.py``; old checkpoints are pruned by ``retention.py``; what the user is told is
worded in ``wording.py``.

Everything here is synchronous and bounded (git runs with a timeout); one lock guards
the state, so the file tools' hook may be called from any thread.
"""

from __future__ import annotations

import builtins
import os
import secrets
import shutil
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from agent_tui.checkpoints import disk, meta, wording
from agent_tui.checkpoints.disk import ABSENT, DiskState, read_state
from agent_tui.checkpoints.meta import Record, UnknownCheckpoint
from agent_tui.checkpoints.models import (
    ChangeKind,
    CheckpointInfo,
    RestoreReport,
    RewindPlan,
)
from agent_tui.checkpoints.planner import Plan, PlannedChange, RewindFacts, plan_rewind
from agent_tui.checkpoints.retention import Retention
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

__all__ = [
    "DEFAULT_BUDGET_BYTES",
    "DEFAULT_MAX_CHECKPOINTS",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_FILES",
    "Checkpoints",
    "UnknownCheckpoint",
]

DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024
DEFAULT_MAX_FILES = 20_000
DEFAULT_MAX_CHECKPOINTS = 100
DEFAULT_BUDGET_BYTES = 512 * 1024 * 1024


@dataclass
class _Now:
    """A snapshot of the workspace as it is now, and what it could not cover."""

    tree: str | None = None
    skipped_large: list[str] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Files:
    """The planner's read access to the workspace and the pre-images."""

    workspace: Path
    blobs: BlobStore

    def state(self, path: str) -> DiskState:
        return read_state(self.workspace, path)

    def pre_image(self, digest: str) -> bytes:
        return self.blobs.get(digest)


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
        self._files = _Files(self.workspace, self._blobs)
        self._meta_path = self.state_dir / meta.FILE_NAME
        self._meta, self._pending_warnings = meta.load(self._meta_path)
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
            self._shadow.clear_stale_locks()  # an earlier agent process may have been killed
        self._retention = Retention(
            self._shadow, self._blobs, usage=self.usage_bytes, save=self._save
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
            rec = self._meta.record(checkpoint_id)
            now = self._snapshot_now()
            plan = self._plan(rec, now)
            return RewindPlan(
                checkpoint_id=rec.id,
                label=rec.label,
                time=rec.time,
                changes=plan.changes,
                not_undoable=[*plan.not_undoable, *extra_not_undoable],
                warnings=now.warnings + list(plan.warnings),
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
            rec = self._meta.record(checkpoint_id)
            undo_info = self._take(wording.undo_label(rec.label), None, protect={rec.id})
            undo = self._meta.record(undo_info.id)
            plan = self._plan(rec, _Now(tree=undo.tree, skipped_large=undo.skipped_large))
            covered = self._entries(undo.tree) if undo.tree else {}
            report = RestoreReport(
                checkpoint_id=rec.id,
                undo_checkpoint_id=undo.id,
                not_undoable=[*plan.not_undoable, *extra_not_undoable],
                warnings=list(undo.warnings) + list(plan.warnings),
                notices=undo_info.notices,
            )
            keep_dirs = self._folders_of(rec)
            # deletions first: a folder may have to go before a file takes its name
            order = sorted(plan.items, key=lambda p: p.change.kind != ChangeKind.DELETED)
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
            return self._meta.record(checkpoint_id).info()

    def usage_bytes(self) -> int:
        """Bytes the checkpoints take on disk (snapshots, pre-images, records)."""
        return folder_bytes(self.state_dir)

    # -- taking ----------------------------------------------------------------------------

    def _take(self, label: str, checkpoint_id: str | None, protect: set[str]) -> CheckpointInfo:
        cid = checkpoint_id or f"cp-{int(time.time() * 1000):x}-{secrets.token_hex(3)}"
        if any(r.id == cid for r in self._meta.records):
            raise ValueError(f"a checkpoint with id {cid!r} exists already")
        rec = Record(id=cid, label=label, time=datetime.now(timezone.utc), seq=self._meta.next_seq)
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
                rec.warnings.append(wording.no_snapshot(f"could not record the snapshot: {exc}"))
        self._meta.records.append(rec)
        self._save()
        notices = self._retention.enforce(
            self._meta,
            protect | {cid},
            max_checkpoints=self.max_checkpoints,
            budget_bytes=self.budget_bytes,
        )
        self._save()
        return rec.info(notices)

    def _snapshot_now(self) -> _Now:
        now = _Now()
        if self._shadow is None:
            now.warnings.append(wording.no_snapshot(f"no workspace snapshot ({self._no_git})"))
            return now
        try:
            self._shadow.ensure(self._exclude_lines())
            snap = self._shadow.snapshot(
                max_files=self.max_files, max_file_bytes=self.max_file_bytes
            )
        except SnapshotTooLarge as exc:
            now.warnings.append(wording.too_many_files(exc.files, exc.cap))
            return now
        except (ShadowError, OSError) as exc:
            now.warnings.append(wording.no_snapshot(f"could not snapshot the workspace ({exc})"))
            return now
        now.tree = snap.tree
        now.skipped_large = snap.skipped_large
        now.nested = snap.nested_repos
        if snap.skipped_large:
            now.warnings.append(wording.skipped_large(snap.skipped_large, self.max_file_bytes))
        if snap.nested_repos:
            now.warnings.append(wording.nested_repos(snap.nested_repos))
        if snap.unreadable:
            now.warnings.append(wording.unreadable(snap.unreadable))
        return now

    def _exclude_lines(self) -> builtins.list[str]:  # ``list`` is a method here
        lines = ["# written by agent-tui: the user's excludes and agent-tui's own files"]
        user_git = self.workspace / ".git"
        if user_git.is_dir():  # the user's repository is read, never written
            try:
                lines += (user_git / "info" / "exclude").read_text(errors="replace").splitlines()
            except OSError:
                pass
        state = Path(os.path.realpath(self.state_dir))
        if state == self.workspace or self.workspace in state.parents:
            rel = state.relative_to(self.workspace).as_posix() if state != self.workspace else ""
            lines.append("/" + _escape_pattern(rel) + "/" if rel else "/*")
        return lines

    # -- planning --------------------------------------------------------------------------

    def _plan(self, rec: Record, now: _Now) -> Plan:
        facts = RewindFacts(
            then_tree=rec.tree,
            then_skipped_large=tuple(rec.skipped_large),
            then_nested=tuple(rec.nested_repos),
            now_tree=now.tree,
            now_skipped_large=tuple(now.skipped_large),
            pre_images=self._meta.pre_images_since(rec),
            outside=tuple(self._meta.outside_since(rec)),
            written=self._meta.written,
        )
        return plan_rewind(facts, self._files, self._shadow)

    # -- restoring -------------------------------------------------------------------------

    def _apply(
        self, item: PlannedChange, undo: Record, covered: dict[str, Entry], keep_dirs: set[str]
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

    def _folders_of(self, rec: Record) -> set[str]:
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

    # -- records ---------------------------------------------------------------------------

    def _entries(self, tree: str) -> dict[str, Entry]:
        assert self._shadow is not None
        return self._shadow.entries(tree)

    def _relative(self, path: Path) -> str | None:
        path = Path(path)
        real = Path(os.path.realpath(path.parent)) / path.name
        if real == self.workspace or self.workspace not in real.parents:
            return None
        return real.relative_to(self.workspace).as_posix()

    def _save(self) -> None:
        meta.save(self._meta_path, self._meta)


def _escape_pattern(rel: str) -> str:
    out = "".join("\\" + c if c in "*?[\\" else c for c in rel)
    return "\\" + out if out[:1] in ("#", "!") else out
