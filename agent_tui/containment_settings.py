"""The settings of containment: ``limits`` (per command) and ``sandbox``.

::

    {
      "limits": {"pids": 4096, "memory": "8G"},
      "sandbox": {"enabled": true, "network": "deny", "allowWrite": ["~/.cache/pip"]}
    }

``limits.pids`` is the number of tasks one command may have at once, ``limits.memory``
the memory it may use (bytes, or a number with K, M, G or T); ``"max"`` lifts a limit.
They apply where commands run in cgroups. The project's value wins over the user's.

``sandbox``: commands run under bubblewrap (see ``tools/sandbox``). A project's file
can turn the sandbox on, never off, and can only narrow what it allows: its
``network: "allow"`` and its ``allowWrite`` paths are refused (they would loosen the
user's sandbox), its ``network: "deny"`` applies.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import re
from enum import StrEnum
from typing import Annotated

from pydantic import (
    AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr,
)

from agent_tui.protocol.model_base import DeferredModel

_SIZE = re.compile(r"(\d+)\s*([KMGT]?)i?B?", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
NO_LIMIT = "max"


def _check_size(value: int | str) -> int | str:
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("must be a positive number of bytes")
        return value
    if value == NO_LIMIT:
        return value
    match = _SIZE.fullmatch(value.strip())
    if not match:
        raise ValueError(f'{value!r} is not a size: use bytes, "512M", "8G" or "max"')
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def _check_count(value: int | str) -> int | str:
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("must be a positive number")
        return value
    if value != NO_LIMIT:
        raise ValueError(f'{value!r}: use a number or "max"')
    return value


Size = Annotated[StrictInt | StrictStr, AfterValidator(_check_size)]
Count = Annotated[StrictInt | StrictStr, AfterValidator(_check_count)]


class LimitsSection(DeferredModel):
    model_config = ConfigDict(extra="forbid")

    pids: Count | None = None
    memory: Size | None = None
    # SIGTERM -> SIGKILL for a command that is stopped (runtime/process/limits.py)
    grace_s: Annotated[StrictInt | StrictFloat, Field(ge=0, le=30)] | None = Field(
        default=None, alias="graceSeconds")
    # How many times in a row Stop/SubagentStop hooks may keep the agent going
    stop_continues: Annotated[StrictInt, Field(ge=0, le=100)] | None = Field(
        default=None, alias="stopHookContinues")


class Network(StrEnum):
    DENY = "deny"
    ALLOW = "allow"


class SandboxSection(DeferredModel):
    model_config = ConfigDict(extra="forbid")

    enabled: StrictBool | None = None
    network: Network | None = None
    allow_write: list[StrictStr] = Field(default_factory=list, alias="allowWrite")


class Limits(DeferredModel):
    """The merged ``limits``: None is the default, ``"max"`` no limit."""

    pids: int | str | None = None
    memory: int | str | None = None
    grace_s: float | None = None
    stop_continues: int | None = None  # None: Claude Code's 8


class Sandbox(DeferredModel):
    """The merged ``sandbox`` settings."""

    enabled: bool = False
    network: Network = Network.DENY
    allow_write: list[str] = Field(default_factory=list)


def merge(
    limits: Limits, mine: Sandbox, their_limits: LimitsSection, theirs: SandboxSection,
    project: bool,
) -> list[str]:
    """Merge one file's ``limits`` and ``sandbox`` over the merged ones; what a project
    may not do is refused and returned as messages (the rest of the file applies)."""
    if their_limits.pids is not None:
        limits.pids = their_limits.pids
    if their_limits.memory is not None:
        limits.memory = their_limits.memory
    if their_limits.grace_s is not None:
        limits.grace_s = float(their_limits.grace_s)
    if their_limits.stop_continues is not None:
        limits.stop_continues = their_limits.stop_continues
    refused = []
    if theirs.enabled is not None:
        if project and not theirs.enabled:
            refused.append("sandbox.enabled false is only taken from your user settings or "
                           "the command line: a project can turn the sandbox on, never off "
                           "(ignored)")
        else:
            mine.enabled = theirs.enabled
    if theirs.network is not None:
        if project and theirs.network is Network.ALLOW:
            refused.append('sandbox.network "allow" is only taken from your user settings: '
                           "a project cannot open its own sandbox (ignored)")
        else:
            mine.network = theirs.network
    if theirs.allow_write:
        if project:
            refused.append("sandbox.allowWrite is only taken from your user settings: a "
                           "project cannot widen its own sandbox (ignored)")
        else:
            mine.allow_write += [p for p in theirs.allow_write if p not in mine.allow_write]
    return refused
