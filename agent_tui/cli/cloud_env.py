"""Claude Code's cloud variables from the ``env`` of the user's settings files.

Claude Code applies a settings file's ``env`` to itself, and its Bedrock and Vertex
setup writes the account there (``CLAUDE_CODE_USE_BEDROCK``, ``AWS_REGION``, ...). So
the cloud variables (:data:`~agent_tui.providers.cloud_switch.CLOUD_VARS`) of the user's
files (Claude Code's ``~/.claude/settings.json``, agent-tui's own, then ``--settings``)
are taken into the agent's environment before the account is chosen, where the shell
does not set them already (the shell wins). A project's file may not choose the account
(its ``env`` could send the prompts and a Bedrock key to an address of its choosing):
its cloud variables are not used (nor given to commands: settings/project_env.py), and
a note says so.

The files are read as plain JSON here, before the settings loader (and pydantic: the
TUI's first frame does not wait for it); the full load reports any problem later.
"""

from __future__ import annotations

import json
import os
from collections.abc import MutableMapping
from pathlib import Path

from agent_tui.cli.options import CLOUD_PROVIDERS, Options, UsageError
from agent_tui.config_file import read_config_text
from agent_tui.paths import claude_config_dir, project_settings_files, user_config_dir


def _env_of(path: Path) -> dict[str, str]:
    try:
        env = json.loads(read_config_text(path)).get("env")
    except (OSError, ValueError, AttributeError, RecursionError):
        return {}
    return {k: v for k, v in env.items() if isinstance(v, str)} if isinstance(env, dict) else {}


def take_cloud_env(opts: Options, environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Apply the user's settings' cloud variables to ``environ`` (default: the agent's
    own), and choose the cloud they switch on when ``--provider`` did not choose;
    returns the notes to show (a project's variables, not used)."""
    from agent_tui.providers.cloud_switch import CLOUD_VARS, CloudSetupError, chosen_cloud

    env = os.environ if environ is None else environ
    files = [claude_config_dir() / "settings.json", user_config_dir() / "settings.json",
             *([opts.settings] if opts.settings else [])]
    found: dict[str, str] = {}
    for path in files:
        found.update({k: v for k, v in _env_of(path).items() if k in CLOUD_VARS})
    for name, value in found.items():
        env.setdefault(name, value)
    notes = []
    for path in project_settings_files(opts.cwd):
        names = sorted(k for k in _env_of(path) if k in CLOUD_VARS)
        if names and not found.keys() >= set(names):
            notes.append(f"settings: {path}: env {', '.join(names)} is not used: a "
                         "project's settings do not choose the account (set it in your "
                         "shell or your user settings)")
    if found and not opts.provider_given and opts.provider not in CLOUD_PROVIDERS:
        try:
            cloud = chosen_cloud(env)
        except CloudSetupError as exc:
            raise UsageError(str(exc)) from None
        if cloud is not None:
            opts.provider = str(cloud)
    return notes
