"""What a session's commands run in: their cgroups and limits, and the sandbox.

:func:`session_containment` turns the settings (``limits``, ``sandbox``) and the
command line (``--sandbox`` / ``--no-sandbox``) into a :class:`SessionContainment`:
the per-command limits are set for the process layer, the sandbox policy is checked
to run here (or :class:`~agent_tui.runtime.sandbox.SandboxUnavailable` is raised: the
session must not start), and what is in force is worded once for the user.

For front ends: ``SessionContainment.status`` is the short form for a status line
("sandbox" / "cgroup" / "no cgroup"), ``describe()`` the long one for ``/context``,
``notice`` what the session start tells the user (None when all is as expected: every
command in its own cgroup, no sandbox asked for).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from agent_tui.containment_settings import Limits, Network, Sandbox
from agent_tui.runtime.process import Containment, ContainmentMode, configure_limits, containment
from agent_tui.runtime.sandbox import SandboxPolicy, make_policy, probe


class SessionContainment(BaseModel):
    """What the session's commands run in. See the module docstring."""

    model_config = ConfigDict(frozen=True)

    cgroups: Containment
    sandbox: SandboxPolicy | None = None
    # Plan mode's read-only sandbox (probed when a plan-mode command first needs it).
    plan: SandboxPolicy | None = None

    @property
    def status(self) -> str:
        """A word or two for a status line."""
        if self.sandbox is not None:
            return "sandbox"
        return "cgroup" if self.cgroups.mode is ContainmentMode.CGROUP else "no cgroup"

    @property
    def notice(self) -> str | None:
        """What the user is told at the start, once: only what they may not expect,
        the sandbox being on or commands not being in cgroups (``describe`` has all)."""
        if self.sandbox is None and self.cgroups.mode is ContainmentMode.CGROUP:
            return None
        return self.describe()

    def describe(self) -> str:
        """The long form, for ``/context`` and the notice at the start."""
        lines = [f"Commands: {self.cgroups.describe()}."]
        if self.sandbox is not None:
            lines.append(f"Sandbox: {self.sandbox.describe()}.")
        else:
            lines.append("Sandbox: off (commands run with your rights; --sandbox turns it on).")
        return "\n".join(lines)


def session_containment(
    workspace: Path, *, sandbox_flag: bool | None, limits: Limits, sandbox: Sandbox,
    private: list[Path],
) -> SessionContainment:
    """Apply ``limits``; build and check the sandbox when the flag (else the settings)
    asks for it. ``private``: the agent's own config and state folders, hidden from
    sandboxed commands. Raises SandboxUnavailable."""
    configure_limits(limits.pids, limits.memory, limits.grace_s)
    enabled = sandbox.enabled if sandbox_flag is None else sandbox_flag
    policy = None
    if enabled:
        policy = make_policy(workspace, network=sandbox.network,
                             allow_write=sandbox.allow_write, private=private)
        probe(policy)
    plan = (policy or make_policy(workspace, network=Network.DENY, allow_write=[],
                                  private=private)).planning()
    return SessionContainment(cgroups=containment(), sandbox=policy, plan=plan)
