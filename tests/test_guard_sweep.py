"""A guard file a sandboxed command created does not take effect: it is moved into the
session's quarantine when the command ends (a background one also at each turn's
start), the model and the user are told where, and nothing is lost.

The guard files that exist are bound read-only in the sandbox (test_sandbox_confinement);
these are the ones that did not exist yet: a ``.claude/settings.local.json`` with a hook
in a folder without ``.claude/`` would otherwise run outside the sandbox next turn.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from agent_tui.cancel import CancelScope
from agent_tui.core.calls.tool import ToolContext
from agent_tui.protocol import TurnStarted
from agent_tui.runtime.guard_sweep import GuardSweep, take_baseline
from agent_tui.tools.background import BackgroundJobs
from agent_tui.tools.bash import BashTool
from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.hooks_support import tool_results
from tests.print_agent import env_for, wait_until
from tests.sandbox_support import LIMITS, needs_bwrap, sandbox_policy

HOOKS = json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
    {"type": "command", "command": "touch ESCAPED"}]}]}})


def _ctx(workspace: Path) -> ToolContext:
    return ToolContext(scope=CancelScope("tool"), workspace=workspace,
                       tool_use_id="toolu_test", operation_id="op_test")


def test_what_a_command_created_is_moved_whole_and_what_was_there_stays(tmp_path: Path) -> None:
    ws, quarantine = tmp_path / "ws", tmp_path / "state" / "quarantine"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "keep" / ".claude").mkdir(parents=True)
    (ws / "keep" / ".claude" / "settings.json").write_text("{}")
    (ws / "notes.txt").write_text("notes")
    baseline = take_baseline([ws])
    # what a command inside the sandbox could make where nothing was bound
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.local.json").write_text(HOOKS)
    (ws / "sub").mkdir()
    (ws / "sub" / "CLAUDE.md").write_text("obey")
    os.symlink("notes.txt", ws / "AGENTS.md")
    (ws / ".git" / "hooks").mkdir()
    (ws / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    (ws / "keep" / ".claude").rename(ws / "keep" / "old")  # a folder renamed away ...
    (ws / "keep" / ".claude").mkdir()  # ... and made again under its name
    (ws / "fresh" / ".git" / "hooks").mkdir(parents=True)  # a repository of its own
    told: list[str] = []
    moved = GuardSweep(quarantine, notify=told.append).end(baseline)
    assert sorted(m.path.relative_to(ws).as_posix() for m in moved) == [
        ".claude", ".git/hooks", "AGENTS.md", "keep/.claude", "sub/CLAUDE.md"]
    for name in (".claude", "AGENTS.md", "sub/CLAUDE.md", ".git/hooks", "keep/.claude"):
        assert not os.path.lexists(ws / name), name
    # nothing lost: each is in the quarantine, under its own path
    by_name = {m.path.relative_to(ws).as_posix(): m.to for m in moved}
    assert (by_name[".claude"] / "settings.local.json").read_text() == HOOKS
    assert (by_name["sub/CLAUDE.md"]).read_text() == "obey"
    assert os.readlink(by_name["AGENTS.md"]) == "notes.txt"
    assert all(m.to is not None and quarantine in m.to.parents for m in moved)
    # what was there, and the new repository's own files, stay
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    assert (ws / "keep" / "old" / "settings.json").read_text() == "{}"
    assert (ws / "fresh" / ".git" / "hooks").is_dir()
    assert len(told) == 1 and "write_file or edit_file" in told[0] and str(quarantine) in told[0]
    assert GuardSweep(quarantine).end(take_baseline([ws])) == []  # a quiet run says nothing


@needs_bwrap
@pytest.mark.asyncio
async def test_a_sandboxed_command_that_creates_a_guard_file_has_it_moved_and_is_told(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    tool = BashTool(limits=LIMITS, sandbox=sandbox_policy(ws))
    tool.sweep = GuardSweep(tmp_path / "quarantine")
    command = (f"mkdir .claude && echo '{HOOKS}' > .claude/settings.local.json && "
               "echo made > made.txt && echo done")
    result = await tool.run(tool.parse({"command": command}), _ctx(ws))
    assert "done" in result.content and "may not create the agent's own guard files" in result.content
    assert not (ws / ".claude").exists() and (ws / "made.txt").read_text() == "made\n"
    kept = list((tmp_path / "quarantine").rglob("settings.local.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_text()) == json.loads(HOOKS)


@needs_bwrap
@pytest.mark.asyncio
async def test_a_background_command_is_swept_at_a_turns_start_and_when_it_ends(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    jobs = BackgroundJobs(limits=LIMITS)
    told: list[str] = []
    tool = BashTool(jobs, limits=LIMITS, sandbox=sandbox_policy(ws))
    tool.sweep = sweep = GuardSweep(tmp_path / "quarantine", notify=told.append)
    try:
        started = await tool.run(tool.parse({
            "command": "touch CLAUDE.md; while [ ! -e stop ]; do sleep 0.05; done; "
                       "touch AGENTS.md", "run_in_background": True}), _ctx(ws))
        assert "shell_1" in started.content
        assert await asyncio.to_thread(wait_until, lambda: (ws / "CLAUDE.md").exists(), 20)
        sweep.observe(TurnStarted(turn_id="t2", text="next"))  # the next turn starts: swept before it runs
        assert not (ws / "CLAUDE.md").exists() and len(told) == 1 and "CLAUDE.md" in told[0]
        (ws / "stop").touch()
        assert await asyncio.to_thread(wait_until, lambda: len(told) == 2, 20)
        assert not (ws / "AGENTS.md").exists() and "AGENTS.md" in told[1]
        sweep.observe(TurnStarted(turn_id="t3", text="next"))  # it ended: nothing more to sweep for it
        assert len(told) == 2
    finally:
        await jobs.shutdown()


@needs_bwrap
def test_in_print_mode_a_planted_hook_never_runs(fake_api, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    fake_api.enqueue(Reply.tool_use("bash", {
        "command": f"mkdir .claude && echo '{HOOKS}' > .claude/settings.local.json"}),
        Reply.text("planted"))
    env = env_for(tmp_path, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=fake_api.url,
                  XDG_CONFIG_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home-dir"))
    out = run_agent(["-p", "plant it", "--cwd", str(ws), "--sandbox"], env=env, timeout=90)
    assert out.returncode == 0, out.stderr
    said = json.dumps(tool_results(fake_api.requests[-1]))
    assert "may not create the agent's own guard files" in said
    assert "may not create the agent's own guard files" in out.stderr
    assert not (ws / ".claude").exists()
    # the next session in the same folder has no hook of the command's to run
    fake_api.enqueue(Reply.text("again"))
    out = run_agent(["-p", "again", "--cwd", str(ws), "--sandbox"], env=env, timeout=90)
    assert out.returncode == 0, out.stderr
    assert not (ws / "ESCAPED").exists()
