"""How ``read_file`` shows a file: its lines from an offset, each cut at a width, within
a line, character and scan budget that says how to read on; an image as an image block;
a binary file as its size."""

from __future__ import annotations

import io
import os
from typing import BinaryIO

from agent_tui.core.calls.tool import ToolResult
from agent_tui.files.images import read_image, sniff_image
from agent_tui.protocol import ToolState
from agent_tui.units import format_bytes

DEFAULT_LINES = 2000  # lines shown when the call gives no limit
MAX_LINE_CHARS = 2000  # a longer line is cut
MAX_OUTPUT_CHARS = 100_000  # read_file output, all lines together
MAX_SCAN_BYTES = 64 * 1024 * 1024  # bytes read looking for an offset or a line end
SNIFF_BYTES = 8192  # a NUL byte in here means binary
_LINE_BYTES = MAX_LINE_CHARS * 4  # UTF-8: at most 4 bytes a character


class _Lines:
    """Lines of a file, each cut at ``_LINE_BYTES``, within a scan budget."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.budget = MAX_SCAN_BYTES
        self.exhausted = False

    def next(self) -> tuple[bytes, int] | None:
        """(the line's first bytes, how many bytes were cut), or None at the end."""
        if self.budget <= 0:
            self.exhausted = self.fh.read(1) != b""
            return None
        raw = self.fh.readline(min(_LINE_BYTES, self.budget))
        if not raw:
            return None
        self.budget -= len(raw)
        cut = 0
        if not raw.endswith(b"\n"):  # longer than we show (or the last line): skip the rest
            while self.budget > 0:
                chunk = self.fh.readline(min(1 << 16, self.budget))
                if not chunk:
                    break
                self.budget -= len(chunk)
                if chunk.endswith(b"\n"):
                    cut += len(chunk) - 1  # the newline is not content
                    break
                cut += len(chunk)
        return raw, cut


def read_lines(fh: BinaryIO, shown: str, start: int, limit: int | None) -> ToolResult:
    size = fh.getbuffer().nbytes if isinstance(fh, io.BytesIO) else os.fstat(fh.fileno()).st_size
    head = fh.read(SNIFF_BYTES)
    media = sniff_image(head)
    if media is not None:  # a screenshot: the model looks at it
        text, blocks = read_image(fh, size, media)
        return ToolResult(outcome=ToolState.SUCCEEDED, content=f"{shown}: {text}", blocks=blocks)
    if b"\0" in head:
        return ToolResult.ok(f"{shown}: binary file, {size} bytes (not shown)")
    if not head:
        return ToolResult.ok(f"{shown} is empty (0 bytes)")
    fh.seek(0)
    want = limit if limit is not None else DEFAULT_LINES
    lines = _Lines(fh)
    out: list[str] = []
    chars = 0
    lineno = 0
    stopped: str | None = None  # why we stopped before the end of the file
    while True:
        item = lines.next()
        if item is None:
            if lines.exhausted:
                stopped = f"stopped after scanning {format_bytes(MAX_SCAN_BYTES)}"
            break
        lineno += 1
        if lineno < start:
            continue
        if len(out) >= want:
            stopped = "line limit reached" if limit is None else "more lines follow"
            lineno -= 1
            break
        raw, cut = item
        text = raw.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
        if len(text) > MAX_LINE_CHARS or cut:
            extra = len(text) - MAX_LINE_CHARS
            more = f"{extra} more characters" if not cut else f"{cut + max(extra, 0)}+ more bytes"
            text = f"{text[:MAX_LINE_CHARS]}… [line cut: {more}]"
        entry = f"{lineno:>6}\t{text}"
        if chars + len(entry) + 1 > MAX_OUTPUT_CHARS and out:
            stopped = f"output limit of {MAX_OUTPUT_CHARS} characters reached"
            lineno -= 1
            break
        out.append(entry)
        chars += len(entry) + 1
    if not out:
        if stopped:
            return ToolResult.ok(f"{shown}: {stopped} before line {start}; nothing shown")
        return ToolResult.ok(
            f"{shown} has {lineno} lines; offset {start} is past the end (nothing shown)"
        )
    text = "\n".join(out)
    if stopped:
        text += (
            f"\n[{shown}: showed lines {start}-{lineno}; {stopped}; "
            f"read on with offset={lineno + 1}]"
        )
    result = ToolResult.ok(text)
    result.details = {
        "path": shown,
        "first_line": start,
        "last_line": lineno,
        "complete": not stopped,
    }
    return result
