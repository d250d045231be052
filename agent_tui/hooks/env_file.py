"""``CLAUDE_ENV_FILE``: where ``SessionStart`` hooks leave variables for the session's
commands, as Claude Code documents it.

Each ``SessionStart`` gets a new, empty, private file (0600, in a 0700 folder of its
own) whose path the hooks find in ``CLAUDE_ENV_FILE``; they append ``export
VAR=value`` lines to it. Once they have all ended, :func:`read_env_file` sources it
in ``bash`` (``set -a``, so a plain ``VAR=value`` line counts too) with the hooks'
environment, under the hooks' cancel scope and a timeout, and gives back every
variable that is new or changed. Those are added to the environment of every command
the agent runs for the rest of the session (``bash``, background shells), evaluated
once, when the session starts: ``export PATH="$PATH:./bin"`` gives the ``PATH`` of
that moment. Unsetting a variable, shell functions and aliases do not carry over.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.cancel import CancelScope
from agent_tui.protocol.states import HookEnding
from agent_tui.hooks.runner import run_command
from agent_tui.runtime.process import RunLimits

ENV_FILE_VAR = "CLAUDE_ENV_FILE"
READ_TIMEOUT_S = 10.0
# What bash changes on its own, never the file's doing.
_SHELL_OWN = frozenset({"_", "OLDPWD", "PWD", ENV_FILE_VAR})
# The environment before and after sourcing the file (its output kept apart), each
# NUL-separated: what changed is the file's (the process runner's tags are in both).
_READER = ('env -0 >"$1.before"; set -a; . "$CLAUDE_ENV_FILE" 1>&2 || exit $?; set +a; '
           'env -0 >"$1.after"')


class EnvFile(DeferredModel):
    """What the hooks left in the file: the variables, or why they could not be read."""

    env: dict[str, str] = Field(default_factory=dict)
    error: str = ""


def new_env_file() -> Path:
    """An empty private file for one ``SessionStart``; :func:`remove_env_file` ends it."""
    folder = Path(tempfile.mkdtemp(prefix="agent-tui-env-"))  # 0700
    path = folder / "env.sh"
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return path


def remove_env_file(path: Path) -> None:
    shutil.rmtree(path.parent, ignore_errors=True)


async def read_env_file(
    path: Path, *, env: Mapping[str, str], cwd: Path, scope: CancelScope,
    limits: RunLimits | None = None,
) -> EnvFile:
    """The variables ``path`` sets or changes against ``env`` (nothing for an empty file)."""
    try:
        if path.stat().st_size == 0:
            return EnvFile()
    except OSError as exc:
        return EnvFile(error=f"{ENV_FILE_VAR} could not be read: {exc.strerror or exc}")
    out = path.with_name("env")
    given = {**env, ENV_FILE_VAR: str(path)}
    ran = await run_command(f"set -- {shlex.quote(str(out))}; {_READER}", b"", cwd=cwd,
                            env=given, timeout_s=READ_TIMEOUT_S, scope=scope, limits=limits)
    if ran.ending is not HookEnding.EXITED or ran.exit_code != 0:
        how = (f"exit code {ran.exit_code}" if ran.ending is HookEnding.EXITED
               else str(ran.ending))
        said = ran.stderr.strip() or ran.error
        return EnvFile(error=f"sourcing {ENV_FILE_VAR} failed ({how})"
                       + (f": {said}" if said else ""))
    try:
        before = _variables(Path(f"{out}.before").read_bytes())
        after = _variables(Path(f"{out}.after").read_bytes())
    except OSError as exc:
        return EnvFile(error=f"{ENV_FILE_VAR} could not be read: {exc.strerror or exc}")
    return EnvFile(env={name: value for name, value in after.items()
                        if name not in _SHELL_OWN and before.get(name) != value
                        and name.isidentifier()})  # not a function (BASH_FUNC_f%%)


def _variables(data: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in data.decode("utf-8", errors="replace").split("\0"):
        name, sep, value = item.partition("=")
        if sep and name:
            found[name] = value
    return found
