"""The workspace's files, for the ``@`` picker: listed once in the background, searched
fuzzily as the user types.

The list comes from ripgrep (``rg --files``, the binary the search tools use: see
:func:`~agent_tui.files.ripgrep.find_rg`), which respects ``.gitignore``,
``.ignore`` and the global git excludes (inside a git repository or not) and skips
``.git/``; it streams, so the first paths are there within milliseconds, and a search
runs over what has been listed so far. Without ``rg`` the folder is walked in Python,
skipping hidden folders (``.gitignore`` is then not read: the picker says so).

A search is a subsequence match (``apy`` finds ``src/app.py``) done by one regular
expression over all paths joined (in C, not a Python loop), then the matches are
ranked: a match in the file name, contiguous and early beats one spread over folders,
shorter paths first. Both the listing and a search can be stopped (``cancel``).
"""

from __future__ import annotations

import bisect
import heapq
import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass

RESULTS = 50  # paths a search returns
CANDIDATES = 20_000  # matches looked at, at most (the regex finds them in path order)
SHORTLIST = 300  # of those, the tightest are ranked in full
MAX_FILES = 500_000  # a listing stops here


@dataclass(frozen=True)
class Found:
    path: str  # relative to the root, "/"-separated; a folder ends with "/"
    positions: tuple[int, ...]  # where the query's characters matched (for highlighting)


_FIND = "find"  # FileIndex(rg=...): look for ripgrep (find_rg)


