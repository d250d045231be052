"""How many checkpoints are kept, and how much room they may take.

After each new checkpoint the oldest ones go, first down to the count limit, then
(with git's unreachable objects pruned) until the checkpoints fit their size budget;
the newest is always kept, and so are the ones the caller protects (the checkpoint a
restore goes to). What was removed is said in a notice: the user can no longer
rewind there.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_tui.checkpoints import wording
from agent_tui.checkpoints.meta import Meta, Record
from agent_tui.checkpoints.shadow import ShadowError, ShadowRepo
from agent_tui.checkpoints.store import BlobStore


class Retention:
    """Drops old checkpoints: their refs in the shadow repositories and their pre-images."""

    def __init__(
        self,
        shadows: Callable[[], dict[str, ShadowRepo | None]],
        blobs: BlobStore,
        *,
        usage: Callable[[], int],
        save: Callable[[], None],
    ) -> None:
        self._shadows = shadows  # by folder: "" the workspace's, else an added folder's
        self._blobs = blobs
        self._usage = usage
        self._save = save

    def enforce(
        self, meta: Meta, protect: set[str], *, max_checkpoints: int, budget_bytes: int
    ) -> list[str]:
        """Drop what is over the limits; the notices say what went."""
        notices: list[str] = []
        dropped: list[Record] = []
        while len(meta.records) > max_checkpoints:
            victim = next((r for r in meta.records if r.id not in protect), None)
            if victim is None:
                break
            self._drop(meta, victim)
            dropped.append(victim)
        if dropped:
            self._gc()
            notices.append(wording.dropped_by_count([r.label for r in dropped], max_checkpoints))
        if budget_bytes and self._usage() > budget_bytes:
            self._gc()
            dropped = []
            while self._usage() > budget_bytes and len(meta.records) > 1:
                victim = next((r for r in meta.records if r.id not in protect), None)
                if victim is None:
                    break
                self._drop(meta, victim)
                dropped.append(victim)
                self._gc()
            if dropped:
                notices.append(wording.dropped_by_size([r.label for r in dropped], budget_bytes))
            usage = self._usage()
            if usage > budget_bytes:
                notices.append(wording.over_budget(usage, budget_bytes))
        return notices

    def _drop(self, meta: Meta, rec: Record) -> None:
        meta.records.remove(rec)
        shadows = self._shadows()
        commits = {"": rec.commit} | {name: snap.commit for name, snap in rec.added.items()}
        for name, commit in commits.items():
            shadow = shadows.get(name)
            if commit and shadow is not None:
                try:
                    shadow.delete_ref(rec.ref)
                except ShadowError:
                    pass
        still = {d for r in meta.records for d in r.pre_images.values() if d}
        for digest in rec.pre_images.values():
            if digest and digest not in still:
                self._blobs.delete(digest)
        self._save()

    def _gc(self) -> None:
        for shadow in self._shadows().values():
            if shadow is not None and (shadow.git_dir / "HEAD").exists():
                try:
                    shadow.prune()
                except ShadowError:
                    pass
