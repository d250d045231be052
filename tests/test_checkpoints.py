"""Checkpoints and rewind, with real files and real git.

The agent's file-tool edits go through the real ``Workspace.write_atomic`` with the
checkpoint hook; shell edits are real ``sed -i`` / ``bash -c`` runs. The user's own
repository is checked byte for byte before and after.
"""

from __future__ import annotations

import os
import tempfile
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.checkpoints import (
    ChangeKind,
    Checkpoints,
    SnapshotScope,
    UnknownCheckpoint,
)
from agent_tui.checkpoints import disk
from agent_tui.files.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state" / "checkpoints"


def make(state: Path, ws: Path, **kw) -> Checkpoints:
    return Checkpoints(state, ws, **kw)


def agent_write(cp: Checkpoints, ws: Path, rel: str, data: bytes | str) -> None:
    """What write_file does: the pre-image hook, the atomic write, then the record."""
    if isinstance(data, str):
        data = data.encode()
    report = Workspace(ws).write_atomic(rel, data, before_write=cp.record_pre_image)
    cp.record_written(report.path, data)


def sh(ws: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=ws, check=True)


def agent_sh(cp: Checkpoints, ws: Path, command: str) -> None:
    """What the bash tool does when wired with command_started/command_finished."""
    token = cp.command_started()
    sh(ws, command)
    cp.command_finished(token)


def files(ws: Path) -> dict[str, bytes]:
    """Every file under ``ws`` (links as 'link:target'), bar the user's .git."""
    out: dict[str, bytes] = {}
    for folder, dirs, names in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = Path(folder) / name
            rel = path.relative_to(ws).as_posix()
            out[rel] = b"link:" + os.fsencode(os.readlink(path)) if path.is_symlink() else path.read_bytes()
    return out


def dirs(ws: Path) -> set[str]:
    return {
        Path(f).relative_to(ws).as_posix()
        for f, _d, _n in os.walk(ws)
        if ".git" not in Path(f).relative_to(ws).parts
    } - {"."}


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_OPTIONAL_LOCKS="0",  # or `git status` itself refreshes the index we compare
        GIT_AUTHOR_NAME="u", GIT_AUTHOR_EMAIL="u@x", GIT_COMMITTER_NAME="u",
        GIT_COMMITTER_EMAIL="u@x", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
    )
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


# -- the file tools' edits ---------------------------------------------------------------


def test_restore_undoes_file_tool_edits_made_through_the_hook(ws: Path, state: Path) -> None:
    (ws / "keep.txt").write_text("keep\n")
    (ws / "edit.py").write_text("a = 1\nb = 2\n")
    (ws / "blob.bin").write_bytes(bytes(range(256)) * 4)
    before = files(ws)
    cp = make(state, ws)
    c1 = cp.take("first message")
    assert c1.scope is SnapshotScope.WORKSPACE and c1.warnings == []

    agent_write(cp, ws, "edit.py", "a = 1\nb = 3\nc = 4\n")
    agent_write(cp, ws, "edit.py", "a = 10\n")  # a second write: the first pre-image wins
    agent_write(cp, ws, "src/new/module.py", "print('hi')\n")
    agent_write(cp, ws, "blob.bin", b"\x00\xff" * 10)

    plan = cp.plan(c1.id)
    kinds = {c.path: c.kind for c in plan.changes}
    assert kinds == {
        "edit.py": ChangeKind.MODIFIED,
        "src/new/module.py": ChangeKind.DELETED,
        "blob.bin": ChangeKind.MODIFIED,
    }
    by_path = {c.path: c for c in plan.changes}
    assert (by_path["edit.py"].lines_added, by_path["edit.py"].lines_removed) == (2, 1)
    assert by_path["blob.bin"].binary and by_path["blob.bin"].lines_added is None
    assert not plan.conflicts

    report = cp.restore(c1.id)
    assert report.errors == [] and report.skipped_conflicts == []
    assert files(ws) == before
    assert "src" not in dirs(ws)  # folders the rewind emptied are gone too


