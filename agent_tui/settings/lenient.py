"""Validating a settings file key by key: what is wrong is skipped alone.

A file written for Claude Code holds keys agent-tui does not know (``statusLine``,
``enabledPlugins``...): those are named once, in one notice per file, and skipped.
A value of the wrong kind is skipped alone, with its line and column; in a list (the
permission rules) or a mapping (``env``) only the bad entry is. Everything else in the
file applies: one bad rule never takes the file's deny rules with it.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from agent_tui.json_positions import offset_of, position_at, positions_of
from agent_tui.settings.problems import SettingsProblem, explain, unsupported
from agent_tui.settings.schema import SettingsFile

Loc = tuple[Any, ...]


def validate_leniently(
    value: dict[str, Any], text: str, path: Path
) -> tuple[SettingsFile, list[SettingsProblem]]:
    """The file's good settings and a problem for each part that was skipped."""
    walk = _Walk()
    good = walk.section(SettingsFile, value, ())
    positions = positions_of(text)

    def where(loc: Loc) -> tuple[int | None, int | None]:
        offset = offset_of(positions, loc)
        return position_at(text, offset) if offset is not None else (None, None)

    problems = []
    for loc, message in walk.bad:
        line, column = where(loc)
        problems.append(SettingsProblem(
            file=path, line=line, column=column, message=f"{message} (skipped)", only_this=True,
        ))
    if walk.unknown:
        line, column = where(walk.unknown[0])
        problems.append(SettingsProblem(
            file=path, line=line, column=column, message=unsupported(walk.unknown),
            only_this=True,
        ))
    try:
        data = SettingsFile.model_validate(good)
    except ValidationError as exc:  # parts good alone, not together: keep none of them
        data = SettingsFile()
        for err in exc.errors():
            line, column = where(tuple(err["loc"]))
            problems.append(SettingsProblem(
                file=path, line=line, column=column, message=f"{explain(err)} (skipped)",
                only_this=True,
            ))
    problems.sort(key=lambda p: (p.line or 0, p.column or 0))
    return data, problems


class _Walk:
    def __init__(self) -> None:
        self.unknown: list[Loc] = []
        self.bad: list[tuple[Loc, str]] = []

    def section(self, model: type[BaseModel], value: dict[str, Any], loc: Loc) -> dict[str, Any]:
        fields = {(f.alias or name): f for name, f in model.model_fields.items()}
        out: dict[str, Any] = {}
        for key, item in value.items():
            field = fields.get(key)
            if field is None:
                self.unknown.append((*loc, key))
                continue
            annotation = field.annotation
            inner = _model_in(annotation)
            if inner is not None and isinstance(item, dict):
                out[key] = self.section(inner, item, (*loc, key))
            elif get_origin(annotation) is list and isinstance(item, list):
                out[key] = [
                    entry for index, entry in enumerate(item)
                    if self._fits(model, key, [entry], loc, index=index)
                ]
            elif get_origin(annotation) is dict and isinstance(item, dict):
                out[key] = {
                    name: entry for name, entry in item.items()
                    if self._fits(model, key, {name: entry}, loc)
                }
            elif self._fits(model, key, item, loc):
                out[key] = item
        return out

    def _fits(
        self, model: type[BaseModel], key: str, value: Any, loc: Loc, *, index: int | None = None
    ) -> bool:
        try:
            model.model_validate({key: value})
        except ValidationError as exc:
            for err in exc.errors():
                err_loc = tuple(err["loc"])
                if index is not None and len(err_loc) > 1 and err_loc[1] == 0:
                    err_loc = (err_loc[0], index, *err_loc[2:])
                full = (*loc, *err_loc)
                self.bad.append((full, explain({**err, "loc": full})))
            return False
        return True


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The section model an annotation holds (``Model`` or ``Model | None``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType):
        models = [a for a in get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
        if len(models) == 1:
            return models[0]
    return None
