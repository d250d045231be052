"""Where a value stands in a JSON text, to name a setting's file:line:col.

``positions_of`` maps each member key and list element of a (valid) document to its
offset, by path; ``offset_of`` finds the longest known prefix of a validation
error's location; ``position_at`` turns an offset into a 1-based line and column.
"""

from __future__ import annotations

import json
import re
from typing import Any

_DECODER = json.JSONDecoder()


def position_at(text: str | bytes, offset: int, *, newline: Any = "\n") -> tuple[int, int]:
    """1-based (line, column) of ``offset``."""
    line = text.count(newline, 0, offset) + 1
    column = offset - (text.rfind(newline, 0, offset) + 1) + 1
    return line, column


def positions_of(text: str) -> dict[tuple[Any, ...], int]:
    """Offset of every member key and list element of a (valid) JSON document, by path.

    For an object member the offset is its key's (the line a person looks for); a
    repeated key maps to its last occurrence, the one ``json.loads`` keeps.
    """
    out: dict[tuple[Any, ...], int] = {}
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")

    def skip(i: int) -> int:
        m = ws.match(text, i)
        return m.end() if m else i

    def value(i: int, path: tuple[Any, ...]) -> int:
        i = skip(i)
        c = text[i]
        if c == "{":
            i = skip(i + 1)
            if text[i] == "}":
                return i + 1
            while True:
                i = skip(i)
                start = i
                key, i = _DECODER.raw_decode(text, i)  # the key's string, from its quote
                out[path + (key,)] = start
                i = skip(i)  # at ':'
                i = value(i + 1, path + (key,))
                i = skip(i)
                if text[i] == ",":
                    i += 1
                    continue
                return i + 1
        if c == "[":
            i = skip(i + 1)
            if text[i] == "]":
                return i + 1
            index = 0
            while True:
                i = skip(i)
                out[path + (index,)] = i
                i = value(i, path + (index,))
                i = skip(i)
                index += 1
                if text[i] == ",":
                    i += 1
                    continue
                return i + 1
        _, end = decoder.raw_decode(text, i)
        return end

    try:
        value(0, ())
    except (ValueError, IndexError, RecursionError):
        pass  # best effort: whatever was found before is still right
    return out


def offset_of(positions: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int | None:
    """The position of the longest prefix of ``loc`` found in the document."""
    # pydantic uses the alias in locations, and "[key]" for a dict key's own error
    # (but a document may also have a key really named "[key]")
    for path in (tuple(loc), tuple(p for p in loc if p != "[key]")):
        while path:
            if path in positions:
                return positions[path]
            path = path[:-1]
    return None