def test_plan_changes_nothing(ws: Path, state: Path) -> None:
    (ws / "a.txt").write_text("1\n2\n3\n")
    cp = make(state, ws)
    c1 = cp.take("m1")
    sh(ws, "sed -i 's/2/two/' a.txt && echo new > b.txt && rm a.txt && echo x > a.txt")
    after = files(ws)
    plan = cp.plan(c1.id)
    assert {(c.path, c.kind) for c in plan.changes} == {
        ("a.txt", ChangeKind.MODIFIED),
        ("b.txt", ChangeKind.DELETED),
    }
    assert files(ws) == after
    assert len(cp.list()) == 1  # a plan is not a checkpoint


# -- shell edits -----------------------------------------------------------------------------


def test_restore_undoes_shell_edits(ws: Path, state: Path) -> None:
    (ws / "config.ini").write_text("mode = slow\nlevel = 1\n")
    (ws / "doomed").mkdir()
    (ws / "doomed" / "one.txt").write_text("one\n")
    (ws / "doomed" / "deep").mkdir()
    (ws / "doomed" / "deep" / "two.txt").write_text("two\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    os.symlink("config.ini", ws / "link")
    before = files(ws)
    modes = {p: stat.S_IMODE((ws / p).stat().st_mode) for p in ("run.sh", "config.ini")}
    cp = make(state, ws)
    c1 = cp.take("fix it")

    subprocess.run(["sed", "-i", "s/slow/fast/", "config.ini"], cwd=ws, check=True)
    sh(ws, "rm -rf doomed && mkdir -p build/out && printf 'x\\0y' > build/out/a.o")
    sh(ws, "chmod -x run.sh && printf 'junk' >> pic.png && rm link && ln -s run.sh link")
    (ws / "notes.md").write_text("made by python\n")

    report = cp.restore(c1.id)
    assert report.errors == []
    assert files(ws) == before
    assert {p: stat.S_IMODE((ws / p).stat().st_mode) for p in modes} == modes
    assert "build" not in dirs(ws)
    assert (ws / "doomed" / "deep" / "two.txt").read_text() == "two\n"


def test_mixture_across_several_checkpoints(ws: Path, state: Path) -> None:
    (ws / "main.py").write_text("print(1)\n")
    cp = make(state, ws)
    states = {}
    c1 = cp.take("message 1")
    states[c1.id] = files(ws)

    agent_write(cp, ws, "main.py", "print(2)\n")
    agent_sh(cp, ws, "echo data > data.csv")
    c2 = cp.take("message 2")
    states[c2.id] = files(ws)

    agent_sh(cp, ws, "sed -i 's/2/3/' main.py && rm data.csv")
    agent_write(cp, ws, "lib.py", "def f(): pass\n")
    c3 = cp.take("message 3")
    states[c3.id] = files(ws)

    agent_write(cp, ws, "lib.py", "def f(): return 1\n")
    agent_sh(cp, ws, "echo more >> main.py && mkdir tests && touch tests/test_x.py")
    final = files(ws)

    for target in (c2, c3, c1, c2):
        report = cp.restore(target.id)
        assert report.errors == [] and report.skipped_conflicts == [], report
        assert files(ws) == states[target.id], target.label
    # every rewind was itself checkpointed: the state before the first one is still there
    first_undo = [c for c in cp.list() if c.label.startswith("before rewind")][0]
    cp.restore(first_undo.id)
    assert files(ws) == final


def test_rewind_of_a_rewind_gets_the_pre_rewind_state_back(ws: Path, state: Path) -> None:
    (ws / "a.txt").write_text("v1\n")
    (ws / ".gitignore").write_text("*.log\n")
    cp = make(state, ws)
    c1 = cp.take("m1")
    agent_write(cp, ws, "a.txt", "v2\n")
    agent_write(cp, ws, "debug.log", "ignored, but written by the agent\n")
    sh(ws, "echo shell > b.txt")
    pre_rewind = files(ws)

    report = cp.restore(c1.id)
    assert files(ws) == {"a.txt": b"v1\n", ".gitignore": b"*.log\n"}
    undo = cp.get(report.undo_checkpoint_id)
    assert undo.label == "before rewind to “m1”"

    again = cp.restore(report.undo_checkpoint_id)
    assert again.errors == [] and again.skipped_conflicts == []
    assert files(ws) == pre_rewind


# -- conflicts -----------------------------------------------------------------------------


def test_file_changed_outside_the_agent_is_a_conflict_not_overwritten(ws: Path, state: Path) -> None:
    (ws / "app.py").write_text("v = 'original'\n")
    (ws / "other.py").write_text("x = 0\n")
    cp = make(state, ws)
    c1 = cp.take("m1")
    agent_write(cp, ws, "app.py", "v = 'agent'\n")
    agent_write(cp, ws, "other.py", "x = 1\n")
    (ws / "app.py").write_text("v = 'the user edited this'\n")  # in their editor

    plan = cp.plan(c1.id)
    assert [c.path for c in plan.conflicts] == ["app.py"]
    assert not {c.path: c for c in plan.changes}["other.py"].conflict

    report = cp.restore(c1.id)
    assert [c.path for c in report.skipped_conflicts] == ["app.py"]
    assert [c.path for c in report.restored] == ["other.py"]
    assert (ws / "app.py").read_text() == "v = 'the user edited this'\n"
    assert (ws / "other.py").read_text() == "x = 0\n"

    report = cp.restore(c1.id, overwrite_conflicts=True)
    assert [c.path for c in report.restored] == ["app.py"]
    assert (ws / "app.py").read_text() == "v = 'original'\n"


def test_a_file_the_user_deletes_after_the_agent_wrote_it_is_a_conflict(ws: Path, state: Path) -> None:
    cp = make(state, ws)
    c1 = cp.take("m1")
    agent_write(cp, ws, "new.txt", "agent\n")
    (ws / "new.txt").unlink()
    (ws / "new.txt").write_text("the user's own file now\n")
    report = cp.restore(c1.id)
    assert [c.path for c in report.skipped_conflicts] == ["new.txt"]
    assert (ws / "new.txt").exists()


def test_agent_command_after_its_own_write_conflicts_only_without_the_command_hooks(
    ws: Path, state: Path
) -> None:
    (ws / "m.py").write_text("x = 0\n")
    cp = make(state, ws)
    c1 = cp.take("m1")
    agent_write(cp, ws, "m.py", "x = 1\n")
    sh(ws, "sed -i 's/1/2/' m.py")  # unannounced: could be anyone, so it is shown
    assert [c.path for c in cp.plan(c1.id).conflicts] == ["m.py"]
    agent_sh(cp, ws, "sed -i 's/2/3/' m.py")  # announced: the agent's own change
    assert cp.plan(c1.id).conflicts == []
    (ws / "m.py").write_text("x = 'user'\n")
    assert [c.path for c in cp.plan(c1.id).conflicts] == ["m.py"]


def test_file_a_command_made_then_the_user_changed_is_a_conflict(ws: Path, state: Path) -> None:
    cp = make(state, ws)
    c1 = cp.take("m1")
    agent_sh(cp, ws, "echo generated > gen.txt")
    (ws / "gen.txt").write_text("the user's version\n")
    report = cp.restore(c1.id)
    assert [c.path for c in report.skipped_conflicts] == ["gen.txt"]


def test_restored_file_changed_afterwards_is_a_conflict_for_the_next_rewind(ws: Path, state: Path) -> None:
    (ws / "a.txt").write_text("old\n")
    cp = make(state, ws)
    c1 = cp.take("m1")
    sh(ws, "echo shell > a.txt")
    report = cp.restore(c1.id)
    (ws / "a.txt").write_text("user typed this after the rewind\n")
    plan = cp.plan(report.undo_checkpoint_id)
    assert [c.path for c in plan.conflicts] == ["a.txt"]


# -- the user's own repository ------------------------------------------------------------


def user_git_state(repo: Path) -> dict[str, object]:
    return {
        "index": (repo / ".git" / "index").read_bytes(),
        "head": git(repo, "rev-parse", "HEAD"),
        "status": git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        "stash": git(repo, "stash", "list"),
        "refs": git(repo, "for-each-ref"),
        "config": (repo / ".git" / "config").read_bytes(),
        "git_files": sorted(
            str(p.relative_to(repo / ".git")) for p in (repo / ".git").rglob("*")
        ),
    }


def test_users_git_state_is_unchanged_by_checkpoints_and_rewinds(
    ws: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(ws, "init", "-q")
    (ws / ".gitignore").write_text("*.tmp\n")
    (ws / "tracked.txt").write_text("committed\n")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "first")
    (ws / "tracked.txt").write_text("stashed change\n")
    git(ws, "stash", "-q")
    (ws / "staged.txt").write_text("staged\n")
    git(ws, "add", "staged.txt")
    (ws / "tracked.txt").write_text("unstaged change\n")
    (ws / "untracked.txt").write_text("untracked\n")
    (ws / "cache.tmp").write_text("ignored\n")
    # a git dir inherited from the environment must not lead the shadow to the user's repo
    monkeypatch.setenv("GIT_DIR", str(ws / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(ws / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(ws))

    before = user_git_state(ws)
    before_files = files(ws)
    cp = make(state, ws)
    c1 = cp.take("m1")
    assert user_git_state(ws) == before

    agent_write(cp, ws, "tracked.txt", "agent\n")
    sh(ws, "echo new > fresh.txt && rm untracked.txt && echo more >> staged.txt")
    report = cp.restore(c1.id)
    assert report.errors == []
    assert files(ws) == before_files
    assert user_git_state(ws) == before

    cp.restore(report.undo_checkpoint_id)
    cp.restore(c1.id)
    assert user_git_state(ws) == before
    # the user's .git never enters a snapshot
    shadow = Path(state) / "shadow.git"
    assert shadow.is_dir()
    assert not (ws / ".git" / "refs" / "checkpoints").exists()


def test_the_shadow_repository_keeps_its_own_settings(ws: Path, state: Path) -> None:
    """The shadow's config holds what every command also passes with -c (hooks off, bytes as
    they are, no gc...), so a git run on it by hand acts the same; git reads it back."""
    from agent_tui.checkpoints.shadow import _CONFIG

    make(state, ws).take("m1")
    shadow = Path(state) / "shadow.git"
    assert stat.S_IMODE((shadow / "config").stat().st_mode) == 0o600
    for item in _CONFIG:
        key, value = item.split("=", 1)
        got = git(ws, "config", "--file", str(shadow / "config"), "--get", key).strip()
        assert got == value, key
    assert git(ws, "--git-dir", str(shadow), "rev-parse", "--is-bare-repository").strip() == "true"


def test_the_user_s_global_excludes_file_is_honoured_and_asked_at_the_first_snapshot(
        ws: Path, state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_tui.checkpoints import manager

    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/.gitignore_global\n")
    (home / ".gitignore_global").write_text("secret.env\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    asked: list[str] = []
    real = manager.user_excludes_file
    monkeypatch.setattr(manager, "user_excludes_file", lambda git: asked.append(git) or real(git))
    cp = make(state, ws)
    assert asked == []  # not while the session is made
    c1 = cp.take("m1")
    sh(ws, "echo TOKEN=1 > secret.env")
    cp.take("m2")
    assert len(asked) == 1  # once
    assert cp.plan(c1.id).changes == []  # ignored: never snapshotted, so never deleted
    cp.restore(c1.id)
    assert (ws / "secret.env").exists()


def test_user_repo_exclude_file_is_honoured(ws: Path, state: Path) -> None:
    git(ws, "init", "-q")
    (ws / ".git" / "info" / "exclude").write_text("secret.env\n")
    cp = make(state, ws)
    c1 = cp.take("m1")
    sh(ws, "echo TOKEN=1 > secret.env")
    plan = cp.plan(c1.id)
    assert plan.changes == []  # ignored: never snapshotted, so never deleted
    cp.restore(c1.id)
    assert (ws / "secret.env").exists()


# -- what is never snapshotted ----------------------------------------------------------------


def test_ignored_and_over_the_cap_files_are_never_deleted_by_a_rewind(ws: Path, state: Path) -> None:
    (ws / ".gitignore").write_text("node_modules/\n*.log\n")
    (ws / "big.dat").write_bytes(b"b" * 5000)
    cp = make(state, ws, max_file_bytes=1000)
    c1 = cp.take("m1")
    assert any("big.dat" in w for w in c1.warnings)
    sh(ws, "mkdir -p node_modules/pkg && echo x > node_modules/pkg/i.js && echo l > run.log")
    sh(ws, "head -c 3000 /dev/zero > huge.bin && echo small > small.txt")
    sh(ws, "head -c 6000 /dev/zero > big.dat")  # over the cap: the shell's change stays
    report = cp.restore(c1.id)
    assert [c.path for c in report.restored] == ["small.txt"]
    for kept in ("node_modules/pkg/i.js", "run.log", "huge.bin"):
        assert (ws / kept).exists(), kept
    assert (ws / "big.dat").stat().st_size == 6000
    assert any("big.dat" in n for n in report.not_undoable)
    assert any("huge.bin" in n for n in report.not_undoable)


def test_file_tool_edits_to_ignored_and_large_files_are_still_undone(ws: Path, state: Path) -> None:
    (ws / ".gitignore").write_text(".env\n")
    (ws / ".env").write_text("KEY=old\n")
    (ws / "big.dat").write_bytes(b"b" * 5000)
    cp = make(state, ws, max_file_bytes=1000)
    c1 = cp.take("m1")
    agent_write(cp, ws, ".env", "KEY=new\n")
    agent_write(cp, ws, "big.dat", b"c" * 7000)
    agent_write(cp, ws, "made.env", "x\n")
    plan = cp.plan(c1.id)
    assert {(c.path, c.source) for c in plan.changes} == {
        (".env", "pre_image"), ("big.dat", "pre_image"), ("made.env", "snapshot"),
    }
    cp.restore(c1.id)
    assert (ws / ".env").read_text() == "KEY=old\n"
    assert (ws / "big.dat").read_bytes() == b"b" * 5000
    assert not (ws / "made.env").exists()


def test_file_over_the_cap_now_but_not_then_is_restored(ws: Path, state: Path) -> None:
    (ws / "grows.txt").write_text("small\n")
    cp = make(state, ws, max_file_bytes=100)
    c1 = cp.take("m1")
    sh(ws, "seq 1 200 > grows.txt")
    plan = cp.plan(c1.id)
    assert [(c.path, c.kind) for c in plan.changes] == [("grows.txt", ChangeKind.MODIFIED)]
    cp.restore(c1.id)
    assert (ws / "grows.txt").read_text() == "small\n"


def test_large_workspace_warns_at_take_and_falls_back_to_pre_images(ws: Path, state: Path) -> None:
    for i in range(30):
        (ws / f"f{i}.txt").write_text(f"{i}\n")
    cp = make(state, ws, max_files=20)
    c1 = cp.take("m1")
    assert c1.scope is SnapshotScope.FILE_TOOLS_ONLY
    assert any(
        "workspace too large to snapshot: 30 files over the cap of 20" in w
        and "only file-tool edits are covered from here" in w
        for w in c1.warnings
    ), c1.warnings
    agent_write(cp, ws, "f1.txt", "agent\n")
    agent_write(cp, ws, "added.txt", "agent\n")
    sh(ws, "echo shell > f2.txt")
    plan = cp.plan(c1.id)
    assert {c.path for c in plan.changes} == {"f1.txt", "added.txt"}
    assert any("shell commands" in n for n in plan.not_undoable)
    cp.restore(c1.id)
    assert (ws / "f1.txt").read_text() == "1\n"
    assert not (ws / "added.txt").exists()
    assert (ws / "f2.txt").read_text() == "shell\n"  # said so: not undoable


def test_without_git_only_file_tool_edits_are_covered_and_the_user_is_told(
    ws: Path, state: Path
) -> None:
    (ws / "a.txt").write_text("a\n")
    cp = make(state, ws, git="no-such-git-binary")
    c1 = cp.take("m1")
    assert c1.scope is SnapshotScope.FILE_TOOLS_ONLY
    assert any("git is not installed" in w for w in c1.warnings)
    agent_write(cp, ws, "a.txt", "b\n")
    cp.restore(c1.id)
    assert (ws / "a.txt").read_text() == "a\n"


def test_bytes_are_restored_exactly_whatever_gitattributes_says(ws: Path, state: Path) -> None:
    (ws / ".gitattributes").write_text("* text=auto eol=lf\n*.txt ident\n")
    crlf = b"line one\r\nline two\r\n$Id$\r\n"
    (ws / "dos.txt").write_bytes(crlf)
    cp = make(state, ws)
    c1 = cp.take("m1")
    sh(ws, "printf 'unix\\n' > dos.txt")
    cp.restore(c1.id)
    assert (ws / "dos.txt").read_bytes() == crlf


def test_state_dir_inside_the_workspace_is_not_snapshotted(ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    cp = make(ws / ".agent-tui" / "cp", ws)
    c1 = cp.take("m1")
    c2 = cp.take("m2")
    agent_write(cp, ws, "a.txt", "b\n")
    plan = cp.plan(c1.id)
    assert [c.path for c in plan.changes] == ["a.txt"], plan
    cp.restore(c2.id)
    assert (ws / "a.txt").read_text() == "a\n"
    assert (ws / ".agent-tui" / "cp" / "checkpoints.json").exists()


def test_nested_repository_is_reported_not_snapshotted(ws: Path, state: Path) -> None:
    sub = ws / "vendor" / "lib"
    sub.mkdir(parents=True)
    git(sub, "init", "-q")
    (sub / "x.c").write_text("int x;\n")
    cp = make(state, ws)
    c1 = cp.take("m1")
    assert any("vendor/lib/" in w for w in c1.warnings)
    sh(ws, "echo changed > vendor/lib/x.c")
    cp.restore(c1.id)
    assert (sub / "x.c").read_text() == "changed\n"
    assert (sub / ".git").is_dir()


def test_a_folder_replaced_by_a_symlink_is_restored_without_touching_its_target(
    ws: Path, state: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "d").mkdir()
    (ws / "d" / "f.txt").write_text("inside\n")
    cp = make(state, ws)
    c1 = cp.take("m1")
    sh(ws, f"rm -rf d && ln -s {outside} d")
    report = cp.restore(c1.id)
    assert report.errors == []
    assert not (ws / "d").is_symlink() and (ws / "d" / "f.txt").read_text() == "inside\n"
    assert list(outside.iterdir()) == []


def test_restore_never_writes_through_a_folder_link_leading_outside(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, ws / "d")
    with pytest.raises(disk.OutsideWorkspaceError):
        disk.write_file(Path(os.path.realpath(ws)), "d/new/f.txt", b"x")
    with pytest.raises(disk.OutsideWorkspaceError):
        disk.delete_file(Path(os.path.realpath(ws)), "d/f.txt")
    assert list(outside.iterdir()) == []


def test_write_outside_the_workspace_is_listed_as_not_undoable(ws: Path, state: Path, tmp_path: Path) -> None:
    cp = make(state, ws)
    c1 = cp.take("m1")
    cp.record_pre_image(tmp_path / "elsewhere.txt", None)
    plan = cp.plan(c1.id, extra_not_undoable=["POST https://api.example.com (remote)"])
    assert any("elsewhere.txt" in n for n in plan.not_undoable)
    assert "POST https://api.example.com (remote)" in plan.not_undoable


# -- retention, persistence, privacy ---------------------------------------------------------


def test_retention_prunes_the_oldest_with_a_notice(ws: Path, state: Path) -> None:
    cp = make(state, ws, max_checkpoints=3)
    infos = []
    for i in range(5):
        agent_write(cp, ws, "f.txt", f"v{i}\n" * 50)
        infos.append(cp.take(f"message {i}"))
    assert infos[2].notices == []
    assert "Removed the oldest checkpoint (“message 0”)" in infos[3].notices[0]
    assert [c.label for c in cp.list()] == ["message 2", "message 3", "message 4"]
    with pytest.raises(UnknownCheckpoint):
        cp.plan(infos[0].id)
    # the pruned checkpoints' pre-images are gone from the blob store
    blobs = [p for p in (state / "blobs").rglob("*") if p.is_file()]
    assert len(blobs) <= 2

    # a rewind's own checkpoint never pushes out the checkpoint it rewinds to
    report = cp.restore(infos[2].id)
    assert [c.label for c in cp.list()] == [
        "message 2", "message 4", "before rewind to “message 2”",
    ]
    assert "Removed the oldest checkpoint (“message 3”)" in report.notices[0]


def test_size_budget_prunes_the_oldest_with_a_notice(ws: Path, state: Path) -> None:
    cp = make(state, ws, budget_bytes=10**9)
    for i in range(4):
        (ws / "f.bin").write_bytes(os.urandom(40_000))  # each version only in its checkpoint
        cp.take(f"m{i}")
    used = cp.usage_bytes()
    assert used > 160_000
    cp.budget_bytes = used - 30_000
    info = cp.take("m4")
    assert any("within" in n and "“m0”" in n for n in info.notices), info.notices
    assert cp.usage_bytes() <= cp.budget_bytes
    assert cp.list()[-1].id == info.id


def test_checkpoints_survive_a_new_instance(ws: Path, state: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    cp = make(state, ws)
    c1 = cp.take("m1", checkpoint_id="msg-1")
    agent_write(cp, ws, "a.txt", "b\n")
    sh(ws, "echo s > s.txt")
    again = make(state, ws)
    assert [c.id for c in again.list()] == ["msg-1"]
    with pytest.raises(ValueError):
        again.take("dup", checkpoint_id="msg-1")
    again.restore(c1.id)
    assert files(ws) == {"a.txt": b"a\n"}


def test_damaged_records_are_kept_aside_and_the_next_checkpoint_says_so(
    ws: Path, state: Path
) -> None:
    make(state, ws).take("m1")
    (state / "checkpoints.json").write_text('{"records": [{"id": ')

    cp = make(state, ws)
    info = cp.take("m2")

    assert cp.list()[0].label == "m2" and len(cp.list()) == 1
    assert any("checkpoint records were damaged" in w for w in info.warnings)
    (aside,) = state.glob("checkpoints.json.damaged-*")
    assert aside.read_text() == '{"records": [{"id": '


def test_state_files_are_private(ws: Path, state: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    cp = make(state, ws)
    cp.take("m1")
    agent_write(cp, ws, "a.txt", "b\n")
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "checkpoints.json").stat().st_mode) == 0o600
    for p in (state / "blobs").rglob("*"):
        assert stat.S_IMODE(p.stat().st_mode) == (0o700 if p.is_dir() else 0o600), p
    assert cp.usage_bytes() > 0


def test_hook_before_any_checkpoint_is_harmless(ws: Path, state: Path) -> None:
    cp = make(state, ws)
    agent_write(cp, ws, "a.txt", "a\n")
    c1 = cp.take("m1")
    assert cp.plan(c1.id).changes == []


# -- any mix of edits, any checkpoint --------------------------------------------------------

_NAMES = ["a.txt", "b.bin", "d/c.txt", "d/e/f.txt", ".gitignore", "x.log"]
_op = st.tuples(
    st.sampled_from(["agent", "shell", "delete", "take"]),
    st.sampled_from(_NAMES),
    st.binary(max_size=40) | st.sampled_from([b"*.log\n", b"line\r\nline\n"]),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_op, min_size=1, max_size=10), pick=st.integers(min_value=0))
def test_restore_to_any_checkpoint_gives_back_its_files(ops, pick) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "a.txt").write_text("start\n")
        cp = make(Path(tmp) / "state", ws)
        seen = {cp.take("start").id: files(ws)}
        for kind, name, data in ops:
            path = ws / name
            if kind == "take":
                seen[cp.take("m").id] = files(ws)
            elif kind == "agent":
                agent_write(cp, ws, name, data)
            elif kind == "shell":
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            elif path.exists():
                path.unlink()
        ids = list(seen)
        target = ids[pick % len(ids)]
        report = cp.restore(target, overwrite_conflicts=True)
        assert report.errors == []
        # ignored files (x.log under a '*.log' rule) written by the shell are not covered
        expected = dict(seen[target])
        got = files(ws)
        for loose in ("x.log",):
            expected.pop(loose, None)
            got.pop(loose, None)
        assert got == expected
