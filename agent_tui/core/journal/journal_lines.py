"""A journal line: one record's JSON with the CRC-32 of it, written and read back.

A line cut short or changed on disk fails its checksum and is set aside, never taken
for what it seemed to say; :class:`SetAside` is what such a line seems to hold, for
the user. A torn last line is moved to the side file (``SET_ASIDE_SUFFIX``) before the
next append.
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any

from pydantic import ValidationError

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.core.journal.records import RECORD_ADAPTER, Record


class SetAside(DeferredModel):
    """A line of a loaded journal that could not be trusted, and what it seems to hold."""

    line: int
    kind: str | None = None
    tool_use_id: str | None = None
    torn: bool = False  # the last line, cut short (a crash while it was written)

    @classmethod
    def of(cls, number: int, raw: bytes, *, torn: bool) -> SetAside:
        """What the untrusted line ``number`` seems to hold (its kind, its tool call)."""
        text = raw.decode("utf-8", errors="replace")[:4000]
        kind = _KIND.search(text)
        tool = _TOOL_USE_ID.search(text)
        return cls(line=number, kind=kind.group(1) if kind else None,
                   tool_use_id=tool.group(1) if tool else None, torn=torn)

    def describe(self) -> str:
        what = self.kind or "unreadable"
        if self.kind == "tool_result" and self.tool_use_id:
            what = f"the result of {self.tool_use_id}, which now reads as unknown"
        elif self.tool_use_id:
            what += f" of {self.tool_use_id}"
        return f"line {self.line}{' (cut short)' if self.torn else ''}: {what}"


# Each line ends with the CRC-32 of the record's JSON before it: a line that was cut
# short or changed on disk is set aside, never taken for what it seemed to say.
_CRC_TAIL = re.compile(rb',"crc":"([0-9a-f]{8})"\}$')
# The shape of a checksum tail with its key or digits changed: such a line is damaged,
# not one written before lines had a checksum.
_CRC_SHAPED = re.compile(rb',"[^"]{3}":"[^"]{8}"\}$')
_KIND = re.compile(r'"kind":\s*"([a-z_]{1,40})"')
_TOOL_USE_ID = re.compile(r'"tool_use_id":\s*"([A-Za-z0-9_-]{1,80})"')
SET_ASIDE_SUFFIX = ".set-aside"  # where a torn last line goes before the next append


def encode_line(record: Record) -> bytes:
    body = record.model_dump_json().encode("utf-8")
    return body[:-1] + b',"crc":"%08x"}\n' % zlib.crc32(body)


def _checked(line: bytes) -> tuple[bytes, bool | None]:
    """The record's JSON, and whether its checksum holds (None: the line has none)."""
    match = _CRC_TAIL.search(line)
    if match is None:
        return line, False if _CRC_SHAPED.search(line) else None
    body = line[: match.start()] + b"}"
    return body, zlib.crc32(body) == int(match.group(1), 16)


def parse_line(raw: bytes, *, unchecked_ok: bool = True) -> tuple[Record | None, bool]:
    """The record one line holds, and whether its checksum held. None when the line
    cannot be trusted; a line without a checksum only when ``unchecked_ok``."""
    body, ok = _checked(raw)
    if ok is False or (ok is None and not unchecked_ok):
        return None, False
    try:
        record = RECORD_ADAPTER.validate_python(json.loads(body.decode("utf-8", errors="replace")))
    except (ValueError, ValidationError, RecursionError):  # nested too deep
        return None, False
    return record, bool(ok)

