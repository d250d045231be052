"""Front matter: the YAML block between two ``---`` lines at the top of a Markdown file.

Claude Code's Markdown files (skills' ``SKILL.md``, sub-agents, commands) open with one::

    ---
    name: code-reviewer
    description: Reviews a change for bugs
    tools: Read, Grep, Glob
    ---
    You are a careful reviewer...

:func:`read_front_matter` splits such a text into its metadata (a dict, read with
PyYAML's safe loader: no tags, no objects) and its body, and says on which line the
body starts. A text without the opening ``---`` has no front matter (all body). What
cannot be read raises :class:`FrontMatterError` with the file's line number.

Real files often hold a colon inside an unquoted value (``description: Use when:
reviewing``), which strict YAML refuses; such a top-level value is then read as the
plain text it was meant to be.

Command files are read more leniently (:func:`read_front_matter_leniently`), line by
line, so one bad line never costs the whole file: Claude Code's command files use a
small part of YAML, and that is what is read there: ``key: value`` (quoted or not; keys
lowercased), ``true`` / ``false`` (``yes`` / ``no``), an inline list ``[a, b]``, a block
list (``- item`` lines under the key), a folded or literal block (``>`` / ``|``) and
``#`` comments. A line that is none of these is a problem with its line number (the
rest is still read); a front matter never closed is all body, and said so.

:class:`FileProblem` is how loaders of these files report one bad file (file, line,
message) while the rest still load. :func:`read_definition` reads a skill's or a
sub-agent's file as Claude Code's rules have it (a valid ``name`` and a
``description``), raising :class:`DefinitionError` with the line;
:func:`load_definitions` reads every file of a kind from its folders, the first of a
name winning, each bad file a problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

FENCE = "---"
# A flat `key: value` line, as the lenient reading takes it.
_FLAT = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$")
# Values that mean YAML structure: never reread as plain text.
_STRUCTURED = ("[", "{", '"', "'", "|", ">", "&", "*", "!", "%", "@", "`")


@dataclass(frozen=True)
class FrontMatter:
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1  # 1-based line of the file where the body starts
    present: bool = False  # the file opened with a front matter block
    closed: bool = True  # ... and a ``---`` line ended it (the lenient reading says)
    # The lenient reading's: each key's value as written (unquoted), the key's line in
    # the file, and the lines it could not read, as (line, what).
    raw: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    problems: list[tuple[int, str]] = field(default_factory=list)


class FrontMatterError(ValueError):
    """Front matter that cannot be read; ``line`` is the file's, 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True)
class FileProblem:
    """One file that could not be used (or one part of it), said with its line."""

    file: Path
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else str(self.file)
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Fenced:
    """A text cut at its front matter's fences (:func:`fenced`)."""

    block: list[str]  # the lines between the fences (``\r`` dropped)
    body: list[str]  # the lines after the closing fence
    body_line: int  # 1-based line of the file where ``body`` starts


def fenced(text: str) -> Fenced | None:
    """``text`` cut at its front matter's fences; None when it has none (no opening
    ``---``); raises :class:`FrontMatterError` when one is opened and never closed.
    The one reading of the fences: skills, sub-agents and commands alike."""
    lines = text.removeprefix("\ufeff").split("\n")
    if not lines or lines[0].rstrip("\r").strip() != FENCE:
        return None
    end = next(
        (i for i in range(1, len(lines)) if lines[i].rstrip("\r").strip() == FENCE), None
    )
    if end is None:
        raise FrontMatterError("the front matter opened here is never closed with ---", 1)
    return Fenced(block=[line.rstrip("\r") for line in lines[1:end]], body=lines[end + 1 :],
                  body_line=end + 2)


def read_front_matter(text: str) -> FrontMatter:
    """Split ``text`` into front matter and body; raises :class:`FrontMatterError`."""
    cut = fenced(text)
    if cut is None:
        return FrontMatter(body=text.removeprefix("\ufeff"))
    meta = _parse("\n".join(cut.block))
    return FrontMatter(meta=meta, body="\n".join(cut.body), body_line=cut.body_line,
                       present=True)


def _parse(block: str) -> dict[str, Any]:
    import yaml  # on the first file with front matter: a run without one never loads it

    try:
        loaded = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        loaded = _repaired(block)
        if loaded is None:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            line = mark.line + 2 if mark is not None else 2
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise FrontMatterError(f"front matter is not valid YAML: {problem}", line) from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise FrontMatterError(
            f"front matter must be `key: value` lines, not a {type(loaded).__name__}", 2
        )
    for key in loaded:
        if not isinstance(key, str):
            raise FrontMatterError(f"front matter key {key!r} is not text",
                                   _line_of(block, key) or 2)
    return loaded


