"""What is wrong in a settings file, said with its file, line and column.

:class:`SettingsProblem` is one problem; :func:`explain` words a validation error
of :mod:`.schema` for a person (with a "did you mean" for a mistyped key).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from enum import StrEnum


from agent_tui.protocol.model_base import DeferredModel
from agent_tui.settings.schema import KNOWN_KEYS


class ProblemLevel(StrEnum):
    ERROR = "error"  # the whole file is ignored
    WARNING = "warning"  # one setting skipped or refused, the rest of the file applies


class SettingsProblem(DeferredModel):
    """Something wrong in a settings file: the whole file is then ignored, unless
    ``only_this`` (one setting skipped or refused, the rest of the file applied)."""

    file: Path
    message: str
    line: int | None = None
    column: int | None = None
    only_this: bool = False

    @property
    def level(self) -> ProblemLevel:
        return ProblemLevel.WARNING if self.only_this else ProblemLevel.ERROR

    def __str__(self) -> str:
        where = str(self.file)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}" + ("" if self.only_this else " (settings file ignored)")


def json_type(value: Any) -> str:
    """A JSON value's kind, for messages ("a string", "null"...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _key(key: object) -> str:
    """A key as it can be shown on one line: bare when plain, else quoted JSON-style."""
    text = str(key)
    if re.fullmatch(r"[A-Za-z0-9_$\-]+", text):
        return text
    return json.dumps(text, ensure_ascii=False)  # escapes newlines and control characters


def dotted(loc: tuple[Any, ...]) -> str:
    """A setting's place, as a person writes it: ``permissions.deny[2]``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part == "[key]":
            out += " (name)"
        else:
            out += ("." if out else "") + _key(part)
    return out or "settings"


def unsupported(keys: list[tuple[Any, ...]]) -> str:
    """The notice for keys agent-tui does not know (each named once, with a "did you
    mean" where one is close to a key it knows)."""
    named = []
    for loc in keys:
        known = KNOWN_KEYS.get(tuple(str(p) for p in loc[:-1]), [])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        named.append(dotted(loc) + hint)
    return f"not supported by agent-tui, ignored: {', '.join(named)}"


def explain(err: Mapping[str, Any]) -> str:
    loc = tuple(err["loc"])
    kind = err["type"]
    value = err.get("input")
    if kind == "extra_forbidden":
        key = str(loc[-1])
        known = KNOWN_KEYS.get(tuple(str(p) for p in loc[:-1]), [])
        close = difflib.get_close_matches(key, known, n=1)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        where = f" in {dotted(loc[:-1])}" if loc[:-1] else ""
        shown = json.dumps(key, ensure_ascii=False)
        return f"unknown key {shown}{where}{hint}; known keys: {', '.join(known)}"
    what = dotted(loc)
    if loc == ("sandbox", "network") and isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)) or "an empty object"
        return (f"{what}: Claude Code's network object ({keys}) is not supported; agent-tui "
                'takes "deny" or "allow" (commands in the sandbox keep no network)')
    if kind == "string_type":
        return f"{what}: expected a string, got {json_type(value)}"
    if kind == "list_type":
        return f"{what}: expected a list of strings, got {json_type(value)}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"{what}: expected an object {{...}}, got {json_type(value)}"
    if kind == "value_error":
        return f"{what}: {err.get('ctx', {}).get('error', err['msg'])}"
    return f"{what}: {err['msg']}"
