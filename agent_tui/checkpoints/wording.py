"""Every sentence the checkpoint layer tells the user: warnings, notices, what a rewind
cannot undo. Kept apart so the planner and the manager read as logic, and so the
wording is changed in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_tui.units import format_bytes


def some(paths: Sequence[str], limit: int = 5) -> str:
    """The first few paths, and how many more there are."""
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def damaged_records(aside: str) -> str:
    return f"the checkpoint records were damaged (kept as {aside}); earlier checkpoints are lost"


# -- taking a snapshot -----------------------------------------------------------------


def no_snapshot(why: str) -> str:
    """A checkpoint without a workspace snapshot: only the file tools' edits are covered."""
    return (
        f"{why}; changes made by shell commands cannot be rewound from this checkpoint, "
        "only write_file/edit_file edits are covered"
    )


def too_many_files(files: int, cap: int) -> str:
    return (
        f"workspace too large to snapshot: {files} files over the cap of "
        f"{cap}; only file-tool edits are covered from here"
    )


def skipped_large(paths: Sequence[str], max_file_bytes: int) -> str:
    return (
        f"{count(len(paths), 'file')} over {format_bytes(max_file_bytes)} "
        f"not snapshotted ({some(paths)}): only file-tool edits to "
        "them can be rewound"
    )


def nested_repos(paths: Sequence[str]) -> str:
    return (
        f"nested git repositories not snapshotted ({some(paths)}): "
        "changes inside them cannot be rewound"
    )


def unreadable(paths: Sequence[str]) -> str:
    return f"unreadable files not snapshotted ({some(paths)})"


def undo_label(label: str) -> str:
    """The label of the checkpoint a restore takes first."""
    return f"before rewind to “{label}”"


# -- planning a rewind -----------------------------------------------------------------


def snapshot_unreadable(exc: Exception) -> str:
    return f"the snapshot of this checkpoint cannot be read ({exc})"


def not_snapshotted(where: str) -> str:
    return (
        f"changes made by shell commands since this checkpoint ({where} was not "
        "snapshotted): only write_file/edit_file edits are undone"
    )


NOT_SNAPSHOTTED = not_snapshotted("the workspace")


def root_missing(folder: str) -> str:
    return (
        f"the added folder {folder} no longer exists (or is no longer that folder): "
        "nothing in it is snapshotted or restored"
    )

NO_SNAPSHOT_NOW = (
    "the workspace cannot be snapshotted now, so files created since this "
    "checkpoint are not deleted (unless write_file created them)"
)


def outside(path: str) -> str:
    return f"{path}: written outside the workspace, not restored"


def large_then(paths: Sequence[str]) -> str:
    return (
        f"files over the size cap at this checkpoint ({some(paths)}): "
        "only write_file/edit_file edits to them are undone"
    )


def nested_then(paths: Sequence[str]) -> str:
    return f"nested git repositories ({some(paths)}): not restored"


def kept_ignored(paths: Sequence[str]) -> str:
    return (
        f"kept {some(paths)}: ignored by .gitignore at this checkpoint, "
        "so it may have existed then"
    )


def large_since(paths: Sequence[str]) -> str:
    return (
        f"files over the size cap created since ({some(paths)}): not deleted "
        "unless write_file created them"
    )


def pre_image_missing(path: str) -> str:
    return f"{path}: its saved old content is missing; not restored"


# -- retention -------------------------------------------------------------------------


def _oldest(labels: Sequence[str]) -> str:
    if len(labels) == 1:
        return f"the oldest checkpoint (“{labels[0]}”)"
    return f"the {len(labels)} oldest checkpoints (“{labels[0]}” to “{labels[-1]}”)"


def _lost(labels: Sequence[str]) -> str:
    return "you can no longer rewind to " + ("it." if len(labels) == 1 else "them.")


def dropped_by_count(labels: Sequence[str], max_checkpoints: int) -> str:
    return (
        f"Removed {_oldest(labels)} to keep at most {max_checkpoints} "
        f"checkpoints: {_lost(labels)}"
    )


def dropped_by_size(labels: Sequence[str], budget_bytes: int) -> str:
    return (
        f"Removed {_oldest(labels)} to keep checkpoints within "
        f"{format_bytes(budget_bytes)}: {_lost(labels)}"
    )


def over_budget(usage: int, budget_bytes: int) -> str:
    return (
        f"Checkpoints take {format_bytes(usage)}, over their budget of "
        f"{format_bytes(budget_bytes)}, even with only the newest kept."
    )
