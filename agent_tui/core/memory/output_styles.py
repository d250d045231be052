"""Output styles, as Claude Code has them: how the model writes, set in the system prompt.

A style is a Markdown file in ``~/.claude/output-styles/`` (the user's) or the project's
``.claude/output-styles/``: front matter ``name`` (else the file's name),
``description`` and ``keep-coding-instructions`` (default false), then the text. The
built-in ones are Default (no style: the coding-agent prompt as it is), Explanatory,
Learning, Proactive and Concise (Claude Code's names; the texts are ours). ``outputStyle`` in the settings names the one in force (any case).

An enabled plugin's styles (``PLUGIN:NAME``) come from a source the wiring adds
(:func:`add_style_source`: the core does not know plugins). A plugin's style with
``force-for-plugin: true`` is in force whatever ``outputStyle`` says, as in Claude
Code; a warning says so.

In the system prompt (``prompt.py``) a style other than Default replaces the "How to
work" instructions, unless it keeps them, and its text closes the prompt. The parts
about interruptions and uncertain results always stay: they are what keeps the model
honest about what really ran.

A project's style is only text for the model, like its CLAUDE.md: it is loaded, but a
name is found first among the built-in styles, then the user's, then the project's, so
a cloned repository cannot put its text under the name of one the user chose; and a
project's file that links outside the project is not read (it would put a file of the
user's into the prompt).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_tui.frontmatter import FileProblem, FrontMatterError, read_front_matter
from agent_tui.paths import claude_config_dir

DEFAULT = "default"
MAX_STYLE_BYTES = 64 * 1024

EXPLANATORY = """\
# Output Style: Explanatory
Besides doing the task, help the user understand the codebase and your choices. \
Before and after writing code, give short educational insights about the \
implementation choices you make, in this form:

"★ Insight ─────────────────────────────────────
[2-3 key points about this codebase or this change]
─────────────────────────────────────────────────"

Keep the insights specific to this codebase and this change, not general programming \
advice. They go in the conversation, never in the code."""

LEARNING = """\
# Output Style: Learning
Work with the user as a collaborative teacher: do the task, and let the user write \
meaningful pieces of it themselves so they learn by doing. Share short educational \
insights about implementation choices (as the Explanatory style does, with the \
"★ Insight" block). When a piece of code of 2 to 10 lines involves a real design \
choice (business logic, error handling, a data structure), prepare the surrounding \
code, add a TODO(human) marker where the user's code goes, and ask them to write it: \
say what to write, where, and what to weigh. Then wait for them before going on. Do \
not ask for boilerplate or for more than one piece at a time."""

PROACTIVE = """# Output Style: Proactive
Act first and keep going: when the request is clear enough to start, start, and carry \
the work through to a result without stopping to ask for go-aheads along the way. Make \
the reasonable choice yourself where a choice is small and easy to undo, and say \
afterwards what you chose. Prefer doing over planning aloud: a short note of what is \
next is enough. Stop to ask only before something hard to undo (deleting work, \
touching what is outside the task, anything shared with others) or when the request \
could mean two quite different things."""

CONCISE = """# Output Style: Concise
Do the work as thoroughly as always, and say less about it. Lead with the result or \
the answer; leave out greetings, restating the request, and running commentary on \
each step. Between tool calls write nothing unless the user needs to know something \
now. In the final message give what changed, what was checked and what is left, in \
a few short lines; details only when asked or when something went wrong."""


@dataclass(frozen=True)
class OutputStyle:
    name: str
    description: str
    prompt: str
    keep_coding_instructions: bool = False
    scope: str = "built-in"  # built-in | user | project | plugin
    file: Path | None = None
    forced: bool = False  # a plugin's ``force-for-plugin``: in force whatever is chosen


BUILTIN: tuple[OutputStyle, ...] = (
    OutputStyle("Default", "the coding agent's own instructions, concise", ""),
    OutputStyle("Explanatory", "explains its choices and the codebase as it works",
                EXPLANATORY, keep_coding_instructions=True),
    OutputStyle("Learning", "learn by doing: asks you to write small pieces (TODO(human))",
                LEARNING, keep_coding_instructions=True),
    OutputStyle("Proactive", "acts at once, asks only before what is hard to undo",
                PROACTIVE, keep_coding_instructions=True),
    OutputStyle("Concise", "terse: the result first, no narration",
                CONCISE, keep_coding_instructions=True),
)


@dataclass
class OutputStyles:
    styles: list[OutputStyle]
    problems: list[FileProblem]

    def find(self, name: str | None) -> OutputStyle | None:
        """The style called ``name`` (any case); None for none, Default or unknown."""
        if not name or name.lower() == DEFAULT:
            return None
        return next((s for s in self.styles if s.name.lower() == name.lower()), None)


