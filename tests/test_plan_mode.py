"""Plan mode: read-only, enforced by the agent (permissions/plan.py), never asked of the
model. The real agent in print mode against the fake API: a model that tries every way
to write changes nothing, read-only commands still work, and each refusal says plan
mode. Where bubblewrap cannot run, commands are refused (those tests say so)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_tui.core.calls.permission import Confinement
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult
from agent_tui.permissions import PermissionRules, Permissions
from agent_tui.protocol import PermissionMode, Verdict
from agent_tui.tools.bash import BashTool
from agent_tui.tools.files import EditFileTool, ReadFileTool, WriteFileTool
from agent_tui.tools.plan_mode import ExitPlanModeTool
from agent_tui.runtime.sandbox import make_policy, runs_here
from agent_tui.containment_settings import Network
from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.print_agent import env_for, events_of

PLAN = make_policy(Path("/"), network=Network.DENY, allow_write=[], private=[]).planning()
BWRAP = runs_here(PLAN)
needs_bwrap = pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run here (not "
                                 "installed, or no user namespaces): plan mode refuses commands")


def _bash(workspace: Path, sandboxed: bool) -> BashTool:
    tool = BashTool()
    if sandboxed:
        tool.plan_sandbox = make_policy(workspace, network=Network.DENY, allow_write=[],
                                        private=[]).planning()
    return tool


def _check(tool: Tool, raw: dict, tmp_path: Path, rules: PermissionRules | None = None):
    policy = Permissions(tmp_path, PermissionMode.PLAN, rules)
    return policy.check(tool, tool.parse(raw))


def test_plan_mode_lets_reads_through_and_refuses_writes_whatever_the_allow_rules(tmp_path):
    rules = PermissionRules(allow=["write_file", "edit_file", "bash"])
    assert _check(ReadFileTool(), {"path": "a"}, tmp_path, rules).verdict is Verdict.ALLOW
    for tool, raw in ((WriteFileTool(), {"path": "a", "content": "x"}),
                      (EditFileTool(), {"path": "a", "old_string": "x", "new_string": "y"})):
        ruling = _check(tool, raw, tmp_path, rules)
        assert ruling.verdict is Verdict.DENY and "plan mode" in ruling.reason


def test_without_a_sandbox_plan_mode_refuses_commands_and_says_why(tmp_path):
    ruling = _check(_bash(tmp_path, sandboxed=False), {"command": "ls"}, tmp_path)
    assert ruling.verdict is Verdict.DENY
    assert "plan mode" in ruling.reason and "bubblewrap" in ruling.reason


@needs_bwrap
def test_a_command_in_plan_mode_is_confined_even_when_a_rule_allows_it(tmp_path):
    rules = PermissionRules(allow=["bash"])
    ruling = _check(_bash(tmp_path, sandboxed=True), {"command": "ls"}, tmp_path, rules)
    assert ruling.verdict is Verdict.ALLOW and ruling.confinement is Confinement.READ_ONLY


def test_a_deny_rule_still_denies_in_plan_mode(tmp_path):
    rules = PermissionRules(deny=["read_file(secret)"])
    ruling = _check(ReadFileTool(), {"path": "secret"}, tmp_path, rules)
    assert ruling.verdict is Verdict.DENY and "denied by rule" in ruling.reason


def test_exit_plan_mode_asks_in_plan_mode_and_is_a_no_op_outside(tmp_path):
    tool = ExitPlanModeTool()
    assert _check(tool, {"plan": "1. edit"}, tmp_path).verdict is Verdict.ASK
    ask = Permissions(tmp_path, PermissionMode.ASK)
    assert ask.check(tool, tool.parse({"plan": "x"})).verdict is Verdict.ALLOW


class _Probe(BaseModel):
    pass


class _McpLike(Tool):
    name = "mcp__srv__create"
    description = "not read-only"
    Input = _Probe

    async def run(self, args: _Probe, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        return ToolResult.ok("ran")


def test_a_tool_not_marked_read_only_is_refused_in_plan_mode(tmp_path):
    ruling = _check(_McpLike(), {}, tmp_path)
    assert ruling.verdict is Verdict.DENY and "plan mode" in ruling.reason


# -- the real agent ----------------------------------------------------------------------

WRITES = [
    ("bash", {"command": "echo pwned > redirected.txt"}),
    ("bash", {"command": "python3 -c \"open('by_python.txt', 'w').write('x')\""}),
    ("bash", {"command": "git add -A && git commit -qm sneaky"}),
    ("bash", {"command": "echo x > {outside}"}),
    ("bash", {"command": "touch tracked.txt && rm tracked.txt"}),
    ("write_file", {"path": "written.txt", "content": "x"}),
    ("edit_file", {"path": "tracked.txt", "old_string": "one", "new_string": "two"}),
]


def _repo(path: Path) -> str:
    path.mkdir()
    (path / "tracked.txt").write_text("one\n")
    for args in (["init", "-q"], ["add", "tracked.txt"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return _head(path)


def _head(path: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True,
                          text=True, check=True).stdout.strip()


def _plan_run(fake_api, tmp_path: Path, calls: list[tuple[str, dict]], *extra: str):
    workspace = tmp_path / "ws"
    head = _repo(workspace)
    fake_api.enqueue(Reply.tool_uses(calls), Reply.text("planned"))
    out = run_agent(
        ["-p", "do it", "--output-format", "stream-json", "--permission-mode", "plan",
         "--cwd", str(workspace), *extra],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url), timeout=90,
    )
    assert out.returncode == 0, out.stderr
    return workspace, head, events_of(out.stdout)


def _results(fake_api) -> list[dict]:
    return [b for b in fake_api.requests[1]["messages"][-1]["content"] if b["type"] == "tool_result"]


def test_a_model_that_tries_every_way_to_write_changes_nothing(fake_api, tmp_path):
    outside = tmp_path / "outside.txt"
    calls = [(name, {k: (v.replace("{outside}", str(outside)) if isinstance(v, str) else v)
                     for k, v in raw.items()}) for name, raw in WRITES]
    workspace, head, events = _plan_run(fake_api, tmp_path, calls)
    assert sorted(p.name for p in workspace.iterdir()) == [".git", "tracked.txt"]
    assert (workspace / "tracked.txt").read_text() == "one\n"
    assert _head(workspace) == head and not outside.exists()
    results = _results(fake_api)
    assert len(results) == len(WRITES)
    for i, result in enumerate(results):
        # Under the sandbox, /tmp is private: the write "outside" lands there, and is gone.
        if not (BWRAP and "{outside}" in WRITES[i][1].get("command", "")):
            assert result.get("is_error"), (WRITES[i], result)
    if BWRAP:
        assert "plan mode: commands run in a read-only sandbox" in results[0]["content"]
    file_tools = results[-2:]
    assert all("plan mode" in r["content"] for r in file_tools)
    if not BWRAP:
        assert all("plan mode" in r["content"] for r in results)
    first = fake_api.requests[0]["messages"][0]["content"]
    assert any("Plan mode is on" in b.get("text", "") for b in first)


@needs_bwrap
def test_read_only_commands_still_work_in_plan_mode(fake_api, tmp_path):
    calls = [("bash", {"command": "cat tracked.txt"}), ("bash", {"command": "git log --oneline"}),
             ("read_file", {"path": "tracked.txt"})]
    _workspace, _head_before, events = _plan_run(fake_api, tmp_path, calls)
    results = _results(fake_api)
    assert [bool(r.get("is_error")) for r in results] == [False, False, False]
    assert "one" in results[0]["content"] and "first" in results[1]["content"]
    states = [e["state"] for e in events if e["type"] == "tool_state" and e["name"] == "bash"]
    assert states.count("succeeded") == 2


def test_exit_plan_mode_in_print_mode_has_no_one_to_approve_and_stays_read_only(fake_api, tmp_path):
    calls = [("exit_plan_mode", {"plan": "1. change tracked.txt"}),
             ("write_file", {"path": "after.txt", "content": "x"})]
    workspace, _head_before, _events = _plan_run(fake_api, tmp_path, calls)
    assert not (workspace / "after.txt").exists()
    results = _results(fake_api)
    assert "print mode" in results[0]["content"] and "plan mode" in results[1]["content"]


def test_the_journal_keeps_the_mode_and_a_resume_in_another_mode_tells_the_model(fake_api, tmp_path):
    workspace, _head_before, events = _plan_run(fake_api, tmp_path, [("read_file", {"path": "x"})])
    fake_api.enqueue(Reply.text("ok"))
    out = run_agent(
        ["-p", "go on", "--continue", "--permission-mode", "accept-edits",
         "--cwd", str(workspace)],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url), timeout=90,
    )
    assert out.returncode == 0, out.stderr
    last = json.dumps(fake_api.requests[-1]["messages"][-1]["content"])
    assert "Plan mode is off" in last and "accept-edits" in last
