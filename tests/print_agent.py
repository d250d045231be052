"""The real ``agent-tui`` process in print mode, for tests: an environment of its own,
its stream-json events, a run against the fake API, an agent kept open on stdin, and
the processes a command left behind. The agents are forked (tests/forked_runs.py)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import psutil

from tests.forked_runs import popen_agent, run_agent


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(AGENT_TUI_HOME=str(tmp_path / "home"), AGENT_TUI_SCRIPTED_DELAY="0")
    env.update(extra)
    return env


def events_of(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def marked(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(marker in part for part in proc.info["cmdline"] or []):
                found.append(proc)
        except psutil.Error:
            pass
    return found


def wait_until(pred, timeout: float = 40.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False


def api_env(tmp_path: Path, fake_api) -> dict[str, str]:
    return env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)


def run(tmp_path: Path, fake_api, *args: str, input: str | None = None,
        ) -> subprocess.CompletedProcess:
    return run_agent(
        ["--cwd", str(tmp_path), *args], env=api_env(tmp_path, fake_api), input=input, timeout=60,
    )


def only_json(stdout: str) -> dict:
    """stdout holds one JSON object and nothing else (json.loads of all of it)."""
    result = json.loads(stdout)
    assert isinstance(result, dict) and stdout.endswith("}\n") and stdout.count("\n") == 1
    return result


class Agent:
    """The agent in stream-json print mode, kept open."""

    def __init__(self, tmp_path: Path, env: dict, *extra: str) -> None:
        self.proc = popen_agent(
            ["-p", "--input-format", "stream-json", "--output-format", "stream-json",
             "--cwd", str(tmp_path), *extra],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        self.events: list[dict] = []

    def send(self, op: dict) -> None:
        self.proc.stdin.write(json.dumps(op) + "\n")
        self.proc.stdin.flush()

    def until(self, pred, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.events.append(json.loads(line))
            if pred(self.events[-1]):
                return self.events[-1]
        raise AssertionError(f"not seen; events: {self.events}")

    def ended_call(self) -> dict:
        return self.until(lambda e: e["type"] == "tool_state" and e["tool_use_id"].startswith(
            "bash_mode_") and e["state"] not in ("running", "awaiting_approval"))

    def close(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(30)
        self.events += [json.loads(line) for line in self.proc.stdout if line.strip()]
        return code
