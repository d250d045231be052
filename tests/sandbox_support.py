"""The sandbox for tests: whether bubblewrap can run here (a skip with its reason when
not), short process limits, and a policy that denies the network and writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.containment_settings import Network
from agent_tui.runtime.process import RunLimits
from agent_tui.runtime.sandbox import SandboxPolicy, SandboxUnavailable, make_policy, probe


def _bwrap_problem() -> str | None:
    try:
        probe(make_policy(Path("/"), network=Network.DENY, allow_write=[], private=[]))
    except SandboxUnavailable as exc:
        return str(exc)
    return None


BWRAP_PROBLEM = _bwrap_problem()
needs_bwrap = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=f"bwrap cannot run: {BWRAP_PROBLEM}")
LIMITS = RunLimits(grace_s=0.3, drain_s=0.3, kill_confirm_s=1.0)


def sandbox_policy(workspace: Path, **kw: object) -> SandboxPolicy:
    kw.setdefault("network", Network.DENY)
    kw.setdefault("allow_write", [])
    kw.setdefault("private", [])
    return make_policy(workspace, **kw)  # type: ignore[arg-type]
