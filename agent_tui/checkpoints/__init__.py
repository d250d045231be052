"""Checkpoints and rewind: pre-images of edited files, workspace snapshots, rewind plans.

A layer below the core: it imports only the standard library, pydantic and
``agent_tui.paths``. ``Checkpoints`` (manager.py) is the one entry point.
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
