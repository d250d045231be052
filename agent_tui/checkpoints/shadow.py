"""Workspace snapshots in a shadow git repository that is ours alone.

The shadow repository is a bare git dir under the state folder (``<state>/shadow.git``)
used with the workspace as its work tree and an index file of its own. It never
touches the user's repository: every git child gets ``GIT_DIR``, ``GIT_WORK_TREE`` and
``GIT_INDEX_FILE`` pointing at the shadow, inherited ``GIT_*`` variables are dropped,
system and global config are not read (hooks, filters, fsmonitor, signing and
line-ending conversion are all off), and git never walks up to find another
repository because ``GIT_DIR`` is explicit. Git itself never adds a ``.git`` entry, so
the user's ``.git/`` is never part of a snapshot.

A snapshot honours the workspace's ``.gitignore`` files (git reads them from the work
tree), the user's ``.git/info/exclude`` and global excludes file, skips files over a
size cap and nested repositories, and refuses (``SnapshotTooLarge``) when the workspace
holds more files than the cap. Content is stored byte for byte: ``info/attributes``
turns off every conversion a ``.gitattributes`` might ask for.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent_tui import crash_points
from agent_tui.atomic import is_temp, left_by_dead_process, write_atomic
from agent_tui.credentials import CREDENTIAL_VARS  # git has no business with them
from agent_tui.paths import private_dir

GIT_TIMEOUT = 60.0
# The shadow repository lives under $AGENT_TUI_HOME: folders 0700, files 0600 (0400
# for git's read-only objects), whatever the user's umask.
_UMASK = 0o077
IDENTITY = ("agent-tui", "agent-tui@localhost")

# Highest-precedence attributes: store bytes exactly as they are on disk.
_ATTRIBUTES = "* -text -crlf -ident -filter !eol !working-tree-encoding\n"

_CONFIG = (
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.symlinks=true",
    "core.logAllRefUpdates=false",
    "commit.gpgsign=false",
    "gc.auto=0",
    "maintenance.auto=false",
)


def _config_sections() -> str:
    """:data:`_CONFIG` in git's config file format."""
    sections: dict[str, list[str]] = {}
    for item in _CONFIG:
        key, value = item.split("=", 1)
        section, name = key.rsplit(".", 1)
        sections.setdefault(section, []).append(f"\t{name} = {value}\n")
    return "".join(f"[{section}]\n" + "".join(lines) for section, lines in sections.items())


GITLINK = "160000"
SYMLINK = "120000"


class ShadowError(Exception):
    """A git command of the shadow repository failed or timed out."""


class SnapshotTooLarge(ShadowError):
    def __init__(self, files: int, cap: int) -> None:
        super().__init__(f"{files} files, over the cap of {cap}")
        self.files = files
        self.cap = cap


@dataclass(frozen=True)
class Entry:
    mode: str
    sha: str

    @property
    def is_link(self) -> bool:
        return self.mode == SYMLINK

    @property
    def is_gitlink(self) -> bool:
        return self.mode == GITLINK

    @property
    def executable(self) -> bool:
        return self.mode == "100755"


@dataclass
class Snapshot:
    tree: str
    files: int
    skipped_large: list[str] = field(default_factory=list)
    nested_repos: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


def _split0(out: bytes) -> list[str]:
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


