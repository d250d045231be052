"""The checkpoint records: what each checkpoint holds, kept in ``checkpoints.json``.

A record names the checkpoint's snapshot (a tree and a commit in the shadow
repository), the limits of that snapshot (files over the cap, nested repositories),
the snapshots of the folders added to the workspace (``--add-dir``), each in a shadow
repository of its own, and the pre-images of the file tools' writes after it.

Paths are keys: a file of the workspace is keyed by its path relative to the
workspace (as records always were); a file of an added folder by its absolute path,
which starts with ``/`` and so can never be taken for a workspace path. An absolute
key is only ever restored inside the longest of ``Meta.added_roots`` it starts with.

Beside the records, ``written`` remembers what the agent last left in each file, so a
rewind can tell the user's later edits (conflicts) from the agent's own.

The file is rewritten whole and atomically on every change. A damaged file is set
aside (never overwritten) and the records start empty, with a warning that says so.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import os
import time
from datetime import datetime
from pathlib import Path

from pydantic import Field

from agent_tui.atomic import write_atomic
from agent_tui.checkpoints import wording
from agent_tui.checkpoints.models import CheckpointInfo, DeferredModel, SnapshotScope

FILE_NAME = "checkpoints.json"


class UnknownCheckpoint(KeyError):
    pass


class RootSnapshot(DeferredModel):
    """A checkpoint's snapshot of one added folder (as ``Record`` has the workspace's)."""

    tree: str | None = None  # None: the folder could not be snapshotted then
    commit: str | None = None
    skipped_large: list[str] = Field(default_factory=list)  # relative to the folder
    nested_repos: list[str] = Field(default_factory=list)


class Record(DeferredModel):
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
    # the added folders this checkpoint snapshotted, by absolute path
    added: dict[str, RootSnapshot] = Field(default_factory=dict)

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


class Meta(DeferredModel):
    version: int = 1
    next_seq: int = 1
    records: list[Record] = Field(default_factory=list)
    # path -> fingerprint of what the agent last left there (sha256, or "absent")
    written: dict[str, str] = Field(default_factory=dict)
    # every folder added to the workspace that a checkpoint or a file tool's write
    # covered, absolute and resolved, in the order first seen
    added_roots: list[str] = Field(default_factory=list)

    def root_of(self, key: str) -> str | None:
        """The added folder an absolute key belongs to (the longest); None: none."""
        owners = [r for r in self.added_roots if key.startswith(r.rstrip("/") + "/")]
        return max(owners, key=len) if owners else None

    def record(self, checkpoint_id: str) -> Record:
        for rec in self.records:
            if rec.id == checkpoint_id:
                return rec
        raise UnknownCheckpoint(checkpoint_id)

    def since(self, rec: Record) -> list[Record]:
        """``rec`` and every checkpoint after it, oldest first."""
        return [r for r in self.records if r.seq >= rec.seq]

    def pre_images_since(self, rec: Record) -> dict[str, str | None]:
        """Per path, the earliest pre-image after ``rec``: the content at ``rec``."""
        earliest: dict[str, str | None] = {}
        for later in self.since(rec):
            for path, digest in later.pre_images.items():
                earliest.setdefault(path, digest)
        return earliest

    def outside_since(self, rec: Record) -> list[str]:
        """Files outside the workspace the file tools wrote after ``rec``, in order."""
        seen: list[str] = []
        for later in self.since(rec):
            seen += [p for p in later.outside if p not in seen]
        return seen


def load(path: Path) -> tuple[Meta, list[str]]:
    """The records at ``path`` (empty when there is no file), and warnings for the user."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return Meta(), []
    try:
        return Meta.model_validate_json(text), []
    except ValueError:
        aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
        os.replace(path, aside)
        return Meta(), [wording.damaged_records(aside.name)]


def save(path: Path, meta: Meta) -> None:
    write_atomic(path.parent, path.name, meta.model_dump_json().encode())
