"""The folders a checkpoint covers: the workspace, and each folder added to it.

A :class:`Root` is one of them with its own shadow repository: the workspace's is
``<state>/shadow.git``, an added folder's ``<state>/added/<hash of its path>/shadow.git``
(made when first needed). Each root snapshots the same way (``snapshot_root``): its
``.gitignore`` files, its own ``.git/info/exclude``, the size and file caps. A root
never snapshots what another root covers: the state folder, the workspace or an
added folder inside it are excluded, so no file is ever in two snapshots.

Keys (see ``meta.py``): the workspace's files are keyed relative to it, an added
folder's by absolute path; ``Root.rel`` and ``Root.key`` go between the two.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from agent_tui.checkpoints import wording
from agent_tui.checkpoints.disk import DiskState, read_state
from agent_tui.checkpoints.shadow import ShadowError, ShadowRepo, SnapshotTooLarge
from agent_tui.checkpoints.store import BlobStore


@dataclass
class Now:
    """A snapshot of a root as it is now, and what it could not cover."""

    tree: str | None = None
    skipped_large: list[str] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Files:
    """The planner's read access to one root's files and the pre-images."""

    root: Path
    blobs: BlobStore

    def state(self, path: str) -> DiskState:
        return read_state(self.root, path)

    def pre_image(self, digest: str) -> bytes:
        return self.blobs.get(digest)


@dataclass
class Root:
    path: Path  # resolved
    added: bool  # an added folder (keys absolute), or the workspace (keys relative)
    shadow: ShadowRepo | None
    files: Files
    no_git: str = ""  # why there is no shadow repository

    @property
    def name(self) -> str:
        return str(self.path)

    def key(self, rel: str) -> str:
        return f"{self.path.as_posix().rstrip('/')}/{rel}" if self.added else rel

    def rel(self, key: str) -> str:
        return key[len(self.path.as_posix().rstrip("/")) + 1:] if self.added else key

    def owns(self, key: str) -> bool:
        """Whether ``key`` has this root's form (the caller picks the longest root)."""
        if not self.added:
            return not key.startswith("/")
        prefix = self.path.as_posix().rstrip("/") + "/"
        parts = key[len(prefix):].split("/")
        return key.startswith(prefix) and not any(p in ("", ".", "..") for p in parts)

    def where(self) -> str:
        return f"the added folder {self.path}" if self.added else "the workspace"

    def label(self, text: str) -> str:
        """A warning about this root: an added folder's is prefixed with its path."""
        return f"{self.path}: {text}" if self.added else text

    def missing(self) -> bool:
        """The folder is gone, or is no longer the folder it was (now a link elsewhere)."""
        return not self.path.is_dir() or Path(os.path.realpath(self.path)) != self.path


def added_git_dir(state_dir: Path, folder: Path) -> Path:
    digest = hashlib.sha256(os.fsencode(str(folder))).hexdigest()[:20]
    return state_dir / "added" / digest / "shadow.git"


def snapshot_root(
    root: Root, others: list[Path], state_dir: Path, *, max_files: int, max_file_bytes: int
) -> Now:
    """Snapshot ``root`` now; ``others`` are the other roots (excluded when inside it)."""
    now = Now()
    if root.shadow is None:
        now.warnings.append(wording.no_snapshot(root.label(f"no snapshot ({root.no_git})")))
        return now
    if root.added and root.missing():
        now.warnings.append(wording.root_missing(root.name))
        return now
    try:
        root.shadow.ensure(exclude_lines(root.path, [state_dir, *others]))
        snap = root.shadow.snapshot(max_files=max_files, max_file_bytes=max_file_bytes)
    except SnapshotTooLarge as exc:
        now.warnings.append(root.label(wording.too_many_files(exc.files, exc.cap)))
        return now
    except (ShadowError, OSError) as exc:
        now.warnings.append(wording.no_snapshot(
            root.label(f"could not snapshot {root.where()} ({exc})")))
        return now
    now.tree = snap.tree
    now.skipped_large = snap.skipped_large
    now.nested = snap.nested_repos
    if snap.skipped_large:
        now.warnings.append(root.label(wording.skipped_large(snap.skipped_large, max_file_bytes)))
    if snap.nested_repos:
        now.warnings.append(root.label(wording.nested_repos(snap.nested_repos)))
    if snap.unreadable:
        now.warnings.append(root.label(wording.unreadable(snap.unreadable)))
    return now


def exclude_lines(root: Path, inside: list[Path]) -> list[str]:
    """The shadow's excludes: the user's own for ``root``, and each of ``inside`` that
    lies within it (agent-tui's state, other roots)."""
    lines = ["# written by agent-tui: the user's excludes and agent-tui's own files"]
    user_git = root / ".git"
    if user_git.is_dir():  # the user's repository is read, never written
        try:
            lines += (user_git / "info" / "exclude").read_text(errors="replace").splitlines()
        except OSError:
            pass
    for other in inside:
        real = Path(os.path.realpath(other))
        if real == root:
            lines.append("/*")
        elif root in real.parents:
            lines.append("/" + _escape_pattern(real.relative_to(root).as_posix()) + "/")
    return lines


def _escape_pattern(rel: str) -> str:
    out = "".join("\\" + c if c in "*?[\\" else c for c in rel)
    return "\\" + out if out[:1] in ("#", "!") else out
