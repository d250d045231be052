"""Every settings key is one row, written beside its field: how files merge it, and what
of it a project's file may not set.

A key is a field of :class:`agent_tui.settings.schema.SettingsFile` (or of a section of
it: ``permissions``) with its row in the field's ``Annotated`` metadata. A plain key
(one value, no shape of its own) has a :class:`Key`: its merge (:class:`Merge`),
whether a project's file may set it at all (``refusal``), whether an untrusted
project's file is kept from it (``withheld``). ``SettingsFile`` and ``LoadedSettings``
both take the plain keys from ``schema.Keys``, so the field is the key's one place::

    thinking: Annotated[StrictStr | None, Key(Merge.OVERRIDE)] = None

A key with a shape of its own (rules, ``env``, ``sandbox``, ``hooks``, ``providers``,
the MCP approvals) has a :class:`Policy`: a function that merges the file's value into
the merged settings (:class:`.merged.Merged`) and says what it refused, and one that
names what of it an untrusted project's file is kept from. A policy may look at the
value: ``defaultMode`` is refused from a project only when it says ``auto``, ``env``
name by name, ``sandbox`` when it would open. The policies are :mod:`.policies`.

:func:`merge_file` and :func:`withhold_file` walk the rows; a field without a row is a
section (its own fields have them).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, assert_never

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from agent_tui.settings.merged import Merged, Source


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


@dataclass(frozen=True)
class Policy:
    """The row of a key with a shape of its own (:mod:`.policies`)."""

    # (the merged settings, the file, the value) -> what was refused, each worded for
    # the user ("... (ignored)"). Fields whose rows share this function are merged in
    # one call, with their values in field order (the MCP approvals, worded together).
    merge: Callable[..., list[str]]
    # the value -> its name in the untrusted notice when it grants (the field is then
    # cleared to its default); None: kept. No function: never withheld.
    withheld: Callable[[Any], str | None] | None = None


def row(field: FieldInfo) -> Key | Policy | None:
    """A field's row; None: a section (or no key)."""
    for meta in field.metadata:
        if isinstance(meta, Key | Policy):
            return meta
    return None


def merge_file(into: Merged, data: BaseModel, source: Source, prefix: str = "") -> list[str]:
    """Merge one file (or a section of it, named by ``prefix``: ``permissions.``) into
    ``into``, row by row in field order; the refusals to report."""
    fields = type(data).model_fields
    joint: dict[Callable[..., list[str]], list[str]] = {}
    for name, field in fields.items():
        found = row(field)
        if isinstance(found, Policy):
            joint.setdefault(found.merge, []).append(name)
    refused: list[str] = []
    for name, field in fields.items():
        found = row(field)
        given = getattr(data, name)
        if isinstance(found, Key):
            refused += _merge_key(into, name, prefix + (field.alias or name), found, given,
                                  source)
        elif isinstance(found, Policy):
            together = joint[found.merge]
            if together[0] == name:
                refused += found.merge(into, source, *(getattr(data, n) for n in together))
        elif isinstance(given, BaseModel):
            refused += merge_file(into, given, source, f"{prefix}{field.alias or name}.")
    return refused


def _merge_key(into: Merged, name: str, alias: str, key: Key, given: Any,
               source: Source) -> list[str]:
    """One plain key, by its policy."""
    if given is None or given == []:
        return []
    if source.project and key.refusal is not None:
        return [f"{alias} {key.refusal} (ignored)"]
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
                return []
        case unreachable:
            assert_never(unreachable)
    setattr(into, name, value)
    into.sources[name] = source.path
    return []


def withhold_file(data: BaseModel, prefix: str = "") -> tuple[dict[str, Any], list[str]]:
    """What an untrusted project's file (or a section of it) is kept from: (the update
    that clears it, the names for the notice, in field order)."""
    update: dict[str, Any] = {}
    found: list[str] = []
    for name, field in type(data).model_fields.items():
        given, policy = getattr(data, name), row(field)
        said: str | None = None
        if isinstance(policy, Key):
            said = prefix + (field.alias or name) if policy.withheld and given not in (
                None, []) else None
        elif isinstance(policy, Policy):
            said = policy.withheld(given) if policy.withheld is not None else None
        elif isinstance(given, BaseModel):
            inner, named = withhold_file(given, f"{prefix}{field.alias or name}.")
            if inner:
                update[name] = given.model_copy(update=inner)
            found += [n for n in named if n not in found]
        if said is not None:
            update[name] = field.get_default(call_default_factory=True)
            if said not in found:
                found.append(said)
    return update, found
