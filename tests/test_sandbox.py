"""The sandbox: bash commands under bubblewrap write only where allowed, reach no
network, see no secrets, still build and test a project, and need no approval (deny
rules still deny). Real bwrap, real processes; skipped with the reason where bwrap
cannot run here."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from agent_tui.cancel import CancelScope
from agent_tui.containment_settings import Network
from agent_tui.protocol import ToolState, Verdict
from agent_tui.core.calls.tool import ToolContext, ToolResult
from agent_tui.settings import load_settings
from agent_tui.tools.bash import BashTool
from agent_tui.permissions import Permissions, PermissionRules
from agent_tui.runtime.sandbox import SandboxPolicy, make_policy
from tests.sandbox_support import LIMITS, needs_bwrap, sandbox_policy


def _ctx(workspace: Path) -> ToolContext:
    return ToolContext(scope=CancelScope("tool"), workspace=workspace,
                       tool_use_id="toolu_test", operation_id="op_test")


async def _sandboxed(workspace: Path, command: str, policy: SandboxPolicy | None = None) -> ToolResult:
    tool = BashTool(limits=LIMITS, sandbox=policy or sandbox_policy(workspace))
    return await tool.run(tool.parse({"command": command}), _ctx(workspace))


@needs_bwrap
@pytest.mark.asyncio
async def test_sandboxed_write_inside_the_workspace_lands(tmp_path: Path) -> None:
    result = await _sandboxed(tmp_path, "echo made > inside.txt && cat inside.txt")

    assert result.outcome is ToolState.SUCCEEDED, result.content
    assert (tmp_path / "inside.txt").read_text() == "made\n"


@needs_bwrap
@pytest.mark.asyncio
async def test_sandboxed_writes_outside_the_workspace_home_and_etc_are_refused(
    tmp_path: Path,
) -> None:
    name = f"atui-sandbox-{uuid.uuid4().hex[:8]}"
    # Outside the workspace, and not under /tmp (the sandbox's /tmp is its own).
    workspace, outside = tmp_path / "ws", Path("/var/tmp") / name
    workspace.mkdir()
    outside.mkdir()
    home = Path.home() / name
    etc = Path("/etc") / name
    try:
        for target in (outside / "x", home, etc):
            result = await _sandboxed(workspace, f"echo no > {target}")
            assert result.outcome is ToolState.FAILED, (target, result.content)
            assert "Read-only file system" in result.content
            assert "[sandbox: a write outside the workspace was refused" in result.content
            assert not target.exists()
    finally:
        for leftover in (home, etc, outside / "x"):
            leftover.unlink(missing_ok=True)
        outside.rmdir()


@needs_bwrap
@pytest.mark.asyncio
async def test_sandbox_tmp_is_private_and_allow_write_opens_a_path(tmp_path: Path) -> None:
    extra = tmp_path / "cache"
    extra.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    name = f"atui-private-{uuid.uuid4().hex[:8]}"
    policy = sandbox_policy(workspace, allow_write=[str(extra)])
    result = await _sandboxed(workspace, f"echo t > /tmp/{name} && echo c > {extra}/f", policy)

    assert result.outcome is ToolState.SUCCEEDED, result.content
    assert not (Path("/tmp") / name).exists()  # its /tmp was its own
    assert (extra / "f").read_text() == "c\n"


@needs_bwrap
@pytest.mark.asyncio
async def test_secrets_under_home_are_hidden(tmp_path: Path) -> None:
    home, workspace, state = tmp_path / "home", tmp_path / "ws", tmp_path / "state"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("SECRET-KEY")
    state.mkdir()
    (state / "journal.jsonl").write_text("SECRET-JOURNAL")
    workspace.mkdir()
    policy = make_policy(workspace, network=Network.DENY, allow_write=[], private=[state],
                         home=home)
    result = await _sandboxed(
        workspace, f"cat {home}/.ssh/id_ed25519 {state}/journal.jsonl; ls -A {home}/.ssh",
        policy)

    assert "SECRET" not in result.content
    assert (home / ".ssh" / "id_ed25519").read_text() == "SECRET-KEY"  # untouched outside


@needs_bwrap
@pytest.mark.asyncio
async def test_sandboxed_connection_to_a_host_listener_is_refused(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        result = await _sandboxed(tmp_path, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
        with pytest.raises(TimeoutError):
            listener.accept()  # nothing arrived
    finally:
        listener.close()

    assert result.outcome is ToolState.FAILED
    assert "connected" not in result.content
    assert "[sandbox: the command has no network" in result.content


@needs_bwrap
@pytest.mark.asyncio
async def test_programs_under_tmp_stay_visible_and_read_only_through_the_private_tmp(
    tmp_path: Path,
) -> None:
    """A PATH entry under /tmp (a virtualenv, a tool unpacked there) is shown read-only;
    the rest of the host's /tmp stays out of sight."""
    tools, workspace, other = tmp_path / "tools" / "bin", tmp_path / "ws", tmp_path / "other"
    for folder in (tools, workspace, other):
        folder.mkdir(parents=True)
    (tools / "mytool").write_text("#!/bin/sh\necho tool ran\n")
    (tools / "mytool").chmod(0o755)
    (other / "secret").write_text("host tmp")
    policy = sandbox_policy(workspace, search_path=f"{tools}{os.pathsep}/usr/bin{os.pathsep}/bin")
    own = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}  # this Python's, under /tmp too
    assert tools.resolve() in policy.read_only
    assert set(policy.read_only) - {tools.resolve()} <= own
    result = await _sandboxed(
        workspace, f"{tools}/mytool; cat {other}/secret; echo x > {tools}/new", policy)

    assert "tool ran" in result.content
    assert "host tmp" not in result.content and "No such file" in result.content
    assert "Read-only file system" in result.content
    assert not (tools / "new").exists()


