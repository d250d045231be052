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

Folders added to the workspace (``--add-dir``, ``/add-dir``: the session's live list,
``added_dirs``) are covered the same way, each with a snapshot of its own
(``roots.py``); their files are keyed by absolute path (``meta.py``). A folder added
once stays covered by the records for the session, also when a resumed session does
not add it again; one that no longer exists is said so and skipped, the rest goes on.

Everything here is synchronous and bounded (git runs with a timeout); one lock guards
the state, so the file tools' hook may be called from any thread.
"""

from __future__ import annotations

import builtins
import functools
import json
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from agent_tui.checkpoints import disk, meta, wording
from agent_tui.checkpoints.disk import ABSENT, read_state
from agent_tui.checkpoints.meta import Record, RootSnapshot, UnknownCheckpoint
from agent_tui.checkpoints.models import ChangeKind, CheckpointInfo, RestoreReport, RewindPlan
from agent_tui.checkpoints.retention import Retention
from agent_tui.checkpoints.roots import Files, Now, Root, added_git_dir, snapshot_root
from agent_tui.checkpoints.shadow import (
    GIT_TIMEOUT,
    Entry,
    ShadowError,
    ShadowRepo,
    user_excludes_file,
)
from agent_tui.checkpoints.store import BlobMissing, BlobStore
from agent_tui.paths import folder_bytes, private_dir

if TYPE_CHECKING:  # the planner is imported at the first rewind, not for every session
    from agent_tui.checkpoints.planner import Plan, PlannedChange

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


class Checkpoints:
    def __init__(
        self,
        state_dir: Path,
        workspace: Path,
        *,
        added_dirs: Sequence[Path] = (),
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_files: int = DEFAULT_MAX_FILES,
        max_checkpoints: int = DEFAULT_MAX_CHECKPOINTS,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        git: str | None = "git",
        git_timeout: float = GIT_TIMEOUT,
    ) -> None:
        self.state_dir = private_dir(Path(os.path.abspath(state_dir)))
        self.workspace = Path(os.path.realpath(workspace))
        self.added_dirs = added_dirs  # the session's list, read as it is at each use
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.max_checkpoints = max(1, max_checkpoints)
        self.budget_bytes = budget_bytes
        self._lock = threading.RLock()
        self._blobs = BlobStore(self.state_dir / "blobs")
        self._meta_path = self.state_dir / meta.FILE_NAME
        self._meta, self._pending_warnings = meta.load(self._meta_path)
        self._git = shutil.which(git) if git else None
        self._git_timeout = git_timeout
        self._no_git = "" if self._git else (
            "git is not installed" if git else "snapshots are turned off")
        git_path = self._git
        # the user's excludes file, asked of git once, at the first snapshot (in its thread)
        self._excludes: Callable[[], str | None] = functools.cache(
            lambda: user_excludes_file(git_path) if git_path else None)
        self._shadow = self._shadow_for(self.state_dir / "shadow.git", self.workspace)
        self._ws = Root(self.workspace, added=False, shadow=self._shadow,
                        files=Files(self.workspace, self._blobs), no_git=self._no_git)
        self._added: dict[str, Root] = {}
        self._retention = Retention(
            self._shadows, self._blobs, usage=self.usage_bytes, save=self._save
        )

    def _shadow_for(self, git_dir: Path, folder: Path) -> ShadowRepo | None:
        if self._git is None:
            return None
        shadow = ShadowRepo(git_dir, folder, git=self._git, timeout=self._git_timeout,
                            excludes_file=self._excludes)
        shadow.clear_stale_locks()  # an earlier agent process may have been killed
        return shadow

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
            key = self._key(path)
            if key is None:
                shown = str(path)
                if shown not in latest.outside:
                    latest.outside.append(shown)
                    self._save()
                return
            if key in latest.pre_images:
                return
            latest.pre_images[key] = None if old is None else self._blobs.put(old)
            self._save()

    def record_written(self, path: Path, new: bytes | None) -> None:
        """After a file tool wrote ``new`` to ``path``: what the agent left there.

        A later rewind treats the file as a conflict if its content is no longer this.
        """
        with self._lock:
            key = self._key(path)
            if key is None:
                return
            self._meta.written[key] = disk.fingerprint_bytes(new)
            self._save()

    def command_started(self) -> str | None:
        """Before an agent's shell command: returns a token for ``command_finished``.

        Optional. With it, what a command changes counts as the agent's doing, so a
        file the agent wrote and then changed with ``sed`` is not a conflict, and a file
        a command wrote but the user changed afterwards is one. Costs one snapshot of
        the workspace and of each added folder.
        """
        with self._lock:
            trees = {}
            for root in [self._ws, *self._current_roots()]:
                tree = self._snapshot_now(root).tree
                if tree is not None:
                    trees[root.name if root.added else ""] = tree
            return json.dumps(trees) if trees else None

    def command_finished(self, token: str | None) -> None:
        """After the command: record what it left in every file it changed."""
        if token is None or self._git is None:
            return
        try:
            trees = json.loads(token)
        except ValueError:
            trees = {"": token}  # a bare tree: the workspace's
        with self._lock:
            changed = False
            for name, before in trees.items():
                root = self._root(name) if name else self._ws
                after = self._snapshot_now(root).tree
                if after is None or root.shadow is None:
                    continue
                try:
                    old, new = root.shadow.entries(before), root.shadow.entries(after)
                except ShadowError:
                    continue  # the token's objects were pruned meanwhile
                for rel in [p for p in set(old) | set(new) if old.get(p) != new.get(p)]:
                    self._meta.written[root.key(rel)] = root.files.state(rel).fingerprint()
                    changed = True
            if changed:
                self._save()

    def plan(self, checkpoint_id: str, extra_not_undoable: Iterable[str] = ()) -> RewindPlan:
        """What a rewind to ``checkpoint_id`` would change (nothing is changed)."""
        with self._lock:
            rec = self._meta.record(checkpoint_id)
            result = RewindPlan(checkpoint_id=rec.id, label=rec.label, time=rec.time)
            for root, now, plan in self._plans(rec, None):
                result.changes += plan.changes
                result.not_undoable += plan.not_undoable
                result.warnings += now.warnings + list(plan.warnings)
            result.warnings += self._missing_roots(rec)
            result.not_undoable += list(extra_not_undoable)
            return result

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
            undo_info = self._take(wording.undo_label(rec.label), None, protect={rec.id},
                                   every_root=True)
            undo = self._meta.record(undo_info.id)
            report = RestoreReport(checkpoint_id=rec.id, undo_checkpoint_id=undo.id,
                                   warnings=list(undo.warnings), notices=undo_info.notices)
            for root, _now, plan in self._plans(rec, undo):
                report.not_undoable += plan.not_undoable
                report.warnings += plan.warnings
                self._restore_root(root, rec, undo, plan, report, overwrite_conflicts)
            report.errors += self._missing_roots(rec)  # the rest is restored all the same
            report.not_undoable += list(extra_not_undoable)
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

    # -- the folders covered ---------------------------------------------------------------

    def _root(self, name: str) -> Root:
        root = self._added.get(name)
        if root is None:
            folder = Path(name)
            root = Root(folder, added=True,
                        shadow=self._shadow_for(added_git_dir(self.state_dir, folder), folder),
                        files=Files(folder, self._blobs), no_git=self._no_git)
            self._added[name] = root
        if name not in self._meta.added_roots:
            self._meta.added_roots.append(name)
        return root

    def _current_roots(self) -> builtins.list[Root]:
        """The added folders of the session now (bar those inside the workspace)."""
        roots: builtins.list[Root] = []
        for given in list(self.added_dirs):
            folder = Path(os.path.realpath(given))
            if folder == self.workspace or self.workspace in folder.parents:
                continue  # the workspace's snapshot covers it
            if all(r.path != folder for r in roots):
                roots.append(self._root(str(folder)))
        return roots

    def _key(self, path: Path) -> str | None:
        """A file's key: relative in the workspace, absolute in an added folder."""
        path = Path(path)
        real = Path(os.path.realpath(path.parent)) / path.name
        if real != self.workspace and self.workspace in real.parents:
            return real.relative_to(self.workspace).as_posix()
        folders = [r.path for r in self._current_roots()]
        folders += [Path(r) for r in self._meta.added_roots]
        owners = [f for f in folders if f in real.parents]
        if not owners:
            return None
        self._root(str(max(owners, key=lambda f: len(f.parts))))
        return real.as_posix()

    def _shadows(self) -> dict[str, ShadowRepo | None]:
        """Every shadow repository, by folder ("" for the workspace's)."""
        return {"": self._shadow} | {n: self._root(n).shadow for n in self._meta.added_roots}

    def _snap(self, root: Root, rec: Record) -> RootSnapshot | None:
        """``root``'s snapshot in ``rec`` (None: the folder was not covered then)."""
        if not root.added:
            return RootSnapshot(tree=rec.tree, commit=rec.commit,
                                skipped_large=rec.skipped_large, nested_repos=rec.nested_repos)
        return rec.added.get(root.name)

    def _then(self, root: Root, rec: Record) -> RootSnapshot | None:
        """``root`` at ``rec``; for a folder added after ``rec``, its first snapshot
        since (the agent could not touch it before it was added)."""
        return next((s for r in self._meta.since(rec) if (s := self._snap(root, r))), None)

    def _in_play(self, rec: Record) -> builtins.list[Root]:
        """The added folders a rewind to ``rec`` concerns: snapshotted or written since."""
        named = {n for r in self._meta.since(rec) for n in r.added}
        named |= {n for k in self._meta.pre_images_since(rec) if (n := self._meta.root_of(k)) is not None}
        return [self._root(n) for n in self._meta.added_roots if n in named]

    def _missing_roots(self, rec: Record) -> builtins.list[str]:
        return [wording.root_missing(r.name) for r in self._in_play(rec) if r.missing()]

    # -- taking ----------------------------------------------------------------------------

    def _take(self, label: str, checkpoint_id: str | None, protect: set[str], *,
              every_root: bool = False) -> CheckpointInfo:
        cid = checkpoint_id or f"cp-{int(time.time() * 1000):x}-{secrets.token_hex(3)}"
        if any(r.id == cid for r in self._meta.records):
            raise ValueError(f"a checkpoint with id {cid!r} exists already")
        rec = Record(id=cid, label=label, time=datetime.now(timezone.utc), seq=self._meta.next_seq)
        self._meta.next_seq += 1
        rec.warnings = self._pending_warnings
        self._pending_warnings = []
        now = self._snapshot_now(self._ws)
        rec.warnings += now.warnings
        rec.skipped_large = now.skipped_large
        if now.tree is not None and self._shadow is not None:
            try:
                rec.commit = self._shadow.commit(now.tree, f"{label}\n\ncheckpoint {cid}\n", rec.ref)
                rec.tree = now.tree
                rec.nested_repos = now.nested
            except ShadowError as exc:
                rec.warnings.append(wording.no_snapshot(f"could not record the snapshot: {exc}"))
        roots = self._current_roots()
        if every_root:  # a restore's undo point covers every folder it may write
            roots += [self._root(n) for n in self._meta.added_roots
                      if all(r.name != n for r in roots)]
        for root in roots:
            self._take_root(root, rec, cid)
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

    def _take_root(self, root: Root, rec: Record, cid: str) -> None:
        now = self._snapshot_now(root)
        rec.warnings += now.warnings
        if root.missing():
            return  # not covered: said in the warnings
        snap = RootSnapshot(skipped_large=now.skipped_large, nested_repos=now.nested)
        if now.tree is not None and root.shadow is not None:
            try:
                snap.commit = root.shadow.commit(
                    now.tree, f"{rec.label}\n\ncheckpoint {cid}\n", rec.ref)
                snap.tree = now.tree
            except ShadowError as exc:
                rec.warnings.append(wording.no_snapshot(
                    root.label(f"could not record the snapshot: {exc}")))
        rec.added[root.name] = snap

    def _snapshot_now(self, root: Root) -> Now:
        others = [] if not root.added else [
            self.workspace, *(Path(n) for n in self._meta.added_roots if n != root.name)]
        return snapshot_root(root, others, self.state_dir, max_files=self.max_files,
                             max_file_bytes=self.max_file_bytes)

    # -- planning --------------------------------------------------------------------------

    def _plans(self, rec: Record, undo: Record | None) -> builtins.list[tuple[Root, Now, Plan]]:
        """Per folder, the plan of a rewind to ``rec``, and the folder's state now."""
        plans = []
        for root in [self._ws, *self._in_play(rec)]:
            if not (root.added and root.missing()):
                now = self._now(root, undo)
                plans.append((root, now, self._plan(root, rec, now)))
        return plans

    def _now(self, root: Root, undo: Record | None) -> Now:
        """The state now: the restore's undo point (``undo``) has it, else a snapshot."""
        snap = None if undo is None else self._snap(root, undo)
        if snap is None:
            return self._snapshot_now(root)
        return Now(tree=snap.tree, skipped_large=list(snap.skipped_large))

    def _plan(self, root: Root, rec: Record, now: Now) -> Plan:
        from agent_tui.checkpoints.planner import Plan, RewindFacts, plan_rewind

        def mine(key: str) -> bool:
            return root.owns(key) and (not root.added or self._meta.root_of(key) == root.name)

        then = self._then(root, rec) or RootSnapshot()
        facts = RewindFacts(
            then_tree=then.tree,
            then_skipped_large=tuple(then.skipped_large),
            then_nested=tuple(then.nested_repos),
            now_tree=now.tree,
            now_skipped_large=tuple(now.skipped_large),
            pre_images={root.rel(k): d for k, d in self._meta.pre_images_since(rec).items()
                        if mine(k)},
            outside=() if root.added else tuple(self._meta.outside_since(rec)),
            written={root.rel(k): f for k, f in self._meta.written.items() if mine(k)},
            where="the folder" if root.added else "the workspace",
        )
        plan = plan_rewind(facts, root.files, root.shadow)
        if not root.added:
            return plan
        for item in plan.items:
            item.change.path = root.key(item.change.path)
        return Plan(items=plan.items, warnings=tuple(root.label(w) for w in plan.warnings),
                    not_undoable=tuple(root.label(n) for n in plan.not_undoable))

    # -- restoring -------------------------------------------------------------------------

    def _restore_root(self, root: Root, rec: Record, undo: Record, plan: Plan,
                      report: RestoreReport, overwrite_conflicts: bool) -> None:
        now = self._snap(root, undo)
        covered = self._tree_entries(root, now.tree if now else None)
        then = self._then(root, rec)
        keep_dirs = _folders(self._tree_entries(root, then.tree if then else None))
        # deletions first: a folder may have to go before a file takes its name
        order = sorted(plan.items, key=lambda p: p.change.kind != ChangeKind.DELETED)
        for item in order:
            if item.change.conflict and not overwrite_conflicts:
                report.skipped_conflicts.append(item.change)
                continue
            try:
                self._apply(root, item, undo, covered, keep_dirs)
            except (OSError, ShadowError, BlobMissing) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                report.errors.append(f"{item.path}: {reason}")
                continue
            report.restored.append(item.change)

    def _apply(self, root: Root, item: PlannedChange, undo: Record, covered: dict[str, Entry],
               keep_dirs: set[str]) -> None:
        rel = root.rel(item.path)
        # what a restore overwrites must be restorable too: the undo checkpoint's
        # snapshot has it, or it gets a pre-image like a file-tool write
        if rel not in covered and item.current.kind in ("file", ABSENT):
            if item.path not in undo.pre_images:
                old = item.current.data if item.current.kind == "file" else None
                undo.pre_images[item.path] = None if old is None else self._blobs.put(old)
        if item.entry is not None:
            assert root.shadow is not None
            data = root.shadow.read_blobs([item.entry.sha])[item.entry.sha]
            disk.write_file(
                root.path, rel, data, link=item.entry.is_link, executable=item.entry.executable,
            )
        elif item.pre_image is not None:
            disk.write_file(root.path, rel, self._blobs.get(item.pre_image))
        else:
            disk.delete_file(root.path, rel)
            disk.remove_empty_parents(root.path, rel, keep_dirs)
        # the restore is the agent's doing: a later change by someone else conflicts
        self._meta.written[item.path] = read_state(root.path, rel).fingerprint()

    def _tree_entries(self, root: Root, tree: str | None) -> dict[str, Entry]:
        if tree is None or root.shadow is None:
            return {}
        try:
            return root.shadow.entries(tree)
        except ShadowError:
            return {}

    # -- records ---------------------------------------------------------------------------

    def _save(self) -> None:
        meta.save(self._meta_path, self._meta)


def _folders(paths: Iterable[str]) -> set[str]:
    folders: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folders.add("/".join(parts[:i]))
    return folders
