"""What a command line is: ``/`` and a name at the start of the input.

A line is a command when it starts with ``/`` followed by a name (letters, digits,
``-``, ``_``, ``:`` and ``.``) and then a space or the end: ``/model opus`` is one,
``/etc/hosts is odd`` is not (a path, sent as a message).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMMAND_LINE = re.compile(r"/([A-Za-z0-9_.:-]+)(?:[ \t\n]+(.*))?", re.DOTALL)
_NAME = re.compile(r"[A-Za-z0-9_.:-]+")


@dataclass(frozen=True)
class CommandLine:
    name: str
    args: str


def parse_command_line(text: str) -> CommandLine | None:
    """The command a line names, or None when it is a message."""
    match = _COMMAND_LINE.fullmatch(text.strip())
    if match is None:
        return None
    return CommandLine(match[1], (match[2] or "").strip())


def is_command_name(text: str) -> bool:
    return bool(_NAME.fullmatch(text))
