"""Text from outside (model output, tool output, file names) made safe to show.

Nothing a model or a process prints may drive the terminal or the renderer: escape
sequences (CSI, OSC, DCS, ...), lone C0 controls other than newline and tab, DEL and
C1 controls are removed, carriage returns become newlines, and the result is always
wrapped in a :class:`rich.text.Text`, never parsed as Rich or Textual markup.
"""

from __future__ import annotations

import re

from rich.style import Style
from rich.text import Text

# ESC-introduced sequences, most specific first:
#   OSC/DCS/SOS/PM/APC strings ending in BEL or ST (ESC \\), CSI with parameters,
#   and two-character escapes (ESC + one byte). An unterminated string is cut
#   to the end of the text so its payload never shows as garbage.
_ESCAPES = re.compile(
    r"""
    \x1b[\]PX^_] .*? (?:\x07|\x1b\\|\Z)     # OSC, DCS, SOS, PM, APC
    | \x1b\[ [0-?]* [ -/]* [@-~]?           # CSI
    | \x1b [ -/]* [0-~]?                     # other escapes (and a lone ESC)
    | [\x9b] [0-?]* [ -/]* [@-~]?            # 8-bit CSI
    | [\x9d\x90\x98\x9e\x9f] .*? (?:\x07|\x9c|\x1b\\|\Z)  # 8-bit OSC and friends
    """,
    re.VERBOSE | re.DOTALL,
)
# C0 except \t and \n, DEL, and C1.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """``text`` without escape sequences or control characters (\\n and \\t kept)."""
    if not text:
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ESCAPES.sub("", text)
    return _CONTROLS.sub("", text)


def safe_text(text: str, style: str | Style = "") -> Text:
    """A Rich ``Text`` holding ``clean(text)`` literally (no markup is parsed)."""
    return Text(clean(text), style=style)


def one_line(text: str, limit: int = 200) -> str:
    """The last non-empty line of ``text``, cleaned, tabs expanded, cut to ``limit``."""
    lines = [line for line in clean(text).split("\n") if line.strip()]
    if not lines:
        return ""
    line = lines[-1].expandtabs(4).rstrip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def first_line(text: str, limit: int = 200) -> str:
    """The first non-empty line of ``text``, cleaned, cut to ``limit``."""
    for line in clean(text).split("\n"):
        if line.strip():
            line = line.expandtabs(4).strip()
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def every_line(text: str, limit: int = 300) -> str:
    """All non-empty lines of ``text`` on one line, each break shown as `` ⏎ ``, so a
    command's later lines are never hidden behind its first; cut to ``limit``."""
    lines = [line.expandtabs(4).strip() for line in clean(text).split("\n") if line.strip()]
    line = " ⏎ ".join(lines)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def full_summary(name: str, summary: str, limit: int = 8000) -> str:
    """A call's whole summary, every line kept, without the tool name it starts with."""
    text = clean(summary).strip("\n")
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    for lead in (clean(name) + ": ", clean(name) + " "):
        if text.startswith(lead):
            return text[len(lead) :].lstrip()
    return "" if text == clean(name) else text


def short_summary(name: str, summary: str, limit: int = 300) -> str:
    """A call's one-line summary without the tool name it often starts with; a
    command's (``$ ...``) keeps every line of it (:func:`every_line`)."""
    line = every_line(summary, limit) if summary.startswith("$ ") else first_line(summary, limit)
    name = clean(name)
    if line == name:
        return ""
    for lead in (name + ": ", name + " "):
        if line.startswith(lead):
            return line[len(lead) :].lstrip()
    return line
