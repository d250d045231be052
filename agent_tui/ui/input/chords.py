"""The user's chords (``"ctrl+k ctrl+s"`` in keybindings.json) as the keys arrive.

The app gives every key to :meth:`ChordKeys.take` before any binding sees it. A key
that begins a chord is held: the status line says which keys are pending, and the
next key either completes the chord (its action runs, queued behind the keys typed
before it, so nothing overtakes the text), leads further into a longer chord, or
cancels it (Esc, a key no chord continues with, or no key within
:data:`CHORD_TIMEOUT_S`, as Claude Code). A held or cancelling key is never typed.

A chord of the input's (a Chat action) is only taken while the input has the focus;
no chord is taken while another screen (a picker, a dialog) is on top.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from agent_tui.ui.input.keybindings import ChordBinding

CHORD_TIMEOUT_S = 3.0  # Claude Code's chord timeout


class ChordHost(Protocol):
    """What the chords use of the app."""

    def chord_hint(self, text: str) -> None: ...
    def notice(self, level: str, text: str) -> None: ...
    def chord_context(self) -> frozenset[str]: ...  # "app", "input": where keys go now
    def run_chord(self, chord: ChordBinding) -> None: ...
    def chord_timer(self, seconds: float, callback: Callable[[], None]) -> Any: ...


class ChordState(Enum):
    IDLE = "idle"
    PENDING = "pending"  # a chord's first keys pressed, waiting for the next


@dataclass
class _Pending:
    keys: tuple[str, ...]
    timer: Any  # what chord_timer returned (its stop() cancels it)


class ChordKeys:
    def __init__(self, host: ChordHost, timeout_s: float = CHORD_TIMEOUT_S) -> None:
        self.host = host
        self.timeout_s = timeout_s
        self.chords: list[ChordBinding] = []
        self._pending: _Pending | None = None

    @property
    def state(self) -> ChordState:
        return ChordState.IDLE if self._pending is None else ChordState.PENDING

    @property
    def pending(self) -> tuple[str, ...]:
        return self._pending.keys if self._pending is not None else ()

    def load(self, chords: list[ChordBinding]) -> None:
        """The chords in force from now (a pending one is dropped)."""
        self._end()
        self.chords = list(chords)

    def take(self, key: str) -> bool:
        """True when ``key`` belongs to a chord (held, completing or cancelling one):
        no binding nor the input sees it then."""
        if self._pending is None:
            if not self._candidates((key,)):
                return False
            self._hold((key,))
            return True
        keys = (*self._pending.keys, key)
        if key == "escape":
            self._end()
            self.host.notice("info", f"{' '.join(keys[:-1])} cancelled")
            return True
        if self._candidates(keys, longer=True):
            self._hold(keys)
            return True
        done = next((c for c in self._candidates(keys) if c.keys == keys), None)
        self._end()
        if done is None:
            self.host.notice("info", f"{' '.join(keys)}: no such chord (cancelled)")
        else:
            self.host.run_chord(done)
        return True

    def _candidates(self, keys: tuple[str, ...], longer: bool = False) -> list[ChordBinding]:
        where = self.host.chord_context()
        return [c for c in self.chords if c.whose in where and c.keys[:len(keys)] == keys
                and (len(c.keys) > len(keys) or not longer)]

    def _hold(self, keys: tuple[str, ...]) -> None:
        self._end()
        self._pending = _Pending(keys, self.host.chord_timer(self.timeout_s, self._timed_out))
        nexts = sorted({c.keys[len(keys)] for c in self._candidates(keys)})
        self.host.chord_hint(f"{' '.join(keys)} … waiting for {' or '.join(nexts[:3])}"
                             f"{' or …' if len(nexts) > 3 else ''} (esc cancels)")

    def _timed_out(self) -> None:
        if self._pending is None:
            return
        keys = self._pending.keys
        self._end()
        self.host.notice("info", f"{' '.join(keys)} cancelled: no next key within "
                                 f"{self.timeout_s:g} s")

    def _end(self) -> None:
        if self._pending is not None:
            self._pending.timer.stop()
            self._pending = None
            self.host.chord_hint("")
