"""Workspace confinement: the only way the file tools touch the file system.

A :class:`Workspace` maps a path the model gave (relative, or absolute inside the
workspace) to a file, and refuses anything that would land outside it. It never
hands a path string to ``open``: it opens the workspace root once, then walks the
path one component at a time relative to the directory it holds open
(``os.open(name, O_DIRECTORY | O_NOFOLLOW, dir_fd=...)``), opens the final
component with ``O_NOFOLLOW``, and writes through a temporary file in the same
directory followed by ``os.replace(..., src_dir_fd=, dst_dir_fd=)`` (``agent_tui.atomic``,
handed the directory's descriptor). A symlink swapped in between a check and a use
therefore cannot redirect an operation: no call ever follows a link on our behalf.

Symlinks: a link *inside* the workspace whose target also lies inside is followed,
by reading it (``readlink``) and continuing the walk through its target, component
by component, under the same rules; ``..`` pops the directory actually walked into
(POSIX semantics), and going above the root is refused. A link whose target leaves
the workspace is refused with :class:`OutsideWorkspace`. Following in-workspace
links keeps repositories with symlinked files usable; resolving them ourselves
keeps every step checked. Writing to a link writes its target file (the link stays).

Not covered: a directory we already hold open being *renamed* out of the workspace
by another process during the call (the kernel's ``openat2(RESOLVE_BENEATH)`` has
the same limit); hard links are files like any other.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO


from agent_tui.protocol.model_base import DeferredModel
from agent_tui.atomic import write_atomic

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO for reading must not hang the call; regular files ignore it.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
_MAX_HOPS = 40  # symlinks followed (and directory-creation retries) per path, like ELOOP

BeforeWrite = Callable[[Path, "bytes | None"], None]


class WorkspaceError(Exception):
    """A path the file tools refuse. The message is worded for the model."""


class OutsideWorkspace(WorkspaceError):
    """The path, or a symlink on the way, leads outside the workspace."""


class BadPath(WorkspaceError):
    """The path cannot name a file here (empty, NUL byte, too many links, not a file)."""


class FileTooLarge(WorkspaceError):
    """The file is bigger than the operation allows."""


class WriteReport(DeferredModel):
    """What :meth:`Workspace.write_atomic` did."""

    path: Path  # real absolute path written (symlinks resolved)
    relative: str  # the same, relative to the workspace root
    created: bool
    old_size: int | None = None
    size: int


@dataclass
class _Walk:
    """Directories held open along a walk; ``name`` is the final component, if any."""

    stack: list[tuple[str, int]]  # (component, fd); stack[0] is the root
    name: str | None = None
    fd: int | None = None  # the final component opened for reading, when asked
    hops: int = 0
    closed: bool = field(default=False, repr=False)

    @property
    def dir_fd(self) -> int:
        return self.stack[-1][1]

    def relative(self) -> str:
        parts = [n for n, _ in self.stack[1:]]
        if self.name is not None:
            parts.append(self.name)
        return "/".join(parts) or "."

    def pop_to_root(self) -> None:
        while len(self.stack) > 1:
            os.close(self.stack.pop()[1])

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.fd is not None:
            os.close(self.fd)
        for _, fd in self.stack:
            os.close(fd)


class Workspace:
    """File access confined to one directory tree (the session's ``--cwd``)."""

    def __init__(self, root: str | os.PathLike[str], *, show_absolute: bool = False) -> None:
        # show_absolute: an added folder, whose paths are shown as given (absolute)
        self.show_absolute = show_absolute
        given = Path(os.path.abspath(root))
        real = Path(os.path.realpath(given))
        if not real.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "workspace is not a directory", str(given))
        self.root = real
        self._given = given  # absolute paths may use either spelling of the root

    # -- naming ---------------------------------------------------------------

    def relative_parts(self, path: str) -> list[str]:
        """The components of ``path`` relative to the root (not yet normalised).

        Lexical only: absolute paths must start with the root; ``..`` and links are
        dealt with by the walk.
        """
        if not isinstance(path, str) or path == "":
            raise BadPath("empty path")
        if "\0" in path:
            raise BadPath(f"{path!r} contains a NUL byte")
        try:
            os.fsencode(path)
        except UnicodeEncodeError:
            raise BadPath(f"{path!r} is not a valid file name (unpaired surrogate)") from None
        if os.path.isabs(path):
            parts = PurePosixPath(path).parts[1:]
            for root in (self._given, self.root):
                rparts = root.parts[1:]
                if tuple(parts[: len(rparts)]) == rparts:
                    return list(parts[len(rparts) :])
            raise OutsideWorkspace(f"{path} is outside the workspace ({self.root})")
        return path.split("/")

    def display(self, path: str) -> str:
        """``path`` as a person would like to read it: relative to the workspace."""
        if self.show_absolute and isinstance(path, str):
            return path
        try:
            parts = [p for p in self.relative_parts(path) if p not in ("", ".")]
        except WorkspaceError:
            return path
        return "/".join(parts) or "."

    # -- the walk -------------------------------------------------------------

    @contextmanager
    def _walk(
        self, path: str, *, create_parents: bool = False, open_final: bool = False
    ) -> Iterator[_Walk]:
        parts = self.relative_parts(path)
        root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        walk = _Walk(stack=[("", root_fd)])
        try:
            self._advance(walk, deque(parts), path, create_parents, open_final)
            yield walk
        finally:
            walk.close()

    def _advance(
        self,
        walk: _Walk,
        pending: deque[str],
        path: str,
        create_parents: bool,
        open_final: bool,
    ) -> None:
        while pending:
            name = pending.popleft()
            if name in ("", "."):
                continue
            if name == "..":
                if len(walk.stack) == 1:
                    raise OutsideWorkspace(f"{path} is outside the workspace ({self.root})")
                os.close(walk.stack.pop()[1])
                continue
            cur = walk.dir_fd
            if all(p in ("", ".") for p in pending):
                if self._final(walk, name, pending, path, open_final):
                    continue  # it was a link: its target is now pending
                walk.name = name
                return
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=cur)
            except FileNotFoundError:
                if not create_parents:
                    raise FileNotFoundError(
                        errno.ENOENT, "no such directory", _join(walk, name)
                    ) from None
                self._hop(walk, path)
                # below a missing directory there are no links: check the rest of the
                # path lexically, so an escape creates no directory on its way out
                if _climbs_out(len(walk.stack) - 1, [name, *pending]):
                    raise OutsideWorkspace(f"{path} is outside the workspace ({self.root})")
                try:
                    os.mkdir(name, 0o777, dir_fd=cur)
                except FileExistsError:
                    pass  # made meanwhile by someone else: the retry checks what it is
                pending.appendleft(name)
                continue
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                if self._follow(walk, name, pending, path):
                    continue
                raise NotADirectoryError(
                    errno.ENOTDIR, "not a directory", _join(walk, name)
                ) from None
            walk.stack.append((name, fd))

    def _final(
        self, walk: _Walk, name: str, pending: deque[str], path: str, open_final: bool
    ) -> bool:
        """Look at the final component; True if it was a link now being followed."""
        cur = walk.dir_fd
        if open_final:
            try:  # never open a device or socket, even without reading it
                st = os.stat(name, dir_fd=cur, follow_symlinks=False)
            except FileNotFoundError:
                raise FileNotFoundError(errno.ENOENT, "no such file", _join(walk, name)) from None
            kind = stat.S_IFMT(st.st_mode)
            if kind not in (stat.S_IFREG, stat.S_IFDIR, stat.S_IFLNK):
                raise BadPath(f"{_join(walk, name)} is not a regular file")
            try:
                walk.fd = os.open(name, _READ_FLAGS, dir_fd=cur)
                return False
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    if exc.errno == errno.ENOENT:
                        raise FileNotFoundError(
                            errno.ENOENT, "no such file", _join(walk, name)
                        ) from None
                    raise
            if self._follow(walk, name, pending, path):
                return True
            pending.appendleft(name)  # swapped back meanwhile: look again
            self._hop(walk, path)
            return True
        try:
            st = os.stat(name, dir_fd=cur, follow_symlinks=False)
        except FileNotFoundError:
            return False  # not there yet: a write will create it
        if stat.S_ISLNK(st.st_mode):
            return self._follow(walk, name, pending, path) or self._retry(walk, name, pending, path)
        return False

    def _retry(self, walk: _Walk, name: str, pending: deque[str], path: str) -> bool:
        pending.appendleft(name)
        self._hop(walk, path)
        return True

    def _follow(self, walk: _Walk, name: str, pending: deque[str], path: str) -> bool:
        """If ``name`` is a symlink, queue its target's components and return True."""
        try:
            target = os.readlink(name, dir_fd=walk.dir_fd)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOENT):
                return False  # not a link (any more)
            raise
        self._hop(walk, path)
        link = _join(walk, name)
        if os.path.isabs(target):
            try:
                parts = self.relative_parts(target)
            except OutsideWorkspace:
                raise OutsideWorkspace(
                    f"{path} is outside the workspace: {link} is a symlink to {target}"
                ) from None
            walk.pop_to_root()
        else:
            parts = target.split("/")
        if _climbs_out(len(walk.stack) - 1, parts):  # say which link leads out
            raise OutsideWorkspace(
                f"{path} is outside the workspace: {link} is a symlink to {target}"
            )
        pending.extendleft(reversed(parts))
        return True

    def _hop(self, walk: _Walk, path: str) -> None:
        walk.hops += 1
        if walk.hops > _MAX_HOPS:
            raise BadPath(f"{path}: too many levels of symbolic links")

    # -- operations -------------------------------------------------------------

    def resolve(self, path: str) -> Path:
        """The real absolute path ``path`` names, checked to be inside the workspace.

        Links are followed (and checked); the final component need not exist. For
        display and hooks only: never reopen the result by name.
        """
        with self._walk(path) as walk:
            return self._absolute(walk)

    def stat(self, path: str) -> os.stat_result:
        """``stat`` of what ``path`` names (links inside the workspace followed)."""
        with self._walk(path) as walk:
            if walk.name is None:
                return os.fstat(walk.dir_fd)
            return os.stat(walk.name, dir_fd=walk.dir_fd, follow_symlinks=False)

    @contextmanager
    def open_read(self, path: str) -> Iterator[BinaryIO]:
        """Open a regular file for reading (binary)."""
        with self._walk(path, open_final=True) as walk:
            if walk.fd is None:
                raise IsADirectoryError(errno.EISDIR, "is a directory", self.display(path))
            st = os.fstat(walk.fd)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", self.display(path))
            if not stat.S_ISREG(st.st_mode):
                raise BadPath(f"{self.display(path)} is not a regular file")
            os.set_blocking(walk.fd, True)
            fd, walk.fd = walk.fd, None  # the file object owns it now
            with os.fdopen(fd, "rb") as fh:
                yield fh

    def read_bytes(self, path: str, *, limit: int | None = None) -> bytes:
        """The whole file; :class:`FileTooLarge` if it has more than ``limit`` bytes."""
        with self.open_read(path) as fh:
            data = fh.read() if limit is None else fh.read(limit + 1)
        if limit is not None and len(data) > limit:
            raise FileTooLarge(f"{self.display(path)} is larger than {limit} bytes")
        return data

    def make_dirs(self, path: str) -> Path:
        """Create the directory ``path`` and its parents, inside the workspace."""
        self.relative_parts(path)  # refuse an empty path before appending to it
        with self._walk(path + "/.", create_parents=True) as walk:
            return self._absolute(walk)

    def write_atomic(
        self,
        path: str,
        data: bytes,
        *,
        make_parents: bool = True,
        before_write: BeforeWrite | None = None,
        write: bool = True,
    ) -> WriteReport:
        """Replace (or create) the file ``path`` with ``data``, atomically.

        ``before_write(real_path, old_bytes_or_None)`` runs after the path is resolved
        and right before the first byte is written; if it raises, nothing is written.
        The old bytes are read only when a hook is given. Existing permission bits
        are kept. ``write=False`` checks the path and runs the hook but writes nothing:
        the caller has the file written another way (an editor, ``files/buffers.py``).
        """
        with self._walk(path, create_parents=make_parents) as walk:
            if walk.name is None:
                raise IsADirectoryError(errno.EISDIR, "is a directory", self.display(path))
            dir_fd, name = walk.dir_fd, walk.name
            old_st = self._existing(dir_fd, name, walk)
            target = self._absolute(walk)
            if before_write is not None:
                old = None if old_st is None else self._read_old(dir_fd, name, walk)
                before_write(target, old)
            mode = 0o666 if old_st is None else stat.S_IMODE(old_st.st_mode)
            # relative to the folder held open: a symlink swapped in at ``name`` is
            # replaced, never written through; umask applies to a new file only
            if write:
                write_atomic(dir_fd, name, data, mode=mode, exact_mode=old_st is not None)
            return WriteReport(
                path=target,
                relative=walk.relative(),
                created=old_st is None,
                old_size=None if old_st is None else old_st.st_size,
                size=len(data),
            )

    # -- helpers ------------------------------------------------------------------

    def _absolute(self, walk: _Walk) -> Path:
        rel = walk.relative()
        return self.root if rel == "." else self.root / rel

    def _existing(self, dir_fd: int, name: str, walk: _Walk) -> os.stat_result | None:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", walk.relative())
        if not stat.S_ISREG(st.st_mode):
            # a link here means it was swapped in after the walk looked: refuse
            raise BadPath(f"{walk.relative()} is not a regular file")
        return st

    def _read_old(self, dir_fd: int, name: str, walk: _Walk) -> bytes | None:
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise BadPath(f"{walk.relative()} changed into a symlink during the call")
            raise
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise BadPath(f"{walk.relative()} is not a regular file")
            os.set_blocking(fd, True)
            return fh.read()


def _join(walk: _Walk, name: str) -> str:
    parts = [n for n, _ in walk.stack[1:]] + [name]
    return "/".join(parts)


def _climbs_out(depth: int, parts: list[str]) -> bool:
    """Whether ``parts``, taken lexically from ``depth`` below the root, go above it."""
    for part in parts:
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False


def pick_root(
    workspace: str | os.PathLike[str], others: Iterable[str | os.PathLike[str]], path: str
) -> Workspace:
    """The tree a file tool's ``path`` is confined to: the workspace, or, for an
    absolute path outside it, the first of ``others`` (added folders, skills' folders)
    whose tree holds it. Each is confined as the workspace is (symlinks and ``..``
    checked by the walk); a path in none of them stays with the workspace, whose walk
    then refuses it. Raises OSError when the workspace itself is not usable."""
    ws = Workspace(workspace)
    if not isinstance(path, str) or not os.path.isabs(path):
        return ws
    try:
        ws.relative_parts(path)
        return ws
    except WorkspaceError:
        pass
    for root in others:
        try:
            other = Workspace(root, show_absolute=True)
            other.relative_parts(path)
        except (OSError, WorkspaceError):
            continue
        return other
    return ws
