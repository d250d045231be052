"""A custom command's own turn: its ``!`cmd``` lines first, then its prompt.

A front end (or print mode) expands the command file (``agent_tui/commands/``) into a
:class:`CommandRun`: the shell steps, how the prompt is put together from their
output, the policy of its turn (the session's, with the command's ``allowed-tools``)
and its model. The session holds while the steps run, as it does for a compaction
(Esc, an ``interrupt`` op, stops them: they run under a child of the session's
scope), then starts the turn with the prompt.

Each step runs through the session's own command tool (``bash``: the same runner,
cgroup and sandbox as the model's commands), never around it. Every step is checked
first: when the policy does not allow one (a deny rule, or a call that would need
asking: nobody is asked for a command's steps), or a ``PreSkillShellCommand`` hook
refuses one, none runs and nothing is sent. The
core knows the tool only by its name and its Tool interface.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_tui.cancel import CancelScope
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.hooks.work_points import skill_shell_command
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.calls.permission import PermissionPolicy
from agent_tui.core.calls.tool import InvalidInput, ToolContext
from agent_tui.protocol import ToolState, TurnState, TurnStateChanged, Verdict
from agent_tui.protocol.tool_names import shell_tool



@dataclass(frozen=True)
class ShellStep:
    command: str  # the command line, the arguments already in it
    where: str  # "FILE:LINE", for what is said about it
    env: dict[str, str] = field(default_factory=dict)  # added to its environment (a plugin's options)
    refused: str = ""  # why it may not run (then the command does not run at all)


@dataclass
class CommandRun:
    """One use of a custom command (``/name args``), ready to run."""

    name: str
    steps: list[ShellStep]
    # The prompt, from the steps' outputs (in order); called once they all ran.
    compose: Callable[[list[str]], str]
    policy: PermissionPolicy | None = None  # None: the session's
    model: str | None = None  # None: the session's
    args: str = ""  # what followed the name (``UserPromptExpansion``'s ``command_args``)
    source: str = ""  # where the file is: project, user, plugin (``command_source``)

    @property
    def turn_id(self) -> str:
        """What its ``turn_state`` events name while its lines run (before its turn)."""
        return f"/{self.name}"

    @property
    def own_turn(self) -> bool:
        """Whether it needs a turn of its own (else its prompt is a plain message)."""
        return bool(self.steps) or self.policy is not None or self.model is not None


class CommandStopped(Exception):
    """The steps did not all run: nothing is sent. The message says why."""


async def run_steps(deps: SessionDeps, run: CommandRun, scope: CancelScope,
                    record: Callable[[Any], object] | None = None) -> list[str]:
    """Every step's output, in order; raises :class:`CommandStopped`. With ``record``
    (where hook runs are journalled), ``PreSkillShellCommand`` hooks judge each step
    the policy allows, before any runs."""
    if not run.steps:
        return []
    tool = deps.tools.get(shell_tool())
    if tool is None:
        raise CommandStopped(f"/{run.name} has !`…` lines and this session runs no commands")
    policy = run.policy or deps.policy
    parsed = []
    refused = []
    for step in run.steps:
        if step.refused:
            refused.append(f"{step.where}: !`{step.command}`: {step.refused}")
            continue
        try:
            args = tool.parse({"command": step.command})
        except InvalidInput as exc:
            refused.append(f"{step.where}: !`{step.command}`: {exc}")
            continue
        ruling = policy.check(tool, args)
        by_mode = (ruling.rule or "").startswith("mode:")  # no rule: it would be asked
        if ruling.verdict is Verdict.DENY and not by_mode:
            refused.append(f"{step.where}: !`{step.command}`: {ruling.reason or 'denied'}")
        elif ruling.verdict is not Verdict.ALLOW:
            refused.append(
                f"{step.where}: !`{step.command}` needs permission ({ruling.reason}); a "
                "command's lines are never asked about: allow it in the command's "
                "allowed-tools (e.g. Bash(git status:*)) or in the permission rules")
        else:
            parsed.append((step, args))
    if not refused and record is not None:  # PreSkillShellCommand: each line, before any runs
        points = HookPoints(deps, scope, record, run.turn_id)
        for index, (step, _args) in enumerate(parsed):
            why = await skill_shell_command(points, command=step.command, command_name=run.name,
                                            step_id=f"cmd-{run.name}-{index + 1}")
            if why:
                refused.append(f"{step.where}: !`{step.command}`: {why}")
    if refused:
        raise CommandStopped(f"/{run.name} not run, nothing was sent: " + "; ".join(refused))
    outputs = []
    for index, (step, args) in enumerate(parsed):
        scope.raise_if_cancelled()
        # The front ends see the session busy (Esc interrupts), as during a turn.
        deps.emit(TurnStateChanged(turn_id=run.turn_id, state=TurnState.RUNNING,
                                   detail=f"/{run.name}: running !`{step.command}`"))
        call_id = f"cmd-{run.name}-{index + 1}"
        ctx = ToolContext(scope=scope.child(call_id), workspace=deps.config.workspace,
                          tool_use_id=call_id, operation_id=f"{deps.config.session_id}/{call_id}",
                          env={**deps.config.env, **step.env}, added_dirs=tuple(deps.config.added_dirs))
        try:
            result = await tool.run(args, ctx)
        finally:
            ctx.scope.detach()
        if result.outcome is ToolState.CANCELLED_WHILE_RUNNING or scope.cancelled:
            how = f" ({result.signal or result.exit_code})" if (result.signal or result.exit_code) else ""
            raise CommandStopped(f"/{run.name} stopped: !`{step.command}` was interrupted{how}; "
                                 "nothing was sent")
        outputs.append(result.content)
    return outputs
