"""The permission question the core asks before a call that writes or runs.

The core only knows this interface; the rules (modes, patterns, settings files) live
in ``agent_tui/permissions/``. ``ask`` makes the core emit a permission request and wait
for the user's decision (a ``decide`` op) or for the turn's cancellation.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.core.calls.tool import Confinement, AnyTool
from agent_tui.protocol.states import PermissionMode, Verdict

__all__ = ["AllowAll", "Confinement", "PermissionPolicy", "Ruling", "decided_by"]


class Ruling(DeferredModel):
    verdict: Verdict
    rule: str | None = None  # which rule or mode decided
    reason: str = ""
    # Where an allowed call must run (plan mode: a command in a read-only sandbox).
    confinement: Confinement = Confinement.NONE
    # A deny only because no one can be asked (print mode, dontAsk): a PermissionRequest
    # hook may still answer for the user.
    unasked: bool = False


def decided_by(rule: str | None) -> str:
    """Who decided, read from a ruling's ``rule`` (``deny:bash(rm:*)`` -> ``rule``)."""
    prefix = (rule or "").partition(":")[0]
    if prefix in ("allow", "ask", "deny"):
        return "rule"
    if prefix in ("session", "mode", "hook"):
        return prefix
    return "policy"


class PermissionPolicy(Protocol):
    @property
    def mode(self) -> PermissionMode:
        """The mode calls are decided by now (``set_mode`` changes it)."""

    def check(self, tool: AnyTool, args: BaseModel) -> Ruling: ...

    def set_mode(self, mode: PermissionMode) -> None:
        """Decide calls by ``mode`` from now on."""

    def remember(self, tool: AnyTool, args: BaseModel) -> None:
        """The user chose "allow for this session" for a call like this one."""

    def allow(self, rules: list[str]) -> None:
        """Allow rules (Claude Code's text) the user chose to last: they apply now."""


class AllowAll:
    """A policy that allows everything (the ``auto`` mode, and tests)."""

    mode = PermissionMode.AUTO

    def set_mode(self, mode: PermissionMode) -> None:
        pass

    def check(self, tool: AnyTool, args: BaseModel) -> Ruling:
        return Ruling(verdict=Verdict.ALLOW, rule="mode:auto")

    def remember(self, tool: AnyTool, args: BaseModel) -> None:
        pass

    def allow(self, rules: list[str]) -> None:
        pass
