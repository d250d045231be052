"""The output format of a search, written by ripgrep or the fallback, read back here.

Both back ends print ripgrep's own formats, so one reader serves both:

- ``files`` and ``files_with_matches``: each path ended by a NUL byte (``--null``);
- ``count``: ``path NUL count LF`` per file;
- ``content``: ripgrep's JSON lines (``--json``): ``match`` and ``context`` records
  with the path, line number and line, and ``end`` records whose ``binary_offset``
  marks a file found to be binary part way (its lines are dropped: binary files are
  skipped). Paths and lines that are not UTF-8 come as ``{"bytes": base64}``.

Anything else in the stream (ripgrep's error messages share the pipe) is kept as
messages. The fallback writes with :func:`json_record`.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from agent_tui.tools.search.query import SearchMode

MAX_LINE_CHARS = 500  # a longer line (minified code, data) is cut


@dataclass
class Line:
    number: int
    text: str
    match: bool  # False: a context line


@dataclass
class FileHits:
    path: str  # as the back end printed it, relative to the search's cwd
    count: int = 0  # matching lines
    lines: list[Line] = field(default_factory=list)


@dataclass
class Parsed:
    files: list[FileHits] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


def json_record(kind: str, path: bytes, number: int, line: bytes) -> bytes:
    """One ``match`` or ``context`` record in ripgrep's JSON shape (the fallback's)."""
    data = {"path": _data(path), "lines": _data(line), "line_number": number}
    return json.dumps({"type": kind, "data": data}).encode() + b"\n"


def _data(raw: bytes) -> dict[str, str]:
    try:
        return {"text": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"bytes": base64.b64encode(raw).decode("ascii")}


def _text(value: Any) -> str:
    if not isinstance(value, dict):
        return ""
    if "text" in value:
        return str(value["text"])
    try:
        return base64.b64decode(value.get("bytes", "")).decode("utf-8", errors="replace")
    except (ValueError, TypeError):
        return ""


def clean_path(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def cut_line(text: str) -> str:
    text = text.rstrip("\n").rstrip("\r")
    if len(text) <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]}… [line cut: {len(text) - MAX_LINE_CHARS} more characters]"


def parse(mode: SearchMode, data: bytes) -> Parsed:
    if mode is SearchMode.CONTENT:
        return _parse_json(data)
    if mode is SearchMode.COUNT:
        return _parse_counts(data)
    return _parse_paths(data)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def _parse_paths(data: bytes) -> Parsed:
    out = Parsed()
    *paths, rest = data.split(b"\0")
    out.files = [FileHits(clean_path(_decode(p))) for p in paths if p]
    if rest.strip():
        out.messages.append(_decode(rest).strip())
    return out


def _parse_counts(data: bytes) -> Parsed:
    out = Parsed()
    for raw in data.split(b"\n"):
        path, sep, count = raw.rpartition(b"\0")
        if sep and count.strip().isdigit():
            out.files.append(FileHits(clean_path(_decode(path)), count=int(count)))
        elif raw.strip():
            out.messages.append(_decode(raw).strip())
    return out


def _parse_json(data: bytes) -> Parsed:
    out = Parsed()
    by_path: dict[str, FileHits] = {}
    binary: set[str] = set()
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
            kind, body = record["type"], record["data"]
        except (ValueError, KeyError, TypeError):
            out.messages.append(_decode(raw).strip())
            continue
        if kind not in ("match", "context", "end"):
            continue
        path = clean_path(_text(body.get("path")))
        if kind == "end":
            if body.get("binary_offset") is not None:
                binary.add(path)
            continue
        hits = by_path.get(path)
        if hits is None:
            hits = by_path[path] = FileHits(path)
        match = kind == "match"
        hits.count += match
        number = body.get("line_number")
        hits.lines.append(Line(int(number or 0), cut_line(_text(body.get("lines"))), match))
    out.files = [hits for path, hits in by_path.items() if path not in binary and hits.count]
    return out
