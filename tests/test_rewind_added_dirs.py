"""Rewind in a folder added to the workspace (``--add-dir``): file-tool edits and shell
commands' changes there are rewound as in the workspace, also after a resume; a folder
gone since is said so and the rest is restored; nothing outside is ever written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_tui.checkpoints import Checkpoints
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.journal.journal import Journal
from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.session.session import Session
from agent_tui.protocol import PlanRewind, RestoreWhat, Rewind, UserMessage
from agent_tui.providers.scripted import Block, Rule, Script, ScriptedProvider
from agent_tui.tools.registry import default_tools
from tests.harness import Recorder, Running

pytestmark = pytest.mark.asyncio


def script(extra: Path) -> Script:
    return Script(rules=[
        Rule(match="^edit", replies=[
            [Block(tool="edit_file", input={"path": str(extra / "notes.txt"),
                                            "old_string": "one", "new_string": "two"})],
            [Block(tool="write_file", input={"path": str(extra / "sub" / "new.txt"),
                                             "content": "new\n"})],
            [Block(text="edited")],
        ]),
        Rule(match="^shell", replies=[
            [Block(tool="bash", input={"command": f"cd '{extra}' && sed -i s/o/0/ notes.txt"
                                       " && echo made > made.txt && rm keep.txt"})],
            [Block(text="changed things")],
        ]),
        Rule(match="^local", replies=[
            [Block(tool="write_file", input={"path": "here.txt", "content": "here\n"})],
            [Block(text="wrote here")],
        ]),
    ], default=[[Block(text="hello")]])


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    ws, extra = tmp_path / "ws", tmp_path / "extra"
    ws.mkdir()
    extra.mkdir()
    (extra / "notes.txt").write_text("one\n")
    (extra / "keep.txt").write_text("keep me\n")
    return ws, extra.resolve()


def start(tmp_path: Path, ws: Path, extra: Path, added: list[Path],
          journal: Journal | None = None) -> Running:
    config = AgentConfig(workspace=ws, model="m", added_dirs=added)
    checkpoints = Checkpoints(tmp_path / "state" / "checkpoints", ws, added_dirs=config.added_dirs)
    rec = Recorder()
    journal = journal or Journal(tmp_path / "journal.jsonl")
    deps = SessionDeps(
        config=config, provider=ScriptedProvider(script(extra), delay=0),
        tools=default_tools(ws, on_before_write=checkpoints.record_pre_image,
                            on_after_write=checkpoints.record_written),
        policy=AllowAll(), journal=journal, emit=rec, checkpoints=checkpoints,
    )
    return Running(Session(deps), rec, journal)


async def turn(run: Running, text: str) -> None:
    run.submit(UserMessage(text=text))
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "completed", run.rec.summary()


async def rewind(run: Running, checkpoint_id: str, n: int = 1):
    run.submit(Rewind(checkpoint_id=checkpoint_id, restore=RestoreWhat.CODE))
    await run.rec.wait_type("rewound", n)
    return run.rec.of("rewound")[-1]


async def test_file_tool_edits_in_an_added_folder_are_rewound_and_the_rewind_undone(
        tmp_path, folders):
    ws, extra = folders
    run = start(tmp_path, ws, extra, [extra])
    await turn(run, "edit there")
    assert (extra / "notes.txt").read_text() == "two\n"
    run.submit(PlanRewind(checkpoint_id="t1"))
    await run.rec.wait_type("rewind_plan")
    plan = run.rec.of("rewind_plan")[-1]
    assert {c.path: c.kind for c in plan.changes} == {
        str(extra / "notes.txt"): "modified", str(extra / "sub" / "new.txt"): "deleted"}
    assert not any("outside" in line for line in plan.not_undoable), plan.not_undoable
    done = await rewind(run, "t1")
    assert done.errors == [] and done.skipped_conflicts == [], done
    assert (extra / "notes.txt").read_text() == "one\n"
    assert not (extra / "sub").exists()  # the folder the write made goes with its file
    undone = await rewind(run, done.undo_checkpoint_id, 2)
    assert undone.errors == []
    assert (extra / "notes.txt").read_text() == "two\n"
    assert (extra / "sub" / "new.txt").read_text() == "new\n"
    await run.close()


async def test_a_shell_commands_changes_in_an_added_folder_are_rewound(tmp_path, folders):
    ws, extra = folders
    run = start(tmp_path, ws, extra, [extra])
    await turn(run, "shell there")
    assert (extra / "notes.txt").read_text() == "0ne\n" and not (extra / "keep.txt").exists()
    done = await rewind(run, "t1")
    # the command's changes were announced: the agent's own, so no conflict to ask about
    assert done.errors == [] and done.skipped_conflicts == [], done
    assert {c.path for c in done.restored} == {
        str(extra / p) for p in ("notes.txt", "made.txt", "keep.txt")}
    assert (extra / "notes.txt").read_text() == "one\n"
    assert (extra / "keep.txt").read_text() == "keep me\n"
    assert not (extra / "made.txt").exists()
    await run.close()


async def test_a_folder_added_after_a_checkpoint_rewinds_to_its_first_snapshot(tmp_path, folders):
    ws, extra = folders
    run = start(tmp_path, ws, extra, [])
    await turn(run, "hi")  # t1: the folder is not added yet
    run.session.added_dirs.append(extra)  # as /add-dir does
    await turn(run, "shell there")  # t2
    done = await rewind(run, "t1")
    assert done.errors == [], done
    assert (extra / "notes.txt").read_text() == "one\n" and (extra / "keep.txt").exists()
    await run.close()


async def test_a_resumed_session_still_rewinds_the_added_folder(tmp_path, folders):
    ws, extra = folders
    run = start(tmp_path, ws, extra, [extra])
    await turn(run, "edit there")
    await turn(run, "shell there")
    await run.close()
    assert (extra / "notes.txt").read_text() == "tw0\n"
    # a new process: the journal read back, the folder not added again
    again = start(tmp_path, ws, extra, [], journal=Journal.load(tmp_path / "journal.jsonl"))
    done = await rewind(again, "t1")
    assert done.errors == [] and done.skipped_conflicts == [], done
    assert (extra / "notes.txt").read_text() == "one\n"
    assert (extra / "keep.txt").read_text() == "keep me\n"
    assert not (extra / "made.txt").exists() and not (extra / "sub").exists()
    await again.close()


async def test_a_folder_gone_since_is_said_and_the_rest_is_restored(tmp_path, folders):
    ws, extra = folders
    run = start(tmp_path, ws, extra, [extra])
    await turn(run, "edit there")
    await turn(run, "local write")
    shutil.rmtree(extra)
    run.submit(PlanRewind(checkpoint_id="t1"))
    await run.rec.wait_type("rewind_plan")
    plan = run.rec.of("rewind_plan")[-1]
    gone = f"the added folder {extra} no longer exists"
    assert any(gone in w for w in plan.warnings), plan.warnings
    assert [c.path for c in plan.changes] == ["here.txt"]
    done = await rewind(run, "t1")
    assert [c.path for c in done.restored] == ["here.txt"] and not (ws / "here.txt").exists()
    assert len(done.errors) == 1 and gone in done.errors[0], done.errors
    assert not extra.exists()  # never re-made
    await turn(run, "hi")  # the next checkpoint says so too, and is taken
    await run.rec.wait_for(lambda: any(gone in n.text for n in run.rec.of("notice")))
    await run.close()


async def test_a_record_naming_a_path_outside_every_folder_is_never_restored(tmp_path, folders):
    ws, extra = folders
    victim_dir = tmp_path / "elsewhere"
    victim_dir.mkdir()
    victim = victim_dir / "victim.txt"
    victim.write_text("mine\n")
    beside = tmp_path / "beside.txt"
    beside.write_text("mine too\n")
    run = start(tmp_path, ws, extra, [extra])
    run.submit(UserMessage(text="edit there"))  # notes.txt only
    await run.idle()
    (extra / "sub" / "new.txt").unlink()
    (extra / "sub").rmdir()
    await run.close()
    # a damaged (or forged) record: "did not exist" for files outside every folder
    path = tmp_path / "state" / "checkpoints" / "checkpoints.json"
    data = json.loads(path.read_text())
    data["records"][0]["pre_images"].update({str(victim): None, f"{extra}/../beside.txt": None})
    path.write_text(json.dumps(data))
    again = start(tmp_path, ws, extra, [extra], journal=Journal.load(tmp_path / "journal.jsonl"))
    done = await rewind(again, "t1")
    assert (extra / "notes.txt").read_text() == "one\n"
    assert victim.read_text() == "mine\n" and beside.read_text() == "mine too\n"
    assert done.errors == [] and [c.path for c in done.restored] == [str(extra / "notes.txt")]
    await again.close()


async def test_records_from_before_added_folders_still_rewind(tmp_path, folders):
    ws, extra = folders
    (ws / "a.txt").write_text("old\n")
    checkpoints = Checkpoints(tmp_path / "cp", ws)
    info = checkpoints.take("before")
    checkpoints.record_pre_image(ws / "a.txt", b"old\n")
    (ws / "a.txt").write_text("new\n")
    checkpoints.record_written(ws / "a.txt", b"new\n")
    path = tmp_path / "cp" / "checkpoints.json"
    data = json.loads(path.read_text())
    del data["added_roots"]  # as written before added folders were covered
    for rec in data["records"]:
        del rec["added"]
    path.write_text(json.dumps(data))
    report = Checkpoints(tmp_path / "cp", ws).restore(info.id)
    assert [c.path for c in report.restored] == ["a.txt"] and report.errors == []
    assert (ws / "a.txt").read_text() == "old\n"


async def test_pruned_checkpoints_free_their_snapshots_of_added_folders(tmp_path, folders):
    import subprocess

    ws, extra = folders
    checkpoints = Checkpoints(tmp_path / "cp", ws, added_dirs=[extra], max_checkpoints=2)
    infos = [checkpoints.take(f"message {i}") for i in range(3)]
    assert "message 0" in " ".join(infos[-1].notices)  # said as for the workspace
    shadows = list((tmp_path / "cp" / "added").glob("*/shadow.git"))
    assert len(shadows) == 1
    refs = subprocess.run(
        ["git", "--git-dir", str(shadows[0]), "for-each-ref", "--format=%(refname)"],
        capture_output=True, text=True, check=True).stdout.split()
    assert refs == ["refs/checkpoints/2", "refs/checkpoints/3"]


# -- the CLI's own session (cli/wiring), on the real SDK against the fake API -------------


@pytest.mark.parametrize("how", ["--add-dir", "/add-dir"])
async def test_the_clis_session_rewinds_an_added_folder(tmp_path, folders, fake_api,
                                                        monkeypatch, how):
    from agent_tui.cli.options import parse_options
    from agent_tui.cli.wiring import Wiring
    from tests.fake_api import Reply

    ws, extra = folders
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    args = ["--cwd", str(ws), "--permission-mode", "accept-edits", "--allowedTools", "Bash"]
    if how == "--add-dir":
        args += ["--add-dir", str(extra)]
    rec = Recorder()
    session = Wiring(parse_options(args), interactive=False).make_session(rec)
    if how == "/add-dir":
        session.added_dirs.append(extra)  # what /add-dir does (tests/test_add_dir.py)
    run = Running(session, rec, session.deps.journal)
    fake_api.enqueue(
        Reply.tool_use("write_file", {"path": str(extra / "notes.txt"), "content": "two\n"},
                       id="toolu_w"),
        Reply.tool_use("bash", {"command": f"rm '{extra}/keep.txt'"}, id="toolu_b"),
        Reply.text("done"))
    await turn(run, "change the notes")
    assert (extra / "notes.txt").read_text() == "two\n" and not (extra / "keep.txt").exists()
    done = await rewind(run, "t1")
    assert done.errors == [] and done.skipped_conflicts == [], done
    assert (extra / "notes.txt").read_text() == "one\n"
    assert (extra / "keep.txt").read_text() == "keep me\n"
    await run.close()
