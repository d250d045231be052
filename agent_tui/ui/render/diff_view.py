"""How a :class:`~agent_tui.ui.render.diffs.FileDiff` is drawn, in the permission prompt
and in the transcript alike: a summary line in the tense of the moment, then every line
as ``<number> <symbol><code>`` (``2 -old``, ``2 +new``, ``3  context``), a gap between
hunks as ``…``. The words that changed inside a line are underlined and bold, so they
show without colour too; the colours (the theme's success and error, the code in its
language's colours) only help."""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text

from agent_tui.ui.render.diffs import DiffLine, FileDiff, LineKind, Tense, summary
from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.render.states import role_style


def _highlighter(path: str) -> Any:
    from rich.syntax import Syntax

    try:
        lexer = Syntax.guess_lexer(path)
    except Exception:
        lexer = "text"
    return Syntax("", lexer, theme="ansi_dark", background_color="default")


def _width(diff: FileDiff) -> int:
    numbers = [line.number for line in diff.lines if line.number is not None]
    return len(str(max(numbers))) if numbers else 1


def _code(line: DiffLine, syntax: Any, word_style: Style) -> Text:
    code = clean(line.text).expandtabs(4)
    if syntax is not None and line.kind is not LineKind.REMOVED:
        body: Text = syntax.highlight(code)
        body.rstrip()
        body.end = ""
    else:
        body = Text(code, style=Style(dim=True) if line.kind is LineKind.REMOVED else "")
    if clean(line.text) == line.text and "\t" not in line.text:  # the spans still fit
        for start, end in line.changed:
            body.stylize(word_style, start, end)
    return body


def render(diff: FileDiff, variables: dict[str, str], *, highlight: bool = True,
           tense: Tense | None = None) -> Text:
    """The summary line (when ``tense`` is given), then every numbered line."""
    added = role_style(variables, "success", bold=True)
    removed = role_style(variables, "error", bold=True)
    words = {LineKind.ADDED: added + Style(underline=True),
             LineKind.REMOVED: removed + Style(underline=True, dim=False)}
    muted = role_style(variables, "text-muted")
    syntax = _highlighter(diff.path) if highlight else None
    width = _width(diff)
    out = Text(no_wrap=False)
    if tense is not None:
        out.append(summary(diff, tense), style="bold")
    if diff.content_only:
        out.append("\n" if out else "")
        out.append("the file was not read: the first lines of the new content", style=muted)
    for line in diff.lines:
        out.append("\n" if out else "")
        if line.kind is LineKind.HUNK:
            out.append(" " * width + "  …", style=muted)
            continue
        number = "" if line.number is None else str(line.number)
        out.append(f"{number:>{width}} ", style=muted)
        symbol_style = {LineKind.ADDED: added, LineKind.REMOVED: removed}.get(line.kind, muted)
        out.append(line.kind.value, style=symbol_style)
        out.append_text(_code(line, syntax, words.get(line.kind, Style())))
    if diff.more:
        out.append(f"\n… {diff.more} more line{'s' if diff.more != 1 else ''}", style=muted)
    return out
