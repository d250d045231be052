"""The rewind planner on its own: facts in, a plan out, nothing read but what it is handed.

The snapshots and files here are in memory (the planner reads them only through its
two ports); the manager's tests in test_checkpoints.py cover the same rules with real
git and real files.
"""

from __future__ import annotations

import hashlib

from agent_tui.checkpoints import wording
from agent_tui.checkpoints.disk import ABSENT, DiskState, count_lines
from agent_tui.checkpoints.models import ChangeKind
from agent_tui.checkpoints.planner import RewindFacts, plan_rewind
from agent_tui.checkpoints.shadow import Entry, ShadowError
from agent_tui.checkpoints.store import BlobMissing


def _sha(data: bytes) -> str:
    return DiskState("file", data).git_sha() or ""


class Snapshots:
    """Trees as {path: content}; a tree not listed cannot be read."""

    def __init__(self, trees: dict[str, dict[str, bytes]], ignored: set[str] = set()) -> None:
        self.trees = trees
        self.ignored = ignored
        self.blobs = {_sha(d): d for t in trees.values() for d in t.values()}

    def entries(self, tree: str) -> dict[str, Entry]:
        if tree not in self.trees:
            raise ShadowError(f"no tree {tree}")
        return {p: Entry("100644", _sha(d)) for p, d in self.trees[tree].items()}

    def numstat(self, a: str, b: str) -> dict[str, tuple[int, int] | None]:
        old, new = self.trees[a], self.trees[b]
        return {p: count_lines(old.get(p), new.get(p)) for p in set(old) | set(new)}

    def read_blobs(self, shas: list[str]) -> dict[str, bytes]:
        return {s: self.blobs[s] for s in shas}

    def ignored_under(self, tree: str, paths: list[str]) -> set[str]:
        return self.ignored & set(paths)


class Files:
    def __init__(self, files: dict[str, bytes], blobs: dict[str, bytes] | None = None) -> None:
        self.files = files
        self.blobs = blobs or {}

    def state(self, path: str) -> DiskState:
        return DiskState("file", self.files[path]) if path in self.files else DiskState(ABSENT)

    def pre_image(self, digest: str) -> bytes:
        try:
            return self.blobs[digest]
        except KeyError:
            raise BlobMissing(digest) from None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_snapshot_decides_a_file_made_by_a_command_before_a_tool_wrote_it() -> None:
    # a command created new.txt after the checkpoint, then write_file changed it: its
    # pre-image is the command's content, but the snapshot says it did not exist then
    made = b"made by a command\n"
    snaps = Snapshots({"then": {"a.txt": b"a\n"}, "now": {"a.txt": b"a\n", "new.txt": b"x\n"}})
    files = Files({"a.txt": b"a\n", "new.txt": b"x\n"}, {_digest(made): made})
    facts = RewindFacts(then_tree="then", now_tree="now", pre_images={"new.txt": _digest(made)})

    plan = plan_rewind(facts, files, snaps)

    assert [(c.path, c.kind) for c in plan.changes] == [("new.txt", ChangeKind.DELETED)]
    assert plan.not_undoable == ()


def test_changed_and_gone_files_come_back_with_their_line_counts() -> None:
    snaps = Snapshots({
        "then": {"a.txt": b"one\ntwo\n", "gone.txt": b"g\n"},
        "now": {"a.txt": b"one\n"},
    })
    files = Files({"a.txt": b"one\n"})

    plan = plan_rewind(RewindFacts(then_tree="then", now_tree="now"), files, snaps)

    by_path = {c.path: c for c in plan.changes}
    assert by_path["a.txt"].kind is ChangeKind.MODIFIED
    assert (by_path["a.txt"].lines_added, by_path["a.txt"].lines_removed) == (1, 0)
    assert by_path["gone.txt"].kind is ChangeKind.ADDED
    assert [i.path for i in plan.items] == sorted(by_path)


def test_an_unreadable_snapshot_falls_back_to_pre_images_and_says_so() -> None:
    old = b"before\n"
    files = Files({"a.txt": b"after\n"}, {_digest(old): old})
    facts = RewindFacts(then_tree="pruned", now_tree=None, pre_images={"a.txt": _digest(old)})

    plan = plan_rewind(facts, files, Snapshots({}))

    assert [(c.path, c.kind, c.source) for c in plan.changes] == [
        ("a.txt", ChangeKind.MODIFIED, "pre_image")
    ]
    assert plan.warnings[0].startswith("the snapshot of this checkpoint cannot be read")
    assert plan.not_undoable == (wording.NOT_SNAPSHOTTED,)


def test_a_missing_pre_image_is_a_warning_not_a_change() -> None:
    facts = RewindFacts(then_tree=None, pre_images={"a.txt": _digest(b"lost")})

    plan = plan_rewind(facts, Files({"a.txt": b"now"}), None)

    assert plan.changes == []
    assert plan.warnings == (wording.pre_image_missing("a.txt"),)


def test_a_file_changed_since_the_agent_wrote_it_is_a_conflict() -> None:
    snaps = Snapshots({"then": {"a.txt": b"a\n"}, "now": {"a.txt": b"user\n"}})
    files = Files({"a.txt": b"user\n"})
    agent_left = DiskState("file", b"agent\n").fingerprint()
    facts = RewindFacts(then_tree="then", now_tree="now", written={"a.txt": agent_left})

    (change,) = plan_rewind(facts, files, snaps).changes

    assert change.conflict


def test_planning_leaves_its_facts_as_they_were() -> None:
    pre = {"b.txt": None}
    written = {"b.txt": "absent"}
    facts = RewindFacts(then_tree=None, pre_images=pre, written=written, outside=("/etc/x",))

    plan = plan_rewind(facts, Files({"b.txt": b"new"}), None)

    assert [(c.path, c.kind) for c in plan.changes] == [("b.txt", ChangeKind.DELETED)]
    assert wording.outside("/etc/x") in plan.not_undoable
    assert pre == {"b.txt": None} and written == {"b.txt": "absent"}