def test_a_path_entry_that_is_tmp_itself_or_inside_the_workspace_is_not_bound_read_only(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "bin").mkdir(parents=True)
    policy = sandbox_policy(workspace, search_path=f"/tmp{os.pathsep}{workspace / 'bin'}")
    assert Path("/tmp") not in policy.read_only  # that would undo the private /tmp
    assert workspace.resolve() / "bin" not in policy.read_only  # already writable


@needs_bwrap
@pytest.mark.asyncio
async def test_an_ordinary_build_and_test_run_work_in_the_sandbox(tmp_path: Path) -> None:
    """``make``, then this interpreter's pytest: wherever it lives, under /tmp too."""
    (tmp_path / "Makefile").write_text("out.txt: in.txt\n\tcp in.txt out.txt\n")
    (tmp_path / "in.txt").write_text("data\n")
    (tmp_path / "test_tiny.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    python = sys.executable
    result = await _sandboxed(
        tmp_path, f"make && {python} -m pytest -q -p no:cacheprovider test_tiny.py")

    assert result.outcome is ToolState.SUCCEEDED, result.content
    assert (tmp_path / "out.txt").read_text() == "data\n"
    assert "1 passed" in result.content


@pytest.mark.asyncio
async def test_sandboxed_bash_needs_no_approval_but_deny_rules_still_deny(tmp_path: Path) -> None:
    tool = BashTool(limits=LIMITS, sandbox=sandbox_policy(tmp_path))
    plain = BashTool(limits=LIMITS)
    policy = Permissions(tmp_path, "ask", PermissionRules(deny=["bash(rm:*)"]))

    assert policy.check(tool, tool.parse({"command": "make"})).verdict is Verdict.ALLOW
    assert policy.check(plain, plain.parse({"command": "make"})).verdict is Verdict.ASK
    assert policy.check(tool, tool.parse({"command": "rm -rf x"})).verdict is Verdict.DENY


def test_a_project_can_turn_the_sandbox_on_never_off(tmp_path: Path) -> None:
    user, workspace = tmp_path / "user", tmp_path / "ws"
    (workspace / ".agent-tui").mkdir(parents=True)
    user.mkdir()
    (user / "settings.json").write_text('{"sandbox": {"enabled": true}}')
    (workspace / ".agent-tui" / "settings.json").write_text(
        '{"sandbox": {"enabled": false, "network": "allow", "allowWrite": ["/"]}}')
    loaded = load_settings(workspace, user_dir=user, trusted=True)
    assert loaded.sandbox.enabled is True
    assert loaded.sandbox.network is Network.DENY
    assert loaded.sandbox.allow_write == []
    assert any("never off" in p for p in loaded.problems)

    (user / "settings.json").write_text("{}")
    (workspace / ".agent-tui" / "settings.json").write_text('{"sandbox": {"enabled": true}}')
    assert load_settings(workspace, user_dir=user, trusted=True).sandbox.enabled is True


def test_sandbox_without_bwrap_fails_at_start_and_runs_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(AGENT_TUI_HOME=str(tmp_path / "home"), PATH=str(empty))
    marker = tmp_path / "ran"
    out = subprocess.run(
        [sys.executable, "-m", "agent_tui.cli", "-p", f"touch {marker}", "--sandbox",
         "--permission-mode", "auto", "--cwd", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 1
    assert "bubblewrap" in out.stderr and "nothing was run" in out.stderr
    assert not marker.exists()
    assert not (tmp_path / "home" / "sessions").exists() or not any(
        (tmp_path / "home" / "sessions").iterdir())


def test_limits_settings_are_read(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "settings.json").write_text('{"limits": {"pids": 64, "memory": "512M"}}')
    loaded = load_settings(tmp_path, user_dir=user, trusted=True)
    assert (loaded.limits.pids, loaded.limits.memory) == (64, 512 << 20)
    (user / "settings.json").write_text('{"limits": {"memory": "lots"}}')
    assert any("not a size" in p for p in load_settings(tmp_path, user_dir=user, trusted=True).problems)



def test_the_grace_setting_reaches_every_new_run(tmp_path: Path) -> None:
    from agent_tui.runtime.process import DEFAULT_GRACE_S, RunLimits, configure_limits

    user = tmp_path / "user"
    user.mkdir()
    (user / "settings.json").write_text('{"limits": {"graceSeconds": 0.25}}')
    loaded = load_settings(tmp_path, user_dir=user, trusted=True)
    assert loaded.limits.grace_s == 0.25 and not loaded.problems
    try:
        configure_limits(loaded.limits.pids, loaded.limits.memory, loaded.limits.grace_s)
        assert RunLimits().grace_s == 0.25 and BashTool().limits.grace_s == 0.25
    finally:
        configure_limits(None, None, None)
    assert RunLimits().grace_s == DEFAULT_GRACE_S
    (user / "settings.json").write_text('{"limits": {"graceSeconds": 600}}')
    assert any("graceSeconds" in p for p in load_settings(tmp_path, user_dir=user, trusted=True).problems)

@needs_bwrap
@pytest.mark.asyncio
async def test_rewind_restores_what_a_sandboxed_command_changed(tmp_path: Path) -> None:
    from agent_tui.protocol import PlanRewind, RestoreWhat, Rewind
    from tests.rewind_support import start, turn

    run, _ = start(tmp_path)
    ws = tmp_path / "ws"
    bash = run.session.tools.get("bash")
    assert isinstance(bash, BashTool)
    bash.sandbox = sandbox_policy(ws)
    await turn(run, "write it")
    await turn(run, "shell it")  # sed, a new file and an rm, all under bwrap
    assert (ws / "a.txt").read_text() == "two\n" and not (ws / "keep.txt").exists()

    run.submit(PlanRewind(checkpoint_id="t2"))
    await run.rec.wait_type("rewind_plan")
    kinds = {c.path: c.kind for c in run.rec.of("rewind_plan")[-1].changes}
    assert kinds == {"a.txt": "modified", "b.txt": "deleted", "keep.txt": "added"}
    run.submit(Rewind(checkpoint_id="t2", restore=RestoreWhat.CODE))
    await run.rec.wait_type("rewound")
    await run.idle()
    assert (ws / "a.txt").read_text() == "one\n" and (ws / "keep.txt").exists()
    assert not (ws / "b.txt").exists()
    await run.close()


async def _session_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *,
                         sandbox: bool | None) -> tuple[list[str], list[str], list[str]]:
    """A session as ``agent-tui -p`` builds it: (the notices of its start, /context's
    notes, the badges a status line shows)."""
    import asyncio

    from agent_tui.cli.options import Options
    from agent_tui.cli.wiring import Wiring
    from agent_tui.protocol import Shutdown, ShowContext
    from tests.harness import Recorder

    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    opts = Options(provider="scripted", model=None, cwd=workspace, permission_mode="ask",
                   theme=None, resume=None, continue_=False, script=None, prompt=None,
                   print_mode=True, output_format="stream-json", input_format="stream-json",
                   sandbox=sandbox)
    rec = Recorder()
    session = Wiring(opts, interactive=False).make_session(rec)
    task = asyncio.create_task(session.run())
    try:
        session.submit(ShowContext())
        await rec.wait_for(lambda: bool(rec.of("context_report")), timeout=30)
    finally:
        session.submit(Shutdown())
        await asyncio.wait_for(task, 30)
    from agent_tui.protocol import NoticeCode

    told = [n.text for n in rec.of("notice") if n.code is NoticeCode.CONTAINMENT]
    assert all("Commands:" in t for t in told) and len(told) <= 1
    return [n.text for n in rec.of("notice")], rec.of("context_report")[-1].notes, session.badges


@pytest.mark.asyncio
async def test_without_cgroups_the_session_start_says_so_once_and_context_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_tui.runtime.process.cgroup_tree import set_enabled

    set_enabled(False)
    try:
        notices, notes, badges = await _session_start(tmp_path, monkeypatch, sandbox=False)
    finally:
        set_enabled(True)
    told = [n for n in notices if "not by cgroup" in n]
    assert len(told) == 1 and "cgroups turned off" in told[0]
    assert "can escape" in told[0]  # what the fallback does not catch
    assert any("not by cgroup" in n for n in notes)
    assert badges == []


@pytest.mark.asyncio
async def test_with_cgroups_the_start_is_quiet_and_context_names_the_cgroups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_tui.runtime.process import ContainmentMode, containment

    if containment().mode is not ContainmentMode.CGROUP:
        pytest.skip(f"no writable cgroup v2 for the agent here: {containment().detail}")
    notices, notes, badges = await _session_start(tmp_path, monkeypatch, sandbox=False)
    assert not any("cgroup" in n or "Sandbox" in n for n in notices)  # all as expected
    assert badges == []
    assert any("each command runs in a cgroup of its own" in n for n in notes)
    assert any(n.startswith("Sandbox: off") for n in notes)


@needs_bwrap
@pytest.mark.asyncio
async def test_with_the_sandbox_the_session_start_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    notices, notes, badges = await _session_start(tmp_path, monkeypatch, sandbox=True)
    assert badges == ["sandbox"]  # the status line says it all along
    told = [n for n in notices if "sandbox on (bubblewrap)" in n]
    assert len(told) == 1 and "no network" in told[0]
    assert any("sandbox on (bubblewrap)" in n for n in notes)