#: Where more styles come from (the enabled plugins'): each gives styles and problems.
StyleSource = Callable[[], tuple[list[OutputStyle], list[FileProblem]]]
_SOURCES: list[StyleSource] = []


def add_style_source(source: StyleSource) -> None:
    """More styles, after the user's and the project's (the wiring's, once)."""
    if source not in _SOURCES:
        _SOURCES.append(source)


def style_folders(workspace: Path) -> list[tuple[str, Path]]:
    return [("user", claude_config_dir() / "output-styles"),
            ("project", workspace / ".claude" / "output-styles")]


def read_style(path: Path, scope: str) -> OutputStyle:
    """One style file; raises :class:`FrontMatterError` (with its line) when it cannot be used."""
    try:
        raw = path.read_bytes()[: MAX_STYLE_BYTES + 1]
    except OSError as exc:
        raise FrontMatterError(f"cannot read: {exc.strerror or exc}", 1) from None
    if len(raw) > MAX_STYLE_BYTES:
        raise FrontMatterError(f"larger than {MAX_STYLE_BYTES // 1024} KiB", 1)
    parsed = read_front_matter(raw.decode("utf-8", errors="replace"))
    meta = parsed.meta
    name = meta.get("name", path.stem)
    keep = meta.get("keep-coding-instructions", False)
    forced = meta.get("force-for-plugin", False)
    if not isinstance(name, str) or not name.strip():
        raise FrontMatterError("name must be a text", 2)
    if not isinstance(keep, bool) or not isinstance(forced, bool):
        raise FrontMatterError("keep-coding-instructions and force-for-plugin must be "
                               "true or false", 2)
    description = meta.get("description", "")
    return OutputStyle(name.strip(), str(description or "").strip(), parsed.body.strip(),
                       keep, scope, path, forced=forced and scope == "plugin")


def _outside(path: Path, workspace: Path) -> bool:
    """A project's file that is a link to somewhere outside the project (a secret of
    the user's, put into the prompt by a cloned repository)."""
    try:
        return not path.resolve().is_relative_to(workspace.resolve())
    except (OSError, RuntimeError):
        return True


def load_output_styles(workspace: Path) -> OutputStyles:
    """The built-in styles, then the user's, then the project's; the first of a name wins."""
    styles = list(BUILTIN)
    problems: list[FileProblem] = []
    for scope, folder in style_folders(workspace):
        try:
            files = sorted(p for p in folder.glob("*.md") if p.is_file())
        except OSError:
            continue
        for path in files:
            try:
                if scope == "project" and _outside(path, workspace):
                    raise FrontMatterError("links outside the project: not read", 1)
                style = read_style(path, scope)
            except FrontMatterError as exc:
                problems.append(FileProblem(path, exc.message, exc.line))
                continue
            if any(s.name.lower() == style.name.lower() for s in styles):
                problems.append(FileProblem(path, f"output style {style.name!r} is already "
                                                  "defined (built-in or the user's): this one is not used"))
                continue
            styles.append(style)
    for source in _SOURCES:
        more, issues = source()
        problems += issues
        styles += [s for s in more if not any(s.name.lower() == t.name.lower() for t in styles)]
    return OutputStyles(styles, problems)


def style_section(style: OutputStyle) -> str:
    """The style's text as it closes the system prompt."""
    if style.scope == "built-in":
        return style.prompt
    return f"# Output Style: {style.name}\n{style.prompt}"


def style_in_force(workspace: Path, name: str | None) -> tuple[OutputStyle | None, list[str]]:
    """The style ``outputStyle`` names (None: Default), and what to warn about: files
    that could not be used, a name no style has."""
    loaded = load_output_styles(workspace)
    warnings = [f"output style {problem}" for problem in loaded.problems]
    forced = [s for s in loaded.styles if s.forced]
    if forced:
        others = f" (also forced, not used: {', '.join(s.name for s in forced[1:])})" if forced[1:] else ""
        warnings.append(f"output style {forced[0].name}: its plugin forces it "
                        f"(force-for-plugin){others}" + (f"; outputStyle {name!r} is not used"
                                                         if name and name != forced[0].name else ""))
        return forced[0], warnings
    style = loaded.find(name)
    if name and style is None and name.lower() != DEFAULT:
        known = ", ".join(s.name for s in loaded.styles)
        warnings.append(f"outputStyle {name!r}: no such output style (there are {known}); "
                        "using Default")
    return style, warnings
