"""The front matter of a command file: YAML between two ``---`` lines at the top.

The fences are found as for skills and sub-agents (:func:`agent_tui.frontmatter.fenced`);
what lies between is read leniently, line by line, so one bad line never costs the
whole file. Claude Code's command files use a small part of YAML, and that is what is
read here:
``key: value`` (quoted or not), ``true`` / ``false``, an inline list ``[a, b]``, a
block list (``- item`` lines under the key), a folded or literal block (``>`` / ``|``)
and ``#`` comments. A line that is none of these is a problem with its line number
(the rest is still read); the body starts after the closing ``---``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent_tui.frontmatter import FrontMatterError, fenced


class FrontMatter(BaseModel):
    values: dict[str, Any] = Field(default_factory=dict)
    raw: dict[str, str] = Field(default_factory=dict)  # key -> its value as written (unquoted)
    lines: dict[str, int] = Field(default_factory=dict)  # key -> its line in the file
    problems: list[tuple[int, str]] = Field(default_factory=list)  # (line, what)
    body: str = ""
    body_line: int = 1  # the file's line the body starts on
    opened: bool = False  # the file starts with ``---``
    closed: bool = True  # ... and a ``---`` line ends it


def _scalar(raw: str) -> Any:
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    if value.startswith("[") and value.endswith("]"):
        return [_scalar(v) for v in split_top_level(value[1:-1]) if v.strip()]
    if value.lower() in ("true", "yes"):
        return True
    if value.lower() in ("false", "no"):
        return False
    return value


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside parentheses, brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def parse_front_matter(text: str) -> FrontMatter:
    try:
        cut = fenced(text)
    except FrontMatterError:
        return FrontMatter(body=text, opened=True, closed=False,
                           problems=[(1, "the front matter opened here is never closed by a '---' line")])
    if cut is None:
        return FrontMatter(body=text)
    found = FrontMatter(opened=True)
    key: str | None = None
    block: list[str] | None = None  # a ">" or "|" value being read
    for number, line in enumerate(cut.block, 2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indented = line[:1].isspace()
        if indented and key is not None:
            current = found.values.get(key)
            if block is not None:
                block.append(stripped)
                found.values[key] = " ".join(block)
            elif stripped.startswith("- ") or stripped == "-":
                items = current if isinstance(current, list) else []
                items.append(_scalar(stripped[1:]))
                found.values[key] = items
            elif isinstance(current, str):
                found.values[key] = f"{current} {stripped}".strip()  # a plain value, folded
            else:
                found.problems.append((number, f"cannot read {stripped!r} under {key!r}"))
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or indented or " " in name.strip():
            found.problems.append((number, f"not 'key: value': {stripped!r} (ignored)"))
            key = None
            continue
        key = name.strip().lower()
        value = value.strip()
        block = [] if value in (">", "|", ">-", "|-") else None
        found.values[key] = "" if block is not None else _scalar(value)
        found.raw[key] = _unquoted(value)
        found.lines[key] = number
    skipped = 0
    while skipped < len(cut.body) and not cut.body[skipped].strip():
        skipped += 1
    found.body = "\n".join(cut.body[skipped:])
    found.body_line = cut.body_line + skipped
    return found


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """``key: value`` strings of the front matter, and the body (an unclosed front
    matter is all body)."""
    parsed = parse_front_matter(text)
    return {k: v if isinstance(v, str) else str(v) for k, v in parsed.values.items()}, parsed.body
