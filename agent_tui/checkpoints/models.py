"""What the checkpoint layer tells its callers: checkpoints, rewind plans, restore reports.

Every path in these models is relative to the workspace, with ``/`` separators, but
for the files of a folder added to the workspace (``--add-dir``): those are absolute. A
``FileChange`` describes what the *rewind* would do to a file (not what happened to it
since the checkpoint): ``added`` means the rewind re-creates a file that is gone now,
``deleted`` means the rewind removes a file that did not exist at the checkpoint, and
``lines_added`` / ``lines_removed`` count the lines the rewind puts back / takes away.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field



class DeferredModel(BaseModel):
    """Built on its first use (protocol/model_base.py, which this layer does not import):
    a session that rewinds nothing never reads most of these."""

    model_config = ConfigDict(defer_build=True)


class SnapshotScope(StrEnum):
    """How much of the workspace a checkpoint covers."""

    WORKSPACE = "workspace"  # a snapshot of every file (bar ignored and over-the-cap ones)
    FILE_TOOLS_ONLY = "file_tools_only"  # no snapshot: only write_file/edit_file pre-images


class CheckpointInfo(DeferredModel):
    id: str
    label: str
    time: datetime
    scope: SnapshotScope
    # Limits of what this checkpoint covers; tell the user now, not at rewind time.
    warnings: list[str] = Field(default_factory=list)
    # What ``take`` did besides (old checkpoints pruned); only on the answer of ``take``.
    notices: list[str] = Field(default_factory=list)


class ChangeKind(StrEnum):
    ADDED = "added"  # the rewind re-creates the file
    MODIFIED = "modified"  # the rewind changes the file back
    DELETED = "deleted"  # the rewind removes the file


class FileChange(DeferredModel):
    path: str
    kind: ChangeKind
    lines_added: int | None = None  # None for binary files and symlinks
    lines_removed: int | None = None
    binary: bool = False
    # Someone other than the agent changed the file since the agent last wrote it:
    # a restore leaves it alone unless told to overwrite conflicts.
    conflict: bool = False
    # Where the old content comes from: the workspace snapshot, or a file tool's pre-image.
    source: Literal["snapshot", "pre_image"] = "snapshot"


class RewindPlan(DeferredModel):
    checkpoint_id: str
    label: str
    time: datetime
    changes: list[FileChange] = Field(default_factory=list)
    # What a rewind cannot undo: files outside the workspace, remote side effects,
    # processes, files the checkpoint did not cover.
    not_undoable: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def conflicts(self) -> list[FileChange]:
        return [c for c in self.changes if c.conflict]


class RestoreReport(DeferredModel):
    checkpoint_id: str
    # The checkpoint taken just before the restore: rewind to it to undo this rewind.
    undo_checkpoint_id: str
    restored: list[FileChange] = Field(default_factory=list)
    skipped_conflicts: list[FileChange] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    not_undoable: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    notices: list[str] = Field(default_factory=list)
