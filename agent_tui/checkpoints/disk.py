"""Reading and restoring workspace files for a rewind, without ever leaving the workspace.

A restore writes through ``agent_tui.atomic`` (a temporary file beside the target,
renamed into place), so a file is either its old or its restored content, and a
symlink at the target is replaced, never written through. A path whose parent folder
resolves outside the workspace (a symlinked folder pointing elsewhere) is refused.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from agent_tui.atomic import link_atomic, write_atomic

ABSENT = "absent"

_TEXT_DIFF_LIMIT = 2 * 1024 * 1024  # count lines with difflib only below this size


class OutsideWorkspaceError(OSError):
    pass


@dataclass(frozen=True)
class DiskState:
    kind: str  # "absent" | "file" | "link" | "dir" | "other"
    data: bytes = b""  # file content, or link target
    mode: int = 0

    @property
    def exists(self) -> bool:
        return self.kind != ABSENT

    def git_sha(self) -> str | None:
        """The git blob id this state would have (files and links only)."""
        if self.kind not in ("file", "link"):
            return None
        h = hashlib.sha1(b"blob %d\0" % len(self.data))
        h.update(self.data)
        return h.hexdigest()

    def fingerprint(self) -> str:
        """What ``record_written`` compares: sha256 of a file, else a tag."""
        if self.kind == "file":
            return hashlib.sha256(self.data).hexdigest()
        if self.kind == "link":
            return "link:" + hashlib.sha256(self.data).hexdigest()
        return self.kind


def fingerprint_bytes(data: bytes | None) -> str:
    return ABSENT if data is None else hashlib.sha256(data).hexdigest()


def read_state(workspace: Path, rel: str) -> DiskState:
    path = workspace / rel
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return DiskState(ABSENT)
    if stat.S_ISLNK(st.st_mode):
        return DiskState("link", os.fsencode(os.readlink(path)), st.st_mode)
    if stat.S_ISREG(st.st_mode):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            return DiskState("file", f.read(), st.st_mode)
    if stat.S_ISDIR(st.st_mode):
        return DiskState("dir", b"", st.st_mode)
    return DiskState("other", b"", st.st_mode)


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:8000]


def count_lines(old: bytes | None, new: bytes | None) -> tuple[int, int] | None:
    """Lines added and removed going from ``old`` to ``new``; None if binary or huge."""
    old = old or b""
    new = new or b""
    if is_binary(old) or is_binary(new):
        return None
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    if not a or not b:
        return len(b), len(a)
    if len(old) + len(new) > _TEXT_DIFF_LIMIT:
        return None
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def _safe_parent(workspace: Path, rel: str, *, create: bool) -> Path:
    if not rel or rel.startswith("/") or any(part in ("", ".", "..") for part in rel.split("/")):
        raise OutsideWorkspaceError(f"not a workspace path: {rel!r}")
    folder = workspace
    for part in rel.split("/")[:-1]:
        folder = folder / part
        real = Path(os.path.realpath(folder))
        if real != workspace and workspace not in real.parents:
            # checked before creating anything: never mkdir through a link to elsewhere
            raise OutsideWorkspaceError(f"{rel}: its folder leads outside the workspace")
        if not os.path.lexists(folder) and create:
            os.mkdir(folder)
    return Path(os.path.realpath(folder))


def write_file(
    workspace: Path, rel: str, data: bytes, *, link: bool = False, executable: bool | None = None
) -> None:
    """Put ``data`` at ``rel`` (a symlink to ``data`` if ``link``), atomically."""
    parent = _safe_parent(workspace, rel, create=True)
    name = rel.rsplit("/", 1)[-1]
    current = read_state(parent, name)
    if current.kind == "dir":
        raise IsADirectoryError(f"{rel} is a folder now")
    if link:
        link_atomic(parent, name, os.fsdecode(data))
        return
    if current.kind == "file":
        mode = stat.S_IMODE(current.mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    if executable is True:
        mode |= (mode & 0o444) >> 2  # x where r
    elif executable is False:
        mode &= ~0o111
    write_atomic(parent, name, data, mode=mode, exact_mode=True)


def delete_file(workspace: Path, rel: str) -> None:
    parent = _safe_parent(workspace, rel, create=False)
    target = parent / rel.rsplit("/", 1)[-1]
    if read_state(parent, target.name).kind == "dir":
        raise IsADirectoryError(f"{rel} is a folder now")
    try:
        os.unlink(target)  # unlink never follows a symlink
    except FileNotFoundError:
        pass


def remove_empty_parents(workspace: Path, rel: str, keep: set[str]) -> None:
    """Remove folders left empty by a deletion, unless the checkpoint had files there."""
    parts = rel.split("/")[:-1]
    while parts:
        folder = "/".join(parts)
        if folder in keep:
            return
        try:
            os.rmdir(workspace / folder)
        except OSError:
            return
        parts.pop()