def _repaired(block: str) -> object:
    """The block read again with each top-level plain value that holds ``: `` quoted
    (``description: Use when: reviewing``), its indented continuation lines folded
    into it as YAML folds a plain value (a long ``description`` over several lines,
    as Claude Code's plugins write them), or None when that does not help."""
    lines = block.split("\n")
    out: list[str] = []
    changed = False
    i = 0
    while i < len(lines):
        match = _FLAT.match(lines[i])
        i += 1
        if match is None:
            out.append(lines[i - 1])
            continue
        value = (match.group(2) or "").strip()
        more = i
        while more < len(lines) and lines[more][:1] in (" ", "\t") and lines[more].strip():
            more += 1
        if more > i and _FLAT.match(lines[i].strip()):
            more = i  # a key indented by mistake: never folded into the value above
        folded = " ".join([value, *(line.strip() for line in lines[i:more])]).strip()
        if value and ": " in folded and not value.startswith(_STRUCTURED):
            quoted = folded.replace("'", "''")
            out.append(f"{match.group(1)}: '{quoted}'")
            changed = True
            i = more
        else:
            out.append(lines[i - 1])
    if not changed:
        return None
    import yaml

    try:
        fixed: object = yaml.safe_load("\n".join(out))
    except yaml.YAMLError:
        return None
    return fixed


def _line_of(block: str, key: object) -> int | None:
    for number, raw in enumerate(block.split("\n"), start=2):
        if raw.startswith(f"{key}:"):
            return number
    return None


def key_line(text: str, key: str) -> int | None:
    """The file's line where front matter key ``key`` is set (for a problem's line)."""
    lines = text.removeprefix("\ufeff").split("\n")
    for number, raw in enumerate(lines[1:], start=2):
        if raw.rstrip("\r").strip() == FENCE:
            return None
        if re.match(rf"^{re.escape(key)}[ \t]*:", raw):
            return number
    return None


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


