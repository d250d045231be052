"""Steering and follow-up queues.

A steer is a message typed while a turn runs: it is injected after the current
batch of tool results, before the next model call. A follow-up waits until the
agent stops on its own and then starts a new turn. On interrupt, everything still
queued is returned to the user (never sent unseen).
"""

from __future__ import annotations

from collections.abc import Sequence
import itertools
from collections import deque

from pydantic import Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.protocol import ImageAttachment, SteerKind


class Queued(DeferredModel):
    id: str
    kind: SteerKind
    text: str
    images: list[ImageAttachment] = Field(default_factory=list)  # kept through an edit


class MessageQueue:
    def __init__(self) -> None:
        self._steers: deque[Queued] = deque()
        self._follow_ups: deque[Queued] = deque()
        self._ids = itertools.count(1)

    def add(self, kind: SteerKind, text: str, images: Sequence[ImageAttachment] = ()) -> Queued:
        prefix = "s" if kind is SteerKind.STEER else "f"
        item = Queued(id=f"{prefix}{next(self._ids)}", kind=kind, text=text, images=list(images))
        (self._steers if kind is SteerKind.STEER else self._follow_ups).append(item)
        return item

    def take_steers(self) -> list[Queued]:
        items = list(self._steers)
        self._steers.clear()
        return items

    def take_follow_up(self) -> Queued | None:
        return self._follow_ups.popleft() if self._follow_ups else None

    def take_all(self) -> list[Queued]:
        """Everything still queued, steers first (for returning on interrupt)."""
        items = list(self._steers) + list(self._follow_ups)
        self._steers.clear()
        self._follow_ups.clear()
        return items

    def _find(self, item_id: str) -> tuple[deque[Queued], Queued] | None:
        for items in (self._steers, self._follow_ups):
            for item in items:
                if item.id == item_id:
                    return items, item
        return None

    def edit(self, item_id: str, text: str) -> Queued | None:
        """Change a queued item's text; None when it is no longer queued (applied)."""
        found = self._find(item_id)
        if found is None:
            return None
        found[1].text = text
        return found[1]

    def remove(self, item_id: str) -> Queued | None:
        found = self._find(item_id)
        if found is None:
            return None
        items, item = found
        items.remove(item)
        return item
