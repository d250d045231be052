"""A Claude Code user's whole setup (``tests/claude_user/``) copied for a test: their
home (``$HOME``, with ``~/.claude/``) and their project, run through ``agent-tui -p``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.forked_runs import run_agent
from tests.print_agent import env_for

SETUP = Path(__file__).parent / "claude_user"
SECRET = "sk-live-CLAUDE-USER-SECRET-1234"
FOLDER_SECRET = "SECRETS-FOLDER-TOKEN-5678"
SSH_KEY = "PRIVATE-SSH-KEY-9012"

class Setup:
    """The copied setup: ``home`` is ``$HOME``, ``ws`` the workspace."""

    def __init__(self, tmp_path: Path) -> None:
        shutil.copytree(SETUP, tmp_path / "cc", symlinks=True)
        self.tmp = tmp_path
        self.home = tmp_path / "cc" / "home"
        self.ws = tmp_path / "cc" / "project"
        (self.home / ".ssh").mkdir()
        (self.home / ".ssh" / "id_ed25519").write_text(SSH_KEY + "\n")
        (self.ws / "build").mkdir()
        # they accepted Claude Code's trust dialog for the project, as its users have
        (self.home / ".claude.json").write_text(json.dumps({"projects": {
            str(self.ws.resolve()): {"hasTrustDialogAccepted": True}}}))
        # `npm test` as the user's rule allows it: a stand-in npm that leaves a mark; the
        # hooks' `python3` is this interpreter (a shim of a version manager may need the
        # real HOME, which the test replaces)
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        npm = bin_dir / "npm"
        npm.write_text('#!/bin/sh\necho "npm $*" > npm-ran\necho "1 passing"\n')
        npm.chmod(0o755)
        (bin_dir / "python3").symlink_to(sys.executable)
        jq = Path(shutil.which("jq") or "/usr/bin/jq").parent
        self.path = f"{bin_dir}:{jq}:/usr/bin:/bin"

    def run(self, fake_api: Any, *args: str) -> subprocess.CompletedProcess[str]:
        env = env_for(self.tmp, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                      HOME=str(self.home), XDG_CONFIG_HOME=str(self.tmp / "xdg"),
                      PATH=self.path)
        env.pop("CLAUDE_CONFIG_DIR", None)
        return run_agent(["-p", "tidy up and ship", "--cwd", str(self.ws), *args],
                              env=env, timeout=120)

    def guard_log(self) -> list[dict[str, Any]]:
        log = self.home / ".claude" / "guard-log.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()]