class FileIndex:
    def __init__(self, root: os.PathLike[str] | str, rg: str | None = _FIND) -> None:
        """``rg``: ripgrep's path, None to walk the folder in Python, by default found."""
        self.root = os.fspath(root)
        if rg == _FIND:
            from agent_tui.files.ripgrep import find_rg  # not on the first frame's path

            rg = find_rg()
        self.rg = rg
        self._lock = threading.Lock()
        self._paths: list[str] = []
        self._blob = ""  # the paths joined by "\n", rebuilt when they changed
        self._lower = ""  # the same, lower case (searched without IGNORECASE: faster)
        self._blob_of = 0  # how many paths the blob holds
        self._sorted: list[str] = []  # the paths sorted, for folders (rebuilt as the blob is)
        self._sorted_of = 0
        self.complete = False
        self.started = 0.0  # when the current listing started (monotonic)
        self.error = ""
        self.respects_gitignore = self.rg is not None
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._listed = threading.Condition(self._lock)
        self._had_full = False  # a listing has completed: partial ones are not shown

    # -- listing ------------------------------------------------------------------

    def refresh(self) -> None:
        """Start a new listing in the background (the old list serves until it ends)."""
        self.cancel()
        self._stop = threading.Event()
        self.started = time.monotonic()
        self.complete = False
        self._thread = threading.Thread(target=self._list, args=(self._stop,), name="agent-tui-files",
                                        daemon=True)
        self._thread.start()

    @property
    def listing(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def cancel(self) -> None:
        """Stop a listing that runs (what it listed so far stays)."""
        self._stop.set()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def wait(self, timeout: float) -> bool:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.complete

    def wait_for(self, count: int, timeout: float) -> int:
        """Wait until ``count`` paths are listed (or the listing ended); how many are."""
        deadline = time.monotonic() + timeout
        with self._listed:
            while len(self._paths) < count and not self.complete and time.monotonic() < deadline:
                self._listed.wait(max(0.0, deadline - time.monotonic()))
            return len(self._paths)

    def _publish(self, stop: threading.Event, paths: list[str], *, done: bool) -> None:
        """Make ``paths`` (the listing's own list, only ever appended to) the one
        searched; readers take it with its length at that moment."""
        with self._listed:
            # A refresh keeps the full old list until the new one is complete.
            if not stop.is_set() and (done or not self._had_full):
                self._paths = paths
                if done:
                    self._had_full = True
            self._listed.notify_all()

    def _list(self, stop: threading.Event) -> None:
        paths: list[str] = []
        try:
            if self.rg is not None:
                self._list_rg(self.rg, stop, paths)
            else:
                self._list_walk(stop, paths)
        except OSError as exc:
            self.error = f"cannot list the files: {exc.strerror or exc}"
        finally:
            if not stop.is_set():
                self._publish(stop, paths, done=True)
                self.complete = True
            with self._listed:
                self._listed.notify_all()

    def _list_rg(self, rg: str, stop: threading.Event, paths: list[str]) -> None:
        argv = [rg, "--files", "--hidden", "--glob", "!.git", "--no-require-git", "--no-messages",
                "--no-config"]
        proc = subprocess.Popen(argv, cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)
        self._proc = proc
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        published = 0.0  # the first piece is published at once: the picker waits for it
        rest = b""
        try:
            # Read what is there in large pieces and split in C: a line at a time in
            # Python would hold the interpreter (and the keys) for the whole listing.
            while not stop.is_set() and len(paths) < MAX_FILES:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                data = rest + chunk
                cut = data.rfind(b"\n") + 1
                rest = data[cut:]
                if cut:
                    paths.extend(data[: cut - 1].decode("utf-8", "replace").split("\n"))
                now = time.monotonic()
                if now - published > 0.05 or len(paths) <= 1000:
                    self._publish(stop, paths, done=False)
                    published = now
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stdout.close()

    def _list_walk(self, stop: threading.Event, paths: list[str]) -> None:
        published = time.monotonic()
        for folder, dirs, files in os.walk(self.root):
            if stop.is_set() or len(paths) >= MAX_FILES:
                return
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            rel = os.path.relpath(folder, self.root)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            paths.extend(prefix + name for name in sorted(files))
            if time.monotonic() - published > 0.05:
                self._publish(stop, paths, done=False)
                published = time.monotonic()

    # -- what is listed -----------------------------------------------------------------

    def paths(self) -> list[str]:
        """What is listed now (a copy: the listing may still be adding to it)."""
        with self._lock:
            return self._paths[:]

    def _snapshot(self) -> tuple[str, str]:
        with self._lock:
            paths, count = self._paths, len(self._paths)
            if self._blob_of != count or not self._blob:
                self._blob = "\n".join(paths[:count]) + "\n"
                self._lower = self._blob.lower()
                self._blob_of = count
            return self._blob, self._lower

    def _sorted_paths(self) -> list[str]:
        with self._lock:
            paths, count = self._paths, len(self._paths)
            if self._sorted_of != count:
                # ripgrep lists a folder at a time: nearly sorted, so this is quick.
                self._sorted = sorted(paths[:count])
                self._sorted_of = count
            return self._sorted

    def folder(self, prefix: str) -> list[str]:
        """What ``prefix`` (a folder, "" for the root, ending in "/") holds: its
        folders (with "/") first, then its files, each once.

        Over the sorted paths: a folder's paths are one run, skipped with one bisection
        (``"0"`` is the character after ``"/"``), so this costs the entries shown, not
        the paths listed."""
        paths = self._sorted_paths()
        folders: list[str] = []
        files: list[str] = []
        at = bisect.bisect_left(paths, prefix)
        while at < len(paths) and paths[at].startswith(prefix):
            cut = paths[at].find("/", len(prefix))
            if cut < 0:
                files.append(paths[at])
                at += 1
            else:
                folders.append(paths[at][: cut + 1])
                at = bisect.bisect_left(paths, paths[at][:cut] + "0", at)
        return folders + files

    def search(self, query: str, limit: int = RESULTS, cancelled: threading.Event | None = None) -> list[Found]:
        """The best paths for ``query`` (a fuzzy subsequence, case-insensitive)."""
        blob, lower = self._snapshot()
        query = query.strip().lower()
        if not query:
            found = blob.split("\n", limit)[:limit]
            return [Found(p, ()) for p in found if p]
        # Each character, then anything but the next one up to it (possessive: no
        # backtracking, so a search is linear in the size of the listing).
        parts = [re.escape(query[0])]
        parts += [f"[^\n{re.escape(c)}]*+{re.escape(c)}" for c in query[1:]]
        regex = re.compile("".join(parts))
        # First cut: how tight the leftmost match is, then how short the path.
        rough: list[tuple[int, int, int, int]] = []
        pos = 0
        while len(rough) < CANDIDATES and not (cancelled is not None and cancelled.is_set()):
            match = regex.search(lower, pos)
            if match is None:
                break
            start = lower.rfind("\n", 0, match.start()) + 1
            end = lower.find("\n", match.end())
            pos = end + 1
            rough.append((match.end() - match.start(), end - start, start, end))
        ranked: list[tuple[tuple[int, ...], Found]] = []
        for _span, _length, start, end in heapq.nsmallest(SHORTLIST, rough):
            ranking = rank(blob[start:end], query)
            if ranking is not None:
                ranked.append(ranking)
        ranked.sort(key=lambda pair: (pair[0], pair[1].path))  # ties: stable across runs
        return [found for _, found in ranked[:limit]]


def rank(path: str, query: str) -> tuple[tuple[int, ...], Found] | None:
    """Where ``query`` matches ``path``, preferring the file name, and a sort key
    (lower is better): matched in the name or not, gaps, where it starts, length."""
    lower, q = path.lower(), query.lower()
    name_at = lower.rfind("/", 0, len(lower) - 1) + 1
    best: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    for start in (name_at, 0):
        positions = _greedy(lower, q, start)
        if positions is None:
            continue
        gaps = sum(b - a - 1 for a, b in zip(positions, positions[1:]))
        in_name = 0 if positions[0] >= name_at else 1
        first = positions[0]
        at_word = 0 if first == name_at or first == 0 or lower[first - 1] in "/_-. " else 1
        key = (in_name, at_word, gaps, first - (name_at if in_name == 0 else 0), len(path))
        if best is None or key < best[0]:
            best = (key, positions)
    if best is None:
        return None
    return best[0], Found(path, best[1])


def _greedy(text: str, q: str, start: int) -> tuple[int, ...] | None:
    """A subsequence match of ``q`` in ``text`` from ``start``: the earliest end,
    then each earlier character as late as it can be (the shortest run ending there)."""
    at = start
    positions: list[int] = []
    for c in q:
        at = text.find(c, at)
        if at < 0:
            return None
        positions.append(at)
        at += 1
    # Tighten: walk back from the last match so the run is as short as possible.
    end = positions[-1]
    tight = [end]
    for c in reversed(q[:-1]):
        end = text.rfind(c, start, end)
        tight.append(end)
    return tuple(reversed(tight))
