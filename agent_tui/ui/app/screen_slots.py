"""A slot holds at most one open screen of a kind (the permission prompt, the rewind
menu, the jobs list, a picker...): the app asks the slot whether one is open, opens
one through it, and the slot forgets the screen when it closes, whoever closed it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from textual.app import App
from textual.screen import Screen

S = TypeVar("S", bound=Screen[Any])


class ScreenSlot(Generic[S]):
    def __init__(self, app: App[Any]) -> None:
        self._app = app
        self.screen: S | None = None

    @property
    def is_open(self) -> bool:
        return self.screen is not None

    def open(self, screen: S, on_close: Callable[[Any], None] | None = None) -> None:
        """Push ``screen`` (the caller checked that none is open); ``on_close(result)``
        runs after the slot has forgotten it."""
        self.screen = screen

        def closed(result: Any) -> None:
            if self.screen is screen:
                self.screen = None
            if on_close is not None:
                on_close(result)

        self._app.push_screen(screen, closed)

    def dismiss(self, result: Any = None) -> None:
        """Close the open screen, if any, with ``result``."""
        screen = self.screen
        if screen is not None:
            self.screen = None
            screen.dismiss(result)
