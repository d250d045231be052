"""Plan mode: read-only, enforced by the agent rather than asked of the model.

:func:`planning` takes the ruling the rules and the mode gave a call and makes it one
plan mode allows:

- a deny stays a deny (the user's rules beat every mode);
- a read-only call, and the tools that only plan or look (those whose ``plans`` is
  true: ``todo_write``, ``task``, whose sub-agents are decided by this same policy,
  ``web_fetch``, ``web_search``, ``skill``, ``exit_plan_mode``), keep their ruling;
- a call the tool can run in a read-only sandbox (a command, where bubblewrap runs:
  the whole file system read-only, a private ``/tmp``, no network) is allowed there,
  and only there, whatever an allow rule said;
- anything else (a file write or edit, a command where there is no sandbox, an MCP
  tool not marked read-only, ``kill_shell``) is refused, and the model is told it is
  plan mode and how to leave it.
"""

from __future__ import annotations

from pydantic import BaseModel

from agent_tui.core.calls.permission import Confinement, Ruling
from agent_tui.core.calls.tool import AnyTool
from agent_tui.protocol import Verdict

#: The ruling's ``rule``: not ``mode:``, so a hook's "allow" (which only skips a mode's
#: ask) cannot lift plan mode's refusal or its sandbox.
RULE = "plan:read-only"


def planning(tool: AnyTool, args: BaseModel, ruling: Ruling) -> Ruling:
    """The ruling of one call in plan mode (see the module's docstring)."""
    if ruling.verdict is Verdict.DENY:
        return ruling
    if tool.is_read_only(args) or tool.plans:
        return ruling
    if tool.can_run_read_only(args):
        return Ruling(verdict=Verdict.ALLOW, rule=RULE, confinement=Confinement.READ_ONLY,
                      reason="plan mode: runs in a read-only sandbox (no writes, no network)")
    return Ruling(verdict=Verdict.DENY, rule=RULE, reason=refusal(tool))


def refusal(tool: AnyTool) -> str:
    """What the model is told of a call plan mode refuses."""
    what = tool.plan_refusal()
    return (f"Not run: the session is in plan mode, which is read-only ({what}). "
            "Look around with the read-only tools, then present the plan with "
            "exit_plan_mode; the user approves it before anything is changed.")
