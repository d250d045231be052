"""Helpers for the hook tests: real hook scripts, hooks loaded the way the CLI loads
them, and a session on the real SDK against the fake API."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from agent_tui.checkpoints import Checkpoints
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import HookRecord
from agent_tui.core.calls.permission import AllowAll, PermissionPolicy
from agent_tui.core.session.session import Session
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.settings import load_settings
from agent_tui.hooks import CommandHooks, load_hooks
from agent_tui.tools.registry import default_tools
from tests.forked_runs import run_agent
from tests.harness import Recorder, Running
from tests.print_agent import env_for


#: A hook script's body that appends the input it read to ``$HOOK_LOG`` (one JSON line).
LOG_INPUT = """
    given = json.load(sys.stdin)
    with open(os.environ["HOOK_LOG"], "a") as log:
        log.write(json.dumps(given) + "\\n")
"""


def logged(path: Path) -> list[dict[str, Any]]:
    """What a ``LOG_INPUT`` hook wrote, in order (nothing yet: empty)."""
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def hook_script(folder: Path, name: str, body: str) -> str:
    """A Python hook script; returns the command line that runs it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text("import json, os, sys, time\n" + textwrap.dedent(body))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def settings_file(path: Path, hooks: dict[str, Any], **more: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks, **more}, indent=2))
    return path


def command_hooks(
    tmp_path: Path, workspace: Path, hooks: dict[str, Any], *, interactive: bool = True,
    **options: Any,
) -> CommandHooks:
    """Hooks from a ``--settings`` file, loaded as the CLI loads them."""
    path = settings_file(tmp_path / "hook-settings.json", hooks)
    loaded = load_settings(workspace, user_dir=tmp_path / "no-user-config", extra=[path], trusted=True)
    config = load_hooks(loaded)
    assert config.problems == [] and loaded.problems == [], (config.problems, loaded.problems)
    return CommandHooks(config.commands, workspace=workspace, interactive=interactive, **options)


def start(
    fake_api: Any,
    tmp_path: Path,
    hooks: CommandHooks,
    *,
    policy: PermissionPolicy | None = None,
    checkpoints: bool = False,
) -> tuple[Running, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    points = Checkpoints(tmp_path / "state" / "checkpoints", workspace) if checkpoints else None
    rec = Recorder()
    journal = Journal(tmp_path / "state" / "journal.jsonl")
    deps = SessionDeps(
        config=AgentConfig(workspace=workspace, model="claude-test", session_id="s-hooks"),
        provider=AnthropicProvider(api_key="test-key", base_url=fake_api.url),
        tools=default_tools(
            workspace,
            on_before_write=points.record_pre_image if points else None,
            on_after_write=points.record_written if points else None,
        ),
        policy=policy or AllowAll(),
        journal=journal,
        emit=rec,
        checkpoints=points,
        hooks=hooks,
    )
    return Running(Session(deps), rec, journal), workspace


def hook_records(run: Running) -> list[HookRecord]:
    return [r for r in run.journal.records if isinstance(r, HookRecord)]


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in request["messages"] if m["role"] == "user" for b in m["content"]
            if b["type"] == "tool_result"]


def texts(message: dict[str, Any]) -> list[str]:
    return [b["text"] for b in message["content"] if b["type"] == "text"]


# ------------------------------------------- Claude Code's hooks on the real agent


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body).lstrip())
    path.chmod(0o755)
    return path


def python_hook(path: Path) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def agent(fake_api: Any, tmp_path: Path, prompt: str, hooks: dict[str, Any],
          *more: str) -> subprocess.CompletedProcess[str]:
    """``agent-tui -p`` in auto mode (nothing is refused but by the hooks), the hooks
    in a settings file of Claude Code's shape given with ``--settings``."""
    settings = tmp_path / "claude-settings.json"
    settings.write_text(json.dumps({"$schema": "https://json.schemastore.org/claude-code-settings.json",
                                    "hooks": hooks}, indent=2))
    return run_agent(
        ["-p", prompt, "--output-format", "stream-json", "--permission-mode", "auto",
         "--cwd", str(tmp_path / "ws"), "--settings", str(settings), *more],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                    XDG_CONFIG_HOME=str(tmp_path / "config")), timeout=90,
    )
