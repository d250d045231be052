"""A run's output: bounded capture for the model, throttled streaming for the UI.

Also ``strip_ansi``, which turns terminal output into what a reader sees, and
``terminal_safe``, what may be written to a terminal.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable


_ANSI = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC ... BEL/ST (titles, hyperlinks)
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI (colours, cursor moves)
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
)


def _collapse_overwrites(line: str) -> str:
    r"""Keep what a carriage return left visible: "10%\r50%\r100%" reads "100%"."""
    if "\r" not in line:
        return line
    ending = "\r" if line.endswith("\r") else ""  # the \r of a \r\n line ending
    return line[: len(line) - len(ending)].rsplit("\r", 1)[-1] + ending


def strip_ansi(text: str) -> str:
    """Terminal escapes out, carriage-return overwrites collapsed: what a reader sees.

    Linear in the text (no backtracking regex over long lines: floods are common here).
    """
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = "\n".join(_collapse_overwrites(line) for line in text.split("\n"))
    return text


#: Control characters a terminal acts on (C0 but tab and newline, DEL, C1).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with no escape sequence or control character left (but tab and newline):
    nothing in it can move a cursor, set a title or write to the clipboard."""
    return _CONTROLS.sub("", strip_ansi(text))


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class OutputCapture:
    """Head and tail of a byte stream in bounded memory; the middle is only counted."""

    def __init__(self, head_bytes: int, tail_bytes: int) -> None:
        self._head_max = head_bytes
        self._tail_max = tail_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self.total_bytes = 0

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        room = self._head_max - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        if len(data) >= self._tail_max:
            self._tail = bytearray(data[-self._tail_max :])
        else:
            self._tail += data
            excess = len(self._tail) - self._tail_max
            if excess > 0:
                del self._tail[:excess]

    @property
    def dropped_bytes(self) -> int:
        return self.total_bytes - len(self._head) - len(self._tail)

    def text(self) -> str:
        """The model view: ANSI stripped, the dropped middle marked with its size."""
        head = strip_ansi(_decode(bytes(self._head)))
        if not self._tail:
            return head
        tail = strip_ansi(_decode(bytes(self._tail)))
        dropped = self.dropped_bytes
        if dropped:
            return f"{head}\n[... {dropped} bytes of output omitted ...]\n{tail}"
        return head + tail


class OutputThrottle:
    """Coalesces output for the UI: one call per interval at most, each bounded.

    Under a flood the UI sees the newest text of each interval and a note of how much
    was skipped, so it can never be drowned.
    """

    def __init__(self, emit: Callable[[str], None], interval_s: float, max_bytes: int) -> None:
        self._emit = emit
        self._interval = interval_s
        self._max = max_bytes
        self._pending = bytearray()
        self._skipped = 0
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def feed(self, data: bytes) -> None:
        self._pending += data
        excess = len(self._pending) - self._max
        if excess > 0:
            del self._pending[:excess]
            self._skipped += excess
        wait = self._last + self._interval - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending and not self._skipped:
            return
        text = strip_ansi(_decode(bytes(self._pending)))
        if self._skipped:
            text = f"[... {self._skipped} bytes not shown ...]\n{text}"
        self._pending.clear()
        self._skipped = 0
        self._last = time.monotonic()
        try:
            self._emit(text)
        except Exception:  # noqa: BLE001 - a broken sink must not break the run
            pass

    def note(self, text: str) -> None:
        """Show ``text`` now, after what is pending (a progress line, not output)."""
        self.flush()
        try:
            self._emit(text)
        except Exception:  # noqa: BLE001 - a broken sink must not break the run
            pass
