"""``--add-dir DIR``: a folder the file tools use as they use the workspace (confined
the same way), that accept-edits lets edits into; a bad path is a usage error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_tui.cancel import CancelScope
from agent_tui.core.calls.tool import ToolContext
from agent_tui.permissions import Permissions
from agent_tui.protocol import Verdict
from agent_tui.tools.files import EditFileTool, ReadFileTool, WriteFileTool
from tests.fake_api import Reply
from tests.print_agent import only_json, run


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    ws, extra = tmp_path / "ws", tmp_path / "extra"
    ws.mkdir()
    extra.mkdir()
    return ws, extra


def ctx(ws: Path, *added: Path) -> ToolContext:
    return ToolContext(scope=CancelScope("t"), workspace=ws, tool_use_id="t",
                       operation_id="t", added_dirs=tuple(added))


@pytest.mark.asyncio
async def test_the_file_tools_read_and_write_in_an_added_folder(roots):
    ws, extra = roots
    (extra / "notes.txt").write_text("one\n")
    path = str(extra / "notes.txt")
    read = await ReadFileTool().run(ReadFileTool.Input(path=path), ctx(ws, extra))
    assert not read.is_error and "one" in read.content
    seen: list[Path] = []
    edit = EditFileTool(on_before_write=lambda p, old: seen.append(p))
    done = await edit.run(EditFileTool.Input(path=path, old_string="one", new_string="two"),
                          ctx(ws, extra))
    assert not done.is_error, done.content
    assert path in done.content and "symlink" not in done.content
    assert (extra / "notes.txt").read_text() == "two\n"
    assert seen == [extra.resolve() / "notes.txt"]  # the checkpoint hook sees the real path
    wrote = await WriteFileTool().run(
        WriteFileTool.Input(path=str(extra / "sub" / "new.txt"), content="x"), ctx(ws, extra))
    assert not wrote.is_error and (extra / "sub" / "new.txt").read_text() == "x"


@pytest.mark.asyncio
async def test_without_the_folder_added_the_same_paths_are_refused(roots):
    ws, extra = roots
    (extra / "notes.txt").write_text("one\n")
    read = await ReadFileTool().run(ReadFileTool.Input(path=str(extra / "notes.txt")), ctx(ws))
    assert read.is_error and "outside the workspace" in read.content
    wrote = await WriteFileTool().run(
        WriteFileTool.Input(path=str(extra / "x"), content="x"), ctx(ws))
    assert wrote.is_error and not (extra / "x").exists()


@pytest.mark.asyncio
async def test_an_added_folder_is_confined_like_the_workspace(roots, tmp_path):
    ws, extra = roots
    (tmp_path / "secret").write_text("s\n")
    os.symlink(tmp_path / "secret", extra / "link")
    for path in (str(extra / ".." / "secret"), str(extra / "link")):
        read = await ReadFileTool().run(ReadFileTool.Input(path=path), ctx(ws, extra))
        assert read.is_error and "outside" in read.content, path
        wrote = await WriteFileTool().run(WriteFileTool.Input(path=path, content="x"),
                                          ctx(ws, extra))
        assert wrote.is_error, path
    assert (tmp_path / "secret").read_text() == "s\n"
    # a relative path is still the workspace's
    await WriteFileTool().run(WriteFileTool.Input(path="rel.txt", content="r"), ctx(ws, extra))
    assert (ws / "rel.txt").exists() and not (extra / "rel.txt").exists()


def test_accept_edits_allows_edits_inside_an_added_folder_only(roots, tmp_path):
    ws, extra = roots
    added = [extra.resolve()]
    policy = Permissions(ws, "accept-edits", added_dirs=added)
    tool = WriteFileTool()

    def verdict(path: str) -> Verdict:
        return policy.check(tool, WriteFileTool.Input(path=path, content="x")).verdict

    assert verdict(str(extra / "a.txt")) is Verdict.ALLOW
    assert verdict("a.txt") is Verdict.ALLOW
    assert verdict(str(tmp_path / "elsewhere.txt")) is Verdict.ASK
    assert verdict(str(extra / ".." / "elsewhere.txt")) is Verdict.ASK
    os.symlink(tmp_path, extra / "out")
    assert verdict(str(extra / "out" / "elsewhere.txt")) is Verdict.ASK
    assert Permissions(ws, "accept-edits").check(
        tool, WriteFileTool.Input(path=str(extra / "a.txt"), content="x")).verdict is Verdict.ASK
    for protected in (".claude/settings.json", ".git/config", ".mcp.json"):
        assert verdict(str(extra / protected)) is Verdict.ASK, protected  # as in the workspace
    added.clear()  # the policy reads the session's list as it is now
    assert verdict(str(extra / "a.txt")) is Verdict.ASK


# -- the real agent, print mode, against the fake API ------------------------------------


def writes_into(fake_api, path: Path) -> None:
    fake_api.enqueue(Reply.tool_use("write_file", {"path": str(path), "content": "hi\n"},
                                    id="toolu_w"), Reply.text("done"))


def test_print_mode_writes_into_an_added_folder_in_accept_edits(fake_api, tmp_path, roots):
    ws, extra = roots
    writes_into(fake_api, extra / "out.txt")
    out = run(tmp_path, fake_api, "--cwd", str(ws), "--add-dir", str(extra),
              "--permission-mode", "accept-edits", "-p", "write", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    assert (extra / "out.txt").read_text() == "hi\n"
    assert only_json(out.stdout)["permission_denials"] == []


def test_print_mode_without_add_dir_refuses_the_write(fake_api, tmp_path, roots):
    ws, extra = roots
    writes_into(fake_api, extra / "out.txt")
    out = run(tmp_path, fake_api, "--cwd", str(ws), "--permission-mode", "accept-edits",
              "-p", "write", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    assert not (extra / "out.txt").exists()
    denials = only_json(out.stdout)["permission_denials"]
    assert [d["tool_use_id"] for d in denials] == ["toolu_w"]


@pytest.mark.parametrize("bad", ["missing", "a-file"])
def test_a_bad_add_dir_is_a_one_line_usage_error(fake_api, tmp_path, bad):
    (tmp_path / "a-file").write_text("")
    out = run(tmp_path, fake_api, "--add-dir", str(tmp_path / bad), "-p", "hi")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == f"agent-tui: --add-dir {tmp_path / bad}: not a directory\n"
    assert fake_api.requests == []


# -- the sandbox ----------------------------------------------------------------------------


def test_the_sandbox_policy_takes_added_folders_as_the_workspace(roots):
    from agent_tui.containment_settings import Network
    from agent_tui.runtime.sandbox import make_policy

    ws, extra = roots
    policy = make_policy(ws, network=Network.DENY, allow_write=[], private=[])
    on = policy.with_added_dirs((extra,))
    assert extra in on.allow_write and "--bind" in on.wrap(["true"], ws)
    planning = policy.planning().with_added_dirs((extra,))
    assert extra not in planning.allow_write and extra in planning.read_only
    argv = planning.wrap(["true"], ws)
    assert "--bind" not in argv and str(extra) in argv  # shown, read-only
    assert policy.with_added_dirs(()) is policy


@pytest.mark.asyncio
async def test_a_sandboxed_command_writes_in_an_added_folder_and_plan_mode_reads_it(roots):
    from tests.sandbox_support import BWRAP_PROBLEM, LIMITS, sandbox_policy

    if BWRAP_PROBLEM is not None:
        pytest.skip(f"bwrap cannot run: {BWRAP_PROBLEM}")
    from agent_tui.core.calls.tool import Confinement
    from agent_tui.tools.bash import BashTool

    ws, extra = roots  # both under /tmp: the private /tmp must still show them
    policy = sandbox_policy(ws)
    tool = BashTool(limits=LIMITS, sandbox=policy)
    tool.plan_sandbox = policy.planning()
    wrote = await tool.run(tool.parse({"command": f"echo hi > {extra}/a.txt"}), ctx(ws, extra))
    assert not wrote.is_error, wrote.content
    assert (extra / "a.txt").read_text() == "hi\n"
    planned = ctx(ws, extra)
    planned.confinement = Confinement.READ_ONLY
    read = await tool.run(tool.parse({"command": f"cat {extra}/a.txt; echo no > {extra}/b"}),
                          planned)
    assert "hi" in read.content and not (extra / "b").exists()


# -- /add-dir ---------------------------------------------------------------------------


class _Host:
    def __init__(self, session) -> None:
        self.session, self.notices = session, []

    def current_session(self):
        return self.session

    def notice(self, level: str, text: str) -> None:
        self.notices.append((level, text))


class _Session:
    def __init__(self, ws: Path) -> None:
        self.workspace, self.added_dirs = ws, []


def test_slash_add_dir_adds_a_folder_and_refuses_a_bad_path(roots, tmp_path):
    from agent_tui.ui.commands.builtin import BUILTIN, HANDLERS

    assert "add-dir" in {c.name for c in BUILTIN}
    ws, extra = roots
    session = _Session(ws)
    host = _Host(session)
    HANDLERS["add-dir"](host, "../extra")  # relative: to the workspace
    assert session.added_dirs == [extra.resolve()]
    assert host.notices[-1][0] == "info" and f"added {extra.resolve()}" in host.notices[-1][1]
    HANDLERS["add-dir"](host, str(tmp_path / "missing"))
    assert host.notices[-1] == ("warning", f"/add-dir {tmp_path / 'missing'}: not added: "
                                f"{tmp_path / 'missing'} does not exist")
    (tmp_path / "f").write_text("")
    HANDLERS["add-dir"](host, str(tmp_path / "f"))
    assert host.notices[-1][0] == "warning" and "is not a folder" in host.notices[-1][1]
    HANDLERS["add-dir"](host, str(extra))
    assert session.added_dirs == [extra.resolve()] and "already" in host.notices[-1][1]


# -- settings: permissions.additionalDirectories ------------------------------------------


def test_additional_directories_come_from_the_users_files_never_a_projects(roots, tmp_path):
    import json

    from agent_tui.settings import load_settings

    ws, extra = roots
    user, claude = tmp_path / "user", tmp_path / "claude"
    user.mkdir()
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"permissions": {
        "additionalDirectories": ["../extra/"], "allow": ["Read"]}}))
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps({"permissions": {
        "additionalDirectories": ["/"], "deny": ["Bash(curl *)"]}}))
    loaded = load_settings(ws, user_dir=user, claude_dir=claude, trusted=True)
    assert loaded.additional_directories == ["../extra/"]
    problems = [str(p) for p in loaded.problem_details]
    assert len(problems) == 1 and "a project cannot widen" in problems[0]
    assert str(ws / ".claude" / "settings.json") in problems[0]
    assert "additionalDirectories" not in " ".join(problems).replace(
        "permissions.additionalDirectories is only", "")  # not called unsupported
    assert [r.text for r in loaded.deny] == ["Bash(curl *)"]  # the rest still loads


def test_print_mode_takes_additional_directories_from_a_settings_file_given(fake_api, tmp_path,
                                                                            roots):
    import json

    ws, extra = roots
    given = tmp_path / "mine.json"
    given.write_text(json.dumps({"permissions": {"additionalDirectories": ["../extra"]}}))
    writes_into(fake_api, extra / "out.txt")
    out = run(tmp_path, fake_api, "--cwd", str(ws), "--settings", str(given),
              "--permission-mode", "accept-edits", "-p", "write", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    assert (extra / "out.txt").read_text() == "hi\n"


# -- checkpoints ------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_rewind_names_an_edit_outside_the_folders_it_covers_as_not_undone(roots, tmp_path):
    # Checkpoints that were not given the folder (tests/test_rewind_added_dirs.py: given
    # it, the edit is rewound) say so rather than pretending.
    from agent_tui.checkpoints import Checkpoints

    ws, extra = roots
    (extra / "notes.txt").write_text("one\n")
    checkpoints = Checkpoints(tmp_path / "state" / "checkpoints", ws)
    info = checkpoints.take("before")
    tool = EditFileTool(on_before_write=checkpoints.record_pre_image,
                        on_after_write=checkpoints.record_written)
    done = await tool.run(EditFileTool.Input(path=str(extra / "notes.txt"), old_string="one",
                                             new_string="two"), ctx(ws, extra))
    assert not done.is_error
    plan = checkpoints.plan(info.id)
    assert any(str(extra.resolve() / "notes.txt") in item for item in plan.not_undoable)


@pytest.mark.asyncio
async def test_glob_and_grep_search_an_added_folder_by_its_absolute_path(roots):
    from agent_tui.tools.search.tools import GlobTool, GrepTool

    ws, extra = roots
    (extra / "src").mkdir()
    (extra / "src" / "a.py").write_text("needle = 1\n")
    (ws / "b.py").write_text("needle = 2\n")
    found = await GlobTool().run(GlobTool.Input(pattern="**/*.py", path=str(extra)),
                                 ctx(ws, extra))
    assert not found.is_error and f"{extra.resolve()}/src/a.py" in found.content
    assert "b.py" not in found.content
    hits = await GrepTool().run(GrepTool.Input(pattern="needle", path=str(extra)),
                                ctx(ws, extra))
    assert not hits.is_error and f"{extra.resolve()}/src/a.py" in hits.content, hits.content
    refused = await GrepTool().run(GrepTool.Input(pattern="needle", path=str(extra)), ctx(ws))
    assert refused.is_error and "outside the workspace" in refused.content
