"""How a plain settings key merges, written beside its field: one row per key.

A plain key (one value, no section) is a field of :class:`agent_tui.settings.schema.Keys`
with a :class:`Key` in its ``Annotated`` metadata. ``SettingsFile`` (one file, as
written) and ``LoadedSettings`` (the files merged) both take their fields from that
class, so the field is the key's one place: its JSON name (the alias), its type and
checks, how files merge it (:class:`Merge`), whether a project's file may set it at all
(``refusal``), and whether an untrusted project's file is kept from it (``withheld``)::

    thinking: Annotated[StrictStr | None, Key(Merge.OVERRIDE)] = None

:func:`merge_keys` and :func:`withhold_keys` walk those rows; the keys with a shape of
their own (permissions, env, sandbox, hooks, providers, MCP approvals) are merged by
hand beside them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, assert_never

from pydantic import BaseModel


class Merge(enum.Enum):
    """How the values of several files make one."""

    OVERRIDE = "override"  # the higher file's value wins
    LOWEST = "lowest"  # the smallest value of all files holds: any file may lower it
    UNION = "union"  # a list: every file's items, in load order, less those already there
    RESTRICTION = "restriction"  # the first file that sets it holds: any file may, none lifts it


@dataclass(frozen=True)
class Key:
    """A plain key's merge policy (the ``Annotated`` metadata of its field).

    Its field defaults to None (an empty list, for a union): what a file leaves out
    is not given, and merges nothing."""

    merge: Merge = Merge.OVERRIDE
    # set: a project's file never sets this key, trusted or not; the reason, worded for
    # the user ("apiKeyHelper is only taken from ..."), and the value is ignored
    refusal: str | None = None
    # an untrusted project's file is kept from this key (named in the untrusted notice)
    withheld: bool = False
    convert: Callable[[Any], Any] | None = None  # the merged value from the file's


def key_fields(model: type[BaseModel]) -> Iterator[tuple[str, str, Key]]:
    """(field name, JSON name, policy) of each plain key of ``model``, in field order."""
    for name, field in model.model_fields.items():
        for meta in field.metadata:
            if isinstance(meta, Key):
                yield name, field.alias or name, meta
                break


def merge_keys(into: BaseModel, data: BaseModel, path: Path, *, project: bool,
               sources: dict[str, Path], prefix: str = "") -> list[str]:
    """Merge ``data``'s plain keys into ``into`` (the field of the same name) by their
    policies; the refusals to report. ``sources`` is told the file each value that was
    taken came from; ``prefix`` names the section ``data`` is (``permissions.``)."""
    refused: list[str] = []
    for name, alias, key in key_fields(type(data)):
        given = getattr(data, name)
        if given is None or given == []:
            continue
        if project and key.refusal is not None:
            refused.append(f"{prefix}{alias} {key.refusal} (ignored)")
            continue
        value = key.convert(given) if key.convert is not None else given
        mine = getattr(into, name)
        match key.merge:
            case Merge.OVERRIDE:
                pass
            case Merge.LOWEST:
                value = value if mine is None else min(mine, value)
            case Merge.UNION:
                value = [*mine, *(v for v in value if v not in mine)]
            case Merge.RESTRICTION:
                if mine is not None:
                    continue
            case unreachable:
                assert_never(unreachable)
        setattr(into, name, value)
        sources[name] = path
    return refused


def withhold_keys(data: BaseModel, prefix: str = "") -> tuple[dict[str, Any], list[str]]:
    """The plain keys an untrusted project's file is kept from: (the update that clears
    them, their JSON names)."""
    update: dict[str, Any] = {}
    found: list[str] = []
    for name, alias, key in key_fields(type(data)):
        if key.withheld and getattr(data, name) not in (None, []):
            update[name] = type(data).model_fields[name].get_default(call_default_factory=True)
            found.append(prefix + alias)
    return update, found
