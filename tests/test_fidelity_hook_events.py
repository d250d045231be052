"""The hook events beyond the first six, on a real session (real SDK, the fake API,
real hook commands): ``StopFailure`` after an API error (as Claude Code 2.1.332 sends
it, ``fidelity_fixtures/claude_code_hooks.json``), ``PostCompact`` with the summary
saved, and agent-tui's own ``Interrupt`` after Esc: every tool call's end state and
the processes Esc ended, told after the turn is said ended."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.protocol import Compact, Interrupt, UserMessage
from tests.fake_api import Reply
from tests.hooks_support import command_hooks, hook_script, start

pytestmark = pytest.mark.asyncio

LOG = """
    given = json.load(sys.stdin)
    with open(os.environ["HOOK_LOG"], "a") as log:
        log.write(json.dumps(given) + "\\n")
"""


def _logged(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *events: str):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    log = hook_script(tmp_path / "hooks", "log", LOG)
    return command_hooks(tmp_path, tmp_path / "ws", {
        e: [{"hooks": [{"type": "command", "command": log}]}] for e in events})


async def test_an_api_error_runs_stop_failure_hooks(fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, "StopFailure", "Stop")
    run, _ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.error(400, "invalid_request_error"))
    run.submit(UserMessage(text="hello"))
    await run.idle()
    await run.rec.wait_for(lambda: bool(_logged(tmp_path / "hook.log")))
    [seen] = _logged(tmp_path / "hook.log")  # no Stop: the model never stopped on its own
    assert seen["hook_event_name"] == "StopFailure" and seen["error"] == "invalid_request"
    assert seen["last_assistant_message"].startswith("API Error: ")  # as Claude Code words it
    assert "Invalid request" in seen["error_details"]
    assert {"session_id", "transcript_path", "cwd"} <= set(seen)
    assert run.rec.of("turn_ended")[-1].status == "failed"


async def test_post_compact_gets_the_summary_saved(fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, "PostCompact")
    run, _ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("first answer"), Reply.text("SUMMARY: the user said hello"))
    run.submit(UserMessage(text="hello"))
    await run.idle()
    run.submit(Compact(instructions=""))
    await run.rec.wait_for(lambda: bool(_logged(tmp_path / "hook.log")))
    [seen] = _logged(tmp_path / "hook.log")
    assert seen["hook_event_name"] == "PostCompact" and seen["trigger"] == "manual"
    assert "SUMMARY: the user said hello" in seen["compact_summary"]


async def test_interrupt_tells_each_calls_end_and_the_processes_esc_ended(
        fake_api, tmp_path, monkeypatch):
    hooks = _hooks(tmp_path, monkeypatch, "Interrupt")
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_uses([("bash", {"command": "echo done > first"}),
                                      ("bash", {"command": "touch started; sleep 60"}),
                                      ("bash", {"command": "touch never"})]))
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(lambda: (ws / "started").exists())
    run.submit(Interrupt())
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    await run.rec.wait_for(lambda: bool(_logged(tmp_path / "hook.log")))
    [seen] = _logged(tmp_path / "hook.log")
    assert seen["hook_event_name"] == "Interrupt"
    states = [(c["tool_name"], c["state"]) for c in seen["tool_calls"]]
    assert states == [("Bash", "succeeded"), ("Bash", "cancelled_while_running"),
                      ("Bash", "cancelled_before_start")]
    [ended] = seen["processes_ended"]
    assert ended["tool_use_id"] == seen["tool_calls"][1]["tool_use_id"]
    assert ended["signal"] in ("SIGTERM", "SIGKILL")
    assert seen["processes_left"] == []
    assert not (ws / "never").exists()
