"""Checkpoints and rewind: pre-images of edited files, workspace snapshots, rewind plans.

A layer below the core: it imports only the standard library, pydantic and the low
helpers (``agent_tui.paths``). ``Checkpoints`` (manager.py) is the one entry point.
Its rooms: ``meta`` (the records), ``shadow`` (snapshots in a shadow git repository),
``store`` (pre-image blobs), ``disk`` (reading and restoring workspace files),
``roots`` (the workspace and the folders added to it, each snapshotted),
``planner`` (what a rewind changes: pure, returns a plan), ``retention`` (pruning old
checkpoints), ``wording`` (what the user is told), ``models`` (what callers get back).
"""

from agent_tui.checkpoints.manager import (
    DEFAULT_BUDGET_BYTES,
    DEFAULT_MAX_CHECKPOINTS,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    Checkpoints,
    UnknownCheckpoint,
)
from agent_tui.checkpoints.models import (
    ChangeKind,
    CheckpointInfo,
    FileChange,
    RestoreReport,
    RewindPlan,
    SnapshotScope,
)

__all__ = [
    "DEFAULT_BUDGET_BYTES",
    "DEFAULT_MAX_CHECKPOINTS",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_FILES",
    "ChangeKind",
    "CheckpointInfo",
    "Checkpoints",
    "FileChange",
    "RestoreReport",
    "RewindPlan",
    "SnapshotScope",
    "UnknownCheckpoint",
]