def user_excludes_file(git: str, timeout: float = 10.0) -> str | None:
    """The user's own ``core.excludesFile`` (the shadow does not read global config)."""
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith("GIT_") and k not in CREDENTIAL_VARS
    }
    try:
        done = subprocess.run(
            [git, "config", "--global", "--path", "--get", "core.excludesFile"],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            cwd="/",
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = os.fsdecode(done.stdout).strip()
    return value or None


class ShadowRepo:
    def __init__(
        self,
        git_dir: Path,
        workspace: Path,
        *,
        git: str,
        timeout: float = GIT_TIMEOUT,
        excludes_file: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.git_dir = Path(os.path.abspath(git_dir))
        self.workspace = Path(os.path.abspath(workspace))
        self.git = git
        self.timeout = timeout
        self.index_file = self.git_dir / "agent-tui.index"
        # asked at the first git run (a worker thread's), not when the session is made
        self.excludes_file = excludes_file
        self._tree_cache: dict[str, dict[str, Entry]] = {}

    # -- running git -----------------------------------------------------------------

    def _env(self, work_tree: Path | None = None, index: Path | None = None) -> dict[str, str]:
        env = {
            k: v for k, v in os.environ.items()
            if not k.startswith("GIT_") and k not in CREDENTIAL_VARS
        }
        name, email = IDENTITY
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(work_tree or self.workspace),
            GIT_INDEX_FILE=str(index or self.index_file),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            GIT_LITERAL_PATHSPECS="1",
            GIT_AUTHOR_NAME=name,
            GIT_AUTHOR_EMAIL=email,
            GIT_COMMITTER_NAME=name,
            GIT_COMMITTER_EMAIL=email,
            LC_ALL="C",
        )
        return env

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        work_tree: Path | None = None,
        index: Path | None = None,
    ) -> bytes:
        argv = [self.git]
        for item in _CONFIG:
            argv += ["-c", item]
        if excludes := self.excludes_file():
            argv += ["-c", f"core.excludesFile={excludes}"]
        argv += list(args)
        cwd = work_tree or self.workspace
        crash_points.reached(f"git:{args[0]}")
        try:
            done = subprocess.run(
                argv,
                env=self._env(work_tree, index),
                cwd=cwd,
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=self.timeout,
                umask=_UMASK,
            )
        except subprocess.TimeoutExpired:
            raise ShadowError(f"git {args[0]} took longer than {self.timeout:g} s") from None
        except OSError as exc:
            raise ShadowError(f"could not run git: {exc}") from None
        if done.returncode != 0:
            err = os.fsdecode(done.stderr).strip().splitlines()
            raise ShadowError(f"git {args[0]} failed: {err[-1] if err else done.returncode}")
        return done.stdout

    # -- setup -------------------------------------------------------------------------

    def ensure(self, exclude_lines: list[str]) -> None:
        """Create the shadow repository if needed and write its exclude/attribute files."""
        if not all((self.git_dir / part).exists() for part in ("HEAD", "config", "objects", "refs")):
            self._create()
        info = private_dir(self.git_dir / "info")
        _write_private(info / "attributes", _ATTRIBUTES)
        _write_private(info / "exclude", "".join(line + "\n" for line in exclude_lines))

    def _create(self) -> None:
        """Made whole beside its place, then renamed into it: an agent killed while git
        set it up leaves a half-made folder nobody takes for the repository. One found
        half-made (from before) is set aside, never deleted."""
        if self.git_dir.exists():
            os.replace(self.git_dir, self.git_dir.with_name(
                f"{self.git_dir.name}.damaged-{int(time.time())}"))
        new = self.git_dir.with_name(f"{self.git_dir.name}.new-{os.getpid()}")
        shutil.rmtree(new, ignore_errors=True)
        private_dir(new)
        fresh = ShadowRepo(new, self.workspace, git=self.git, timeout=self.timeout)
        fresh._init()
        # kept in its config too (every command also passes them with -c): one write, not a
        # git process a key
        with open(new / "config", "a", encoding="utf-8") as config:
            config.write(_config_sections())
        os.replace(new, self.git_dir)

    def _init(self) -> None:
        env = {k: v for k, v in self._env().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
        try:
            done = subprocess.run(
                # an empty template: no sample hooks, no description
                [self.git, "init", "--bare", "--quiet", "--template=", str(self.git_dir)],
                env=env,
                cwd=self.git_dir,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=self.timeout,
                umask=_UMASK,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise ShadowError(f"could not create the shadow repository: {exc}") from None
        if done.returncode != 0:
            raise ShadowError(
                f"could not create the shadow repository: {os.fsdecode(done.stderr).strip()}"
            )

    # -- snapshots ---------------------------------------------------------------------

    def snapshot(self, *, max_files: int, max_file_bytes: int) -> Snapshot:
        """Bring the shadow index up to the workspace and write its tree."""
        cached = _split0(self.run("ls-files", "-z", "--cached"))
        others = _split0(self.run("ls-files", "-z", "--others", "--exclude-standard"))
        ignored = set(
            _split0(self.run("ls-files", "-z", "--cached", "--ignored", "--exclude-standard"))
        )
        nested = sorted(p for p in others if p.endswith("/"))
        others = self._without_temps(others)
        candidates = sorted((set(cached) - ignored) | {p for p in others if not p.endswith("/")})
        if len(candidates) > 2 * max_files:  # do not even stat a huge tree
            raise SnapshotTooLarge(len(candidates), max_files)
        include: list[str] = []
        large: list[str] = []
        unreadable: list[str] = []
        for rel in candidates:
            try:
                st = os.lstat(self.workspace / rel)
            except OSError:
                continue  # gone: dropped from the index below
            if stat.S_ISLNK(st.st_mode):
                include.append(rel)
            elif stat.S_ISREG(st.st_mode):
                if st.st_size > max_file_bytes:
                    large.append(rel)
                elif not os.access(self.workspace / rel, os.R_OK):
                    unreadable.append(rel)
                else:
                    include.append(rel)
        if len(include) > max_files:
            raise SnapshotTooLarge(len(include), max_files)
        keep = set(include)
        drop = [p for p in cached if p not in keep]
        if drop:
            self.run("update-index", "-z", "--force-remove", "--stdin", input=_join0(drop))
        if include:
            # stat-unchanged files are not read again; a file that vanished since the
            # lstat above is dropped (--remove) rather than failing the snapshot
            self.run(
                "update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                input=_join0(include),
            )
        tree = self.run("write-tree").decode().strip()
        return Snapshot(
            tree=tree,
            files=len(include),
            skipped_large=large,
            nested_repos=nested,
            unreadable=unreadable,
        )

    def _without_temps(self, others: list[str]) -> list[str]:
        """Our temporary files are never snapshotted; those a killed writer left are removed."""
        kept = []
        for rel in others:
            if not is_temp(rel):
                kept.append(rel)
                continue
            path = self.workspace / rel
            try:
                if left_by_dead_process(rel) and stat.S_ISREG(os.lstat(path).st_mode):
                    path.unlink()
            except OSError:
                pass  # gone already, or not ours to remove
        return kept

    def clear_stale_locks(self) -> list[str]:
        """Lock files a killed git left (git asks to remove them by hand); call only
        while no git of ours runs (when the session opens). Returns what was removed."""
        if not self.git_dir.is_dir():
            return []
        removed = []
        for lock in [*self.git_dir.glob("*.lock"), *self.git_dir.glob("refs/**/*.lock")]:
            try:
                lock.unlink()
                removed.append(lock.name)
            except OSError:
                pass
        return removed

    def commit(self, tree: str, message: str, ref: str) -> str:
        # no parent: pruning an old checkpoint's ref must free its objects
        commit = self.run("commit-tree", tree, "-F", "-", input=message.encode()).decode().strip()
        self.run("update-ref", ref, commit)
        return commit

    def delete_ref(self, ref: str) -> None:
        self.run("update-ref", "-d", ref)

    def prune(self) -> None:
        """Drop objects no checkpoint (nor the shadow index) refers to any more."""
        self.run("prune", "--expire=now")

    # -- reading -----------------------------------------------------------------------

    def entries(self, tree: str) -> dict[str, Entry]:
        cached = self._tree_cache.get(tree)
        if cached is not None:
            return cached
        result: dict[str, Entry] = {}
        for rec in self.run("ls-tree", "-r", "-z", "--full-tree", tree).split(b"\0"):
            if not rec:
                continue
            meta, _, path = rec.partition(b"\t")
            mode, _kind, sha = meta.decode().split()
            result[os.fsdecode(path)] = Entry(mode, sha)
        if len(self._tree_cache) > 8:
            self._tree_cache.clear()
        self._tree_cache[tree] = result
        return result

    def numstat(self, a: str, b: str) -> dict[str, tuple[int, int] | None]:
        """Line counts going from tree ``a`` to tree ``b``; None for binary files."""
        out = self.run("diff-tree", "-r", "-z", "--no-renames", "--numstat", a, b)
        result: dict[str, tuple[int, int] | None] = {}
        for rec in out.split(b"\0"):
            if not rec:
                continue
            added, removed, path = rec.split(b"\t", 2)
            key = os.fsdecode(path)
            if added == b"-" or removed == b"-":
                result[key] = None
            else:
                result[key] = (int(added), int(removed))
        return result

    def read_blobs(self, shas: list[str]) -> dict[str, bytes]:
        result: dict[str, bytes] = {}
        wanted = sorted(set(shas))
        for start in range(0, len(wanted), 256):
            chunk = wanted[start : start + 256]
            out = self.run("cat-file", "--batch", input="".join(s + "\n" for s in chunk).encode())
            pos = 0
            for sha in chunk:
                end = out.index(b"\n", pos)
                header = out[pos:end].decode().split()
                if len(header) != 3:
                    raise ShadowError(f"object {sha} is missing from the shadow repository")
                size = int(header[2])
                result[sha] = out[end + 1 : end + 1 + size]
                pos = end + 1 + size + 1
        return result

    def ignored_under(self, tree: str, paths: list[str]) -> set[str]:
        """Which of ``paths`` the ``.gitignore`` files of ``tree`` (an older state) ignore.

        Rebuilds those ignore files and empty stand-ins for the paths in a scratch
        folder and asks git there; the real workspace is not touched.
        """
        gitignores = {
            p: e.sha
            for p, e in self.entries(tree).items()
            if p == ".gitignore" or p.endswith("/.gitignore")
        }
        blobs = self.read_blobs(list(gitignores.values()))
        with tempfile.TemporaryDirectory(dir=self.git_dir.parent) as scratch:
            root = Path(scratch) / "tree"
            for p, sha in gitignores.items():
                (root / p).parent.mkdir(parents=True, exist_ok=True)
                (root / p).write_bytes(blobs[sha])
            for p in paths:
                try:
                    (root / p).parent.mkdir(parents=True, exist_ok=True)
                    (root / p).touch()
                except OSError:
                    continue
            out = self.run(
                "ls-files", "-z", "--others", "--ignored", "--exclude-standard",
                work_tree=root, index=Path(scratch) / "index",
            )
        return set(_split0(out)) & set(paths)


def _join0(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def _write_private(path: Path, text: str) -> None:
    """Written only when it differs, and whole or not at all: on a full disk the old
    content stays (an emptied ``attributes`` would let git convert what it stores)."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    write_atomic(path.parent, path.name, data, mode=0o600, exact_mode=True)
