"""The peers of ``make bench-peers``: pinned npm packages in a cache outside the repo, and
how each is pointed at the bench's fake API with a throwaway home.

Claude Code and pi speak the Anthropic Messages API (``tests/fake_api``); opencode is
given an OpenAI-compatible provider (``tests/fake_openai``, Chat Completions), whose
base URL ends in ``/v1``. Every peer has its telemetry, update checks and other traffic
turned off by the settings its own docs name; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.startup import AGENT, _env

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "agent-tui" / "bench-peers"
KEY = "bench-key-0123456789abcdef"  # a dummy key, never a real one
MODEL = "claude-bench"  # the model id of the Anthropic peers
# opencode marks the messages of a model named claude-* with Anthropic's cache_control,
# which an OpenAI-compatible server refuses: its model has a neutral name.
OPENAI_MODEL = "bench-model"
PINS = {  # npm package: version
    "@anthropic-ai/claude-code": "2.1.332",
    "opencode-ai": "1.18.33",
    "@mariozechner/pi-coding-agent": "0.73.1",
}


@dataclass(frozen=True)
class Peer:
    """One program to measure: how to start it and how it says a turn stopped."""

    name: str
    package: str  # npm package ("" for agent-tui)
    binary: str  # under node_modules/.bin
    api: str  # "anthropic" or "openai"
    stop_words: tuple[str, ...]  # lower case; the first one on screen is the stop line
    bash_tool: str  # the name of its shell tool, as the model calls it
    ready_word: str = ""  # on screen when it takes a prompt ("": output is quiet)
    final_words: tuple[str, ...] = ()  # the turn's final state, if not a stop word

    @property
    def version(self) -> str:
        return PINS.get(self.package, "this tree")

    @property
    def final(self) -> tuple[str, ...]:
        return self.final_words or self.stop_words


AGENT_TUI = Peer("agent-tui", "", "", "anthropic", ("stopping", "interrupted"), "bash",
                 final_words=("turncancelled",))
CLAUDE = Peer("Claude Code", "@anthropic-ai/claude-code", "claude", "anthropic",
              ("interrupted",), "Bash")
PI = Peer("pi", "@mariozechner/pi-coding-agent", "pi", "anthropic",
          ("aborted", "interrupted", "cancelled"), "bash")
OPENCODE = Peer("opencode", "opencode-ai", "opencode", "openai",
                ("interrupted", "aborted", "cancelled"), "bash", "askanything")
PEERS = (AGENT_TUI, CLAUDE, PI, OPENCODE)


def install(cache: Path = CACHE, timeout: float = 600.0) -> str:
    """Install the pinned packages into ``cache`` (made here) unless they are there.
    Returns what happened, in words; raises nothing (npm missing is a line of the report)."""
    try:
        cache.mkdir(parents=True, exist_ok=True)
        if all(installed_version(cache, p) == v for p, v in PINS.items()):
            return f"peers already installed in {cache}"
        npm = shutil.which("npm")
        if npm is None:
            return "npm is not on PATH: the peers are left out"
        (cache / "package.json").write_text(
            json.dumps({"name": "agent-tui-bench-peers", "private": True}), encoding="utf-8")
        argv = [npm, "install", "--no-audit", "--no-fund", "--save-exact",
                *(f"{p}@{v}" for p, v in PINS.items())]
        done = subprocess.run(argv, cwd=cache, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            return f"npm install failed ({done.returncode}): {done.stderr.strip()[-300:]}"
        return f"installed {', '.join(f'{p}@{v}' for p, v in PINS.items())} in {cache}"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"npm install did not run: {exc}"


def installed_version(cache: Path, package: str) -> str | None:
    try:
        meta = json.loads((cache / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = meta.get("version")
    return version if isinstance(version, str) else None


def command(peer: Peer, cache: Path, workspace: Path) -> list[str]:
    """The argv that starts ``peer``'s TUI in ``workspace`` on the bench's model."""
    if peer is AGENT_TUI:
        return [sys.executable, "-c", AGENT, "--cwd", str(workspace), "--model", MODEL,
                "--dangerously-skip-permissions"]
    exe = str(cache / "node_modules" / ".bin" / peer.binary)
    if peer is OPENCODE:
        # Inside tmux, which answers the terminal queries opencode waits on before it
        # takes an Enter; the rest of its screen passes through unchanged. Its socket
        # sits beside the workspace, in the session's own folder.
        return ["tmux", "-S", str(workspace.parent / "tmux.sock"), "-f", "/dev/null", "new-session",
                "-c", str(workspace), exe, "--model", "bench/" + OPENAI_MODEL, str(workspace)]
    if peer is PI:
        return [exe, "--provider", "bench", "--model", MODEL]
    return [exe, "--model", MODEL]


def print_command(peer: Peer, cache: Path, workspace: Path, prompt: str) -> list[str]:
    """The argv of one print-mode turn (the answer on stdout, then exit)."""
    if peer is OPENCODE:
        exe = str(cache / "node_modules" / ".bin" / peer.binary)
        return [exe, "run", "--model", "bench/" + OPENAI_MODEL, prompt]
    return [*command(peer, cache, workspace), "-p", prompt]


def environment(peer: Peer, home: Path, url: str) -> dict[str, str]:
    """The process environment: a throwaway HOME, the fake's URL, a dummy key, quiet."""
    env = _env(str(home))
    for name in list(env):
        if name.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE", "OPENCODE", "PI_")):
            del env[name]
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local" / "state"))
    if peer is AGENT_TUI or peer is CLAUDE:
        env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY=KEY)
    if peer is CLAUDE:
        env.update(CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
                   DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1")
    elif peer is PI:
        env.update(PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1", PI_TELEMETRY="0")
    elif peer is OPENCODE:
        for flag in ("AUTOUPDATE", "MODELS_FETCH", "SHARE", "DEFAULT_PLUGINS", "LSP_DOWNLOAD",
                     "CLAUDE_CODE", "EXTERNAL_SKILLS", "TERMINAL_TITLE"):
            env[f"OPENCODE_DISABLE_{flag}"] = "1"
    return env


def write_config(peer: Peer, home: Path, workspace: Path, url: str) -> None:
    """The peer's own settings files in the throwaway ``home``: the fake as its model's
    server, the workspace trusted, the shell tool allowed, nothing sent elsewhere."""
    home.mkdir(parents=True, exist_ok=True)
    if peer is CLAUDE:
        _json(home / ".claude.json", {
            "hasCompletedOnboarding": True,
            "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
            "projects": {str(workspace): {"hasTrustDialogAccepted": True,
                                          "hasCompletedProjectOnboarding": True}},
        })
        _json(home / ".claude" / "settings.json", {"permissions": {"allow": ["Bash"], "defaultMode": "default"}})
    elif peer is PI:
        _json(home / ".pi" / "agent" / "models.json", {"providers": {"bench": {
            "baseUrl": url, "api": "anthropic-messages", "apiKey": KEY,
            "models": [{"id": MODEL, "name": "bench", "reasoning": False, "input": ["text"],
                        "contextWindow": 200000, "maxTokens": 8192,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
        }}})
    elif peer is OPENCODE:
        _json(home / ".config" / "opencode" / "opencode.json", {
            "autoupdate": False, "share": "disabled",
            "model": "bench/" + OPENAI_MODEL, "small_model": "bench/" + OPENAI_MODEL,
            "permission": {"bash": "allow", "edit": "allow"},
            "provider": {"bench": {
                "npm": "@ai-sdk/openai-compatible", "name": "bench",
                "options": {"baseURL": url, "apiKey": KEY},
                "models": {OPENAI_MODEL: {"name": "bench"}},
            }},
        })


def _json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")
