"""Settings files that are JSON but for comments and trailing commas.

People write ``// why this rule`` above a rule, and editors leave a comma after the
last one. Strict JSON refuses both, and Claude Code then ignores the whole file: its
deny rules and hooks too, a guard lost for a comma. agent-tui reads such a file: the
comments and the trailing commas are blanked out (replaced by spaces, newlines kept,
so every other character keeps its line and column), and a warning names the first
one, so the file can be fixed for Claude Code as well.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_tui.json_positions import position_at


@dataclass(frozen=True)
class Relaxed:
    """The text with comments and trailing commas blanked out, and what was found."""

    text: str
    comments: int
    trailing_commas: int
    first_offset: int  # where the first of them stands in the text

    @property
    def changed(self) -> bool:
        return bool(self.comments or self.trailing_commas)

    def describe(self, original: str) -> tuple[int, int, str]:
        """(line, column, words) of what was blanked out, for a warning."""
        line, column = position_at(original, self.first_offset)
        parts = []
        if self.comments:
            parts.append(f"{self.comments} comment{'s' if self.comments != 1 else ''}")
        if self.trailing_commas:
            parts.append(f"{self.trailing_commas} trailing comma"
                         f"{'s' if self.trailing_commas != 1 else ''}")
        return line, column, " and ".join(parts)


def relax(text: str) -> Relaxed:
    """Blank out ``//`` and ``/* */`` comments and commas that close nothing (``,]`` and
    ``,}`` with only space or comments between) outside strings."""
    out = list(text)
    comments = commas = 0
    first = -1
    pending_comma = -1  # a comma whose next meaningful character is not known yet
    i, n = 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_string = False
            i += 1
            continue
        if ch == '"':
            in_string, pending_comma = True, -1
        elif text.startswith("//", i) or text.startswith("/*", i):
            if text.startswith("//", i):
                end = text.find("\n", i)
            else:
                close = text.find("*/", i + 2)
                end = -1 if close < 0 else close + 2
            if end < 0:
                end = n  # to the end (an unclosed /* then fails as JSON would)
            for k in range(i, end):
                if out[k] != "\n":
                    out[k] = " "
            comments += 1
            first = i if first < 0 else first
            i = end
            continue
        elif ch == ",":
            pending_comma = i
        elif ch in "]}":
            if pending_comma >= 0:
                out[pending_comma] = " "
                commas += 1
                first = pending_comma if first < 0 else min(first, pending_comma)
            pending_comma = -1
        elif not ch.isspace():
            pending_comma = -1
        i += 1
    return Relaxed("".join(out), comments, commas, max(first, 0))