def read_front_matter_leniently(text: str) -> FrontMatter:
    """Split ``text`` as :func:`read_front_matter` does, the block read line by line
    (see above): never raises; what it could not read is in ``problems``."""
    try:
        cut = fenced(text)
    except FrontMatterError:
        return FrontMatter(body=text, present=True, closed=False,
                           problems=[(1, "the front matter opened here is never closed by a '---' line")])
    if cut is None:
        return FrontMatter(body=text)
    values: dict[str, Any] = {}
    raw: dict[str, str] = {}
    lines: dict[str, int] = {}
    problems: list[tuple[int, str]] = []
    key: str | None = None
    block: list[str] | None = None  # a ">" or "|" value being read
    for number, line in enumerate(cut.block, 2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indented = line[:1].isspace()
        if indented and key is not None:
            current = values.get(key)
            if block is not None:
                block.append(stripped)
                values[key] = " ".join(block)
            elif stripped.startswith("- ") or stripped == "-":
                items = current if isinstance(current, list) else []
                items.append(_scalar(stripped[1:]))
                values[key] = items
            elif isinstance(current, str):
                values[key] = f"{current} {stripped}".strip()  # a plain value, folded
            else:
                problems.append((number, f"cannot read {stripped!r} under {key!r}"))
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or indented or " " in name.strip():
            problems.append((number, f"not 'key: value': {stripped!r} (ignored)"))
            key = None
            continue
        key = name.strip().lower()
        value = value.strip()
        block = [] if value in (">", "|", ">-", "|-") else None
        values[key] = "" if block is not None else _scalar(value)
        raw[key] = _unquoted(value)
        lines[key] = number
    skipped = 0
    while skipped < len(cut.body) and not cut.body[skipped].strip():
        skipped += 1
    return FrontMatter(meta=values, body="\n".join(cut.body[skipped:]),
                       body_line=cut.body_line + skipped, present=True, raw=raw,
                       lines=lines, problems=problems)


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """``key: value`` strings of the front matter, and the body (an unclosed front
    matter is all body)."""
    parsed = read_front_matter_leniently(text)
    return {k: v if isinstance(v, str) else str(v) for k, v in parsed.meta.items()}, parsed.body

#: Claude Code's rule for skill and sub-agent names.
NAME_RULE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
NAME_MAX = 64
DESCRIPTION_MAX = 1024  # a longer description is cut there, with a notice
DEFINITION_MAX_BYTES = 256 * 1024  # a definition bigger than this is refused


class DefinitionError(ValueError):
    """A definition file (a skill, a sub-agent type) that cannot be used; ``line`` is
    the file's, 1-based, where there is one."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True)
class Definition:
    """A definition file's text and front matter, its name and description checked."""

    text: str
    front: FrontMatter
    name: str
    description: str


def check_name(name: Any, kind: str) -> str | None:
    """What is wrong with ``name`` under Claude Code's rule, or None."""
    if not isinstance(name, str) or not name.strip():
        return f"the {kind} has no name (front matter `name:`)"
    if len(name) > NAME_MAX:
        return f"the name {name[:20]!r}... is longer than {NAME_MAX} characters"
    if not NAME_RULE.match(name):
        return (f"the name {name!r} must be lowercase letters, digits and hyphens "
                "(like code-reviewer)")
    return None


def first_paragraph(body: str) -> str:
    """The body's first paragraph of text (headings skipped), on one line."""
    lines: list[str] = []
    for raw in body.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            if lines:
                break
            continue
        lines.append(line)
    return " ".join(lines)


def read_definition(path: Path, kind: str, default_name: str | None = None) -> Definition:
    """``path`` as a ``kind`` ("skill", "sub-agent"); raises DefinitionError (or
    OSError, UnicodeDecodeError).

    With ``default_name`` (a skill's folder), the file is read as Claude Code reads a
    ``SKILL.md``: every key is optional, the name is ``default_name`` when the front
    matter gives none or gives a title rather than a name (``Writing Hookify Rules``:
    Claude Code lists that skill by its folder), and the description the body's first
    paragraph. Without it (a
    sub-agent), a front matter with ``name`` and ``description`` is required."""
    if path.stat().st_size > DEFINITION_MAX_BYTES:
        raise DefinitionError(f"larger than {DEFINITION_MAX_BYTES // 1024} KB")
    text = path.read_bytes().decode("utf-8")
    try:
        front = read_front_matter(text)
    except FrontMatterError as exc:
        raise DefinitionError(exc.message, exc.line) from None
    if not front.present and default_name is None:
        raise DefinitionError("no front matter (a --- block with name and description)", 1)
    name = front.meta.get("name")
    if default_name is not None and (name is None or (
            check_name(name, kind) is not None and check_name(default_name, kind) is None)):
        name = default_name  # a title ("Writing Hookify Rules"): the folder names it
    wrong = check_name(name, kind)
    if wrong is not None:
        if "name" not in front.meta:
            wrong += " (the name is its folder's: give one with `name:`)"
        raise DefinitionError(wrong, key_line(text, "name") or 1)
    description = front.meta.get("description")
    if description is None and default_name is not None:
        description = first_paragraph(front.body)
    if not isinstance(description, str) or not description.strip():
        raise DefinitionError("no description (front matter `description:`)",
                              key_line(text, "description") or 1)
    return Definition(text=text, front=front, name=str(name), description=description)


def shown_path(path: Path, workspace: Path, home: Path | None) -> str:
    """A definition's file as a notice names it: from the workspace, or from ``~``."""
    for base, prefix in ((Path(workspace), ""), (home if home is not None else Path.home(), "~/")):
        try:
            return prefix + str(path.relative_to(base))
        except ValueError:
            continue
    return str(path)


S = TypeVar("S")
D = TypeVar("D")


def load_definitions(
    places: list[tuple[S, Path]],
    files_in: Callable[[Path], list[Path]],
    parse: Callable[[Path, S], tuple[D, list[FileProblem]]],
    name_of: Callable[[D], str],
    kind: str,
    *,
    cap: int,
    workspace: Path,
    home: Path | None,
) -> tuple[list[D], list[FileProblem]]:
    """Every definition in ``places`` ((scope, folder), the first of a name wins), and
    what was wrong: a file that cannot be used is a problem with its file and line,
    and the others still load. ``files_in(folder)`` lists a folder's files (raises
    OSError when there is none); ``parse(file, scope)`` reads one (raises
    DefinitionError, OSError or UnicodeDecodeError)."""
    found: list[D] = []
    problems: list[FileProblem] = []
    seen: dict[str, str] = {}
    files_seen: set[Path] = set()
    for scope, folder in places:
        try:
            files = files_in(folder)
        except OSError:
            continue
        if len(files) > cap:
            problems.append(FileProblem(folder, f"more than {cap} {kind}s: the rest "
                                                "are not read"))
            files = files[:cap]
        for path in files:
            real = path.resolve()
            if real in files_seen:  # the same file reached twice (home is the workspace)
                continue
            files_seen.add(real)
            try:
                item, notes = parse(path, scope)
            except DefinitionError as exc:
                problems.append(FileProblem(path, f"{exc.message} ({kind} not loaded)",
                                            exc.line))
                continue
            except (OSError, UnicodeDecodeError) as exc:
                reason = getattr(exc, "strerror", None) or exc
                problems.append(FileProblem(path, f"cannot be read: {reason}"))
                continue
            problems.extend(notes)
            name = name_of(item)
            if name in seen:
                problems.append(FileProblem(path, (
                    f"{kind} {name!r} is also defined in {seen[name]}, which is used")))
                continue
            seen[name] = shown_path(path, workspace, home)
            found.append(item)
    return found, problems
