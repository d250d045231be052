"""The settings' ``apiKeyHelper``, made a :class:`~agent_tui.providers.key_helper.KeyHelper`.

It is used when the anthropic provider has no key of its own: neither
``ANTHROPIC_API_KEY`` nor ``ANTHROPIC_AUTH_TOKEN`` is set (those come first, as in
Claude Code), and ``--provider`` chose anthropic or nothing. The command is taken from
the user's settings files and ``--settings`` only (``agent_tui/settings`` refuses a
project's). It runs as a command like a hook does (``hooks/runner.py``: its own
process group, a time bound, ended like every command), in the workspace, with the
agent's environment; what it prints stays in the provider.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

from agent_tui.cli.options import CLOUD_PROVIDERS
from agent_tui.credentials import ANTHROPIC_KEY_VARS

if TYPE_CHECKING:
    from agent_tui.cli.options import Options
    from agent_tui.providers.key_helper import HelperRun, KeyHelper
    from agent_tui.settings import LoadedSettings


def key_helper_for(opts: Options, settings: LoadedSettings) -> tuple[KeyHelper | None, str | None]:
    """The helper the provider should ask for its key (None: none to use), and a
    problem to tell (a bad TTL variable), if any."""
    if settings.api_key_helper is None or settings.api_key_helper_file is None:
        return None, None
    if opts.provider_given and opts.provider != "anthropic" or opts.provider in CLOUD_PROVIDERS:
        return None, None  # another account was chosen (a cloud's switch chooses too)
    if any(os.environ.get(name) for name in ANTHROPIC_KEY_VARS):
        return None, None
    from agent_tui.providers.key_helper import KeyHelper, ttl_from_env

    ttl_s, problem = ttl_from_env()
    workspace = opts.cwd

    async def run(command: str, timeout_s: float) -> HelperRun:
        return await _run(command, timeout_s, workspace)

    helper = KeyHelper(settings.api_key_helper, settings.api_key_helper_file, run, ttl_s=ttl_s)
    return helper, problem


async def _run(command: str, timeout_s: float, cwd: Path) -> HelperRun:
    from agent_tui.cancel import CancelScope
    from agent_tui.protocol.states import HookEnding
    from agent_tui.providers.key_helper import HelperEnding, HelperRun
    from agent_tui.hooks.runner import run_command

    done = await run_command(command, b"", cwd=cwd, env=dict(os.environ),
                             timeout_s=timeout_s, scope=CancelScope())
    match done.ending:
        case HookEnding.EXITED:
            ending = HelperEnding.EXITED
        case HookEnding.TIMED_OUT:
            ending = HelperEnding.TIMED_OUT
        case HookEnding.NOT_STARTED:
            ending = HelperEnding.NOT_STARTED
        case HookEnding.CANCELLED:
            ending = HelperEnding.CANCELLED
        case other:
            assert_never(other)
    return HelperRun(ending=ending, exit_code=done.exit_code, stdout=done.stdout,
                     stderr=done.stderr, error=done.error)
