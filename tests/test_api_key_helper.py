"""Claude Code's ``apiKeyHelper``: the API key from a command in the user's settings.

Through the real binary and the real SDK against the fake API, which accepts only the
keys a test names (anything else is 401 ``authentication_error``, as the API answers).
The helpers are shell scripts the tests write; the key they print must never show in
stdout, stderr, the journal, or what a command the model runs can see.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_tui.cli.key_command import _run
from agent_tui.providers.key_helper import KeyHelper, KeyHelperError, ttl_from_env
from agent_tui.settings import load_settings
from tests.fake_api import Reply
from tests.forked_runs import run_agent

AGENT = [sys.executable, "-m", "agent_tui.cli"]
OLD, NEW = "sk-ant-helper-old-5f3a", "sk-ant-helper-new-9c1e"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home-of-user"
    (home / ".claude").mkdir(parents=True)
    return home


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def helper_script(tmp_path: Path, body: str) -> Path:
    """A helper that counts its runs in ``runs`` next to it, then runs ``body``."""
    script = tmp_path / "print-key.sh"
    script.write_text(f"#!/bin/sh\necho run >> '{tmp_path / 'runs'}'\n{body}\n")
    script.chmod(0o755)
    return script


def runs(tmp_path: Path) -> int:
    path = tmp_path / "runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


def user_settings(home: Path, command: str) -> Path:
    path = home / ".claude" / "settings.json"
    path.write_text(json.dumps({"$schema": "https://json.schemastore.org/claude-code-settings.json",
                                "apiKeyHelper": command}, indent=2))
    return path


def agent(fake_api, tmp_path: Path, home: Path, ws: Path, *args: str,
          **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_CODE_"))}
    env.update(ANTHROPIC_BASE_URL=fake_api.url, HOME=str(home),
               AGENT_TUI_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(home / ".config"),
               **env_extra)
    env.pop("CLAUDE_CONFIG_DIR", None)
    return run_agent(["--cwd", str(ws), "--model", "claude-haiku-4-5", *args],
                     env=env, timeout=90, stdin=subprocess.DEVNULL)


def state_text(tmp_path: Path) -> str:
    """Everything the agent wrote under its state folder (journals, logs)."""
    return "\n".join(p.read_text(errors="replace") for p in (tmp_path / "state").rglob("*")
                     if p.is_file())


def keys_sent(fake_api) -> list[str]:
    """The key of each /v1/messages request, however the SDK sent it."""
    return [h.get("x-api-key") or h.get("authorization", "").removeprefix("Bearer ")
            for h in fake_api.request_headers]


def test_the_helpers_key_is_the_one_sent(fake_api, tmp_path: Path, home: Path, ws: Path) -> None:
    user_settings(home, str(helper_script(tmp_path, f"echo '  {OLD}  '")))
    fake_api.accept_keys(OLD)
    fake_api.enqueue(Reply.text("hello from the API"))
    out = agent(fake_api, tmp_path, home, ws, "-p", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hello from the API"
    assert keys_sent(fake_api) == [OLD]  # trimmed; no ANTHROPIC_API_KEY: the helper chose it
    assert fake_api.refused_keys == [] and runs(tmp_path) == 1
    assert OLD not in out.stdout + out.stderr + state_text(tmp_path)


def test_a_rotated_key_is_one_401_then_the_helpers_new_key(fake_api, tmp_path: Path,
                                                           home: Path, ws: Path) -> None:
    """The key changes while a turn runs: the next request is refused once, the helper
    runs again, and the turn completes with the new key. A command the model runs sees
    neither key."""
    current = tmp_path / "current-key"
    current.write_text(OLD + "\n")
    user_settings(home, str(helper_script(tmp_path, f"cat '{current}'")))
    fake_api.accept_keys(OLD)
    # No Models API (as behind a gateway): the model lookup runs beside the turn, and a
    # lookup after the rotation would take the one 401 in the turn's place.
    fake_api.models_api = False

    def rotate(body: dict) -> Reply:  # the first request's reply: the key is rotated now
        current.write_text(NEW + "\n")
        fake_api.accept_keys(NEW)
        return Reply.tool_uses([("bash", {"command": "env; echo listed"}, "toolu_env")])

    fake_api.enqueue(rotate, Reply.text("done"))
    out = agent(fake_api, tmp_path, home, ws, "-p", "list the environment",
                "--permission-mode", "auto")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("done")
    assert fake_api.refused_keys == [OLD]  # exactly one 401
    assert keys_sent(fake_api) == [OLD, OLD, NEW]
    assert runs(tmp_path) == 2
    results = [block for request in fake_api.requests for message in request["messages"]
               if isinstance(message["content"], list) for block in message["content"]
               if block.get("type") == "tool_result"]
    assert results and "listed" in json.dumps(results)  # the command ran, and saw no key
    assert OLD not in json.dumps(results) and NEW not in json.dumps(results)
    for key in (OLD, NEW):
        assert key not in out.stdout + out.stderr + state_text(tmp_path)


def test_after_the_ttl_the_helper_runs_before_the_next_request(fake_api, tmp_path: Path,
                                                              home: Path, ws: Path) -> None:
    user_settings(home, str(helper_script(tmp_path, f"echo {OLD}")))
    fake_api.accept_keys(OLD)
    fake_api.enqueue(Reply.tool_uses([("bash", {"command": "true"}, "toolu_1")]),
                     Reply.text("done"))
    out = agent(fake_api, tmp_path, home, ws, "-p", "go", "--permission-mode", "auto",
                CLAUDE_CODE_API_KEY_HELPER_TTL_MS="0")
    assert out.returncode == 0, out.stderr
    # before each request, with no 401: the model's description (/v1/models), then the
    # two message requests
    assert runs(tmp_path) == 3
    assert fake_api.refused_keys == [] and keys_sent(fake_api) == [OLD, OLD]


def test_a_failing_helper_is_one_line_exit_1_and_no_key(fake_api, tmp_path: Path, home: Path,
                                                        ws: Path) -> None:
    script = helper_script(tmp_path, f"echo {OLD}; echo 'vault: not logged in' >&2; exit 3")
    settings = user_settings(home, str(script))
    out = agent(fake_api, tmp_path, home, ws, "-p", "hi")
    assert out.returncode == 1
    lines = [line for line in out.stderr.splitlines() if "apiKeyHelper" in line]
    assert lines, out.stderr
    assert (f"apiKeyHelper `{script}` (from {settings}) exited with code 3: vault: not "
            "logged in") in lines[0]
    assert fake_api.request_headers == []  # nothing was sent without a key
    assert OLD not in out.stdout + out.stderr + state_text(tmp_path)


def test_a_helper_that_prints_nothing_is_named(fake_api, tmp_path: Path, home: Path,
                                              ws: Path) -> None:
    script = helper_script(tmp_path, "true")
    user_settings(home, str(script))
    out = agent(fake_api, tmp_path, home, ws, "-p", "hi")
    assert out.returncode == 1
    assert f"apiKeyHelper `{script}`" in out.stderr and "printed nothing on stdout" in out.stderr


def test_a_helper_past_its_time_bound_is_stopped(tmp_path: Path) -> None:
    async def go() -> None:
        helper = KeyHelper("echo $$ > pid; exec sleep 30", tmp_path / "settings.json",
                           lambda command, timeout: _run(command, timeout, tmp_path),
                           timeout_s=0.5)
        with pytest.raises(KeyHelperError, match=r"printed no key within 0.5 s \(stopped\)"):
            await asyncio.wait_for(helper.key(), 10)

    asyncio.run(go())
    assert ended(int((tmp_path / "pid").read_text()))


def test_a_cancelled_request_ends_the_helper_too(tmp_path: Path) -> None:
    """Esc while the helper runs (the request's task is cancelled): the helper is ended."""
    async def go() -> None:
        helper = KeyHelper("echo $$ > pid; exec sleep 30", tmp_path / "settings.json",
                           lambda command, timeout: _run(command, timeout, tmp_path))
        task = asyncio.create_task(helper.key())
        for _ in range(100):
            if (tmp_path / "pid").exists():
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert ended(int((tmp_path / "pid").read_text()))


def ended(pid: int, wait_s: float = 5.0) -> bool:
    """Gone, or dead and not yet reaped (this test's loop is closed: nobody reaps it)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_a_bad_ttl_variable_is_named_and_the_default_kept() -> None:
    assert ttl_from_env({"CLAUDE_CODE_API_KEY_HELPER_TTL_MS": "120000"}) == (120.0, None)
    ttl, problem = ttl_from_env({"CLAUDE_CODE_API_KEY_HELPER_TTL_MS": "soon"})
    assert ttl == 300.0 and problem is not None and "CLAUDE_CODE_API_KEY_HELPER_TTL_MS" in problem


def test_a_projects_api_key_helper_is_ignored_with_a_notice(fake_api, tmp_path: Path,
                                                           home: Path, ws: Path) -> None:
    marker = tmp_path / "the-project-ran-this"
    project = ws / ".claude" / "settings.json"
    project.parent.mkdir()
    project.write_text(json.dumps({"apiKeyHelper": f"touch '{marker}'; echo {OLD}"}))
    loaded = load_settings(ws, user_dir=home / ".config" / "agent-tui",
                           claude_dir=home / ".claude", trusted=True)
    assert loaded.api_key_helper is None
    [problem] = [p for p in loaded.problem_details if p.file == project]
    assert "apiKeyHelper is only taken from your user settings" in problem.message
    out = agent(fake_api, tmp_path, home, ws, "-p", "hi")
    assert out.returncode == 0, out.stderr  # the offline provider: no key, no helper
    assert not marker.exists() and fake_api.request_headers == []
    assert f"{project}" in out.stderr and "apiKeyHelper" in out.stderr  # untrusted: withheld


def test_an_api_key_in_the_environment_comes_before_the_helper(fake_api, tmp_path: Path,
                                                               home: Path, ws: Path) -> None:
    user_settings(home, str(helper_script(tmp_path, f"echo {OLD}")))
    out = agent(fake_api, tmp_path, home, ws, "-p", "hi", ANTHROPIC_API_KEY="sk-from-env")
    assert out.returncode == 0, out.stderr
    assert keys_sent(fake_api) == ["sk-from-env"] and runs(tmp_path) == 0


def test_a_settings_file_given_on_the_command_line_may_name_a_helper(
        fake_api, tmp_path: Path, home: Path, ws: Path) -> None:
    given = tmp_path / "ci-settings.json"
    given.write_text(json.dumps({"apiKeyHelper": str(helper_script(tmp_path, f"echo {NEW}"))}))
    fake_api.accept_keys(NEW)
    out = agent(fake_api, tmp_path, home, ws, "-p", "hi", "--settings", str(given))
    assert out.returncode == 0, out.stderr
    assert keys_sent(fake_api) == [NEW]
