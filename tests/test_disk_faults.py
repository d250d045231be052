"""Disk faults against a real small file system: the state folder (``AGENT_TUI_HOME``)
is a 4 MB tmpfs that the tests fill up, free, and make read-only while a session runs.

The session is the real wiring of the command line (journal, checkpoints, the real
``bash``, ``write_file`` and ``read_file``) on the scripted model; the workspace is
on the ordinary disk. Mounting needs root (or CAP_SYS_ADMIN): elsewhere these skip.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.core.journal.journal import Journal, JournalWriteError
from agent_tui.core.journal.journal_lines import encode_line
from agent_tui.core.journal.records import NoticeRecord, UserMessageRecord
from agent_tui.protocol import NoticeCode, NoticeLevel, Shutdown, UserMessage
from tests.harness import Recorder

SCRIPT = {"rules": [
    {"match": "^write", "replies": [[{"tool": "write_file",
                                      "input": {"path": "a.txt", "content": "new\n"}}],
                                    [{"text": "written"}]]},
    {"match": "^run", "replies": [[{"tool": "read_file", "input": {"path": "seed.txt"}},
                                   {"tool": "bash", "input": {"command": "echo ran >> ran.txt"}}],
                                  [{"text": "ran"}]]},
]}


class SmallDisk:
    """A tmpfs of its own, filled up, freed and made read-only on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.filler = root / "filler"
        self.read_only_now = False

    def fill(self) -> None:
        """Write until the file system is full, down to the last byte."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (1 << 16, 1 << 12, 1 << 8, 1):
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)

    def fill_last_page_of(self, journal: Journal) -> None:
        """Take up the room left in the journal's last page: on a full tmpfs a file still
        grows into the rest of its last page, which can hold several records (the first
        write that fails would then come at a point that depends on the paths' lengths).
        A notice record sized to leave less room than any record takes it."""
        assert journal.path is not None
        page = os.statvfs(self.root).f_bsize
        room = -os.stat(journal.path).st_size % page
        seq = journal.records[-1].seq + 1
        bare = len(encode_line(NoticeRecord(level=NoticeLevel.INFO, text="", seq=seq,
                                            ts=time.time())))
        if room > bare + 32:  # less room than that takes no record of a turn
            journal.append(NoticeRecord(level=NoticeLevel.INFO, text="x" * (room - bare - 16)),
                           durable=True)
        assert -os.stat(journal.path).st_size % page < bare + 32

    def free(self) -> None:
        self.filler.unlink()

    def read_only(self) -> None:
        """A read-only bind mount over the folder: new writes fail with EROFS (files
        already open for writing keep working, as on a real remount)."""
        for args in (["--bind", str(self.root), str(self.root)],
                     ["-o", "remount,bind,ro", str(self.root)]):
            subprocess.run(["mount", *args], check=True, capture_output=True)
        self.read_only_now = True

    def writable(self) -> None:
        subprocess.run(["umount", str(self.root)], check=True, capture_output=True)
        self.read_only_now = False


@pytest.fixture
def disk(tmp_path: Path):
    root = tmp_path / "state"
    root.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs",
                           str(root)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'mount failed'}); "
                    "the disk-fault tests need a small file system of their own")
    small = SmallDisk(root)
    try:
        yield small
    finally:
        if small.read_only_now:
            subprocess.run(["umount", str(root)], capture_output=True)
        subprocess.run(["umount", "-l", str(root)], capture_output=True)


@pytest.fixture
def wired(disk: SmallDisk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A session as ``agent-tui -p`` builds it, with its state on the small disk."""
    from agent_tui.cli.options import Options
    from agent_tui.cli.wiring import Wiring

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "seed.txt").write_text("seed\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    monkeypatch.setenv("AGENT_TUI_HOME", str(disk.root / "home"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AGENT_TUI_SCRIPTED_DELAY", "0")
    opts = Options(provider="scripted", model=None, cwd=workspace, permission_mode="auto",
                   theme=None, resume=None, continue_=False, script=script, prompt=None,
                   print_mode=True, output_format="stream-json", input_format="stream-json")
    rec = Recorder()
    session = Wiring(opts, interactive=False).make_session(rec)
    return session, rec, workspace


async def _turn(session: Any, rec: Recorder, text: str) -> Any:
    ended = len(rec.of("turn_ended"))
    session.submit(UserMessage(text=text))
    await rec.wait_for(lambda: len(rec.of("turn_ended")) > ended, timeout=30)
    await asyncio.wait_for(session.wait_idle(), 30)
    return rec.of("turn_ended")[-1]


def _codes(rec: Recorder) -> list[NoticeCode]:
    return [n.code for n in rec.of("notice")]


def _saved_records_match(session: Any) -> None:
    """Nothing was lost: the file holds every record of the session, in order."""
    records = session.records()
    path = Path(session.deps.journal.path)
    saved = Journal.load(path)
    assert saved.damaged == []
    assert [(r.seq, r.kind) for r in saved.records] == [(r.seq, r.kind) for r in records]


@pytest.mark.asyncio
async def test_a_full_disk_is_told_at_once_no_command_starts_unrecorded_and_freeing_space_goes_on(
        wired, disk: SmallDisk) -> None:
    session, rec, workspace = wired
    task = asyncio.create_task(session.run())
    try:
        assert (await _turn(session, rec, "write it")).status == "completed"
        disk.fill()
        disk.fill_last_page_of(session.deps.journal)
        first_event = len(rec.events)
        await _turn(session, rec, "run it")
        told = rec.events[first_event:]
        failed = [i for i, e in enumerate(told) if getattr(e, "code", None)
                  is NoticeCode.JOURNAL_WRITE_FAILED]
        assert failed, [e.type for e in told]
        # At once: the first write that fails is told as it fails (the last page of the
        # journal may still take a record or two), before the command is refused.
        refused = next(i for i, e in enumerate(told)
                       if e.type == "tool_state" and e.name == "bash" and e.state == "failed")
        assert failed[0] < refused
        assert "No space left" in told[failed[0]].text
        # No side-effecting call starts without its intent on disk; reading goes on.
        bash = rec.final_tool("bash")
        assert bash.state == "failed" and "intent could not be recorded" in bash.result
        assert not (workspace / "ran.txt").exists()
        assert rec.final_tool("read_file").state == "succeeded"
        assert any("checkpoint not taken" in n.text and "No space left" in n.text
                   for n in rec.of("notice"))
        assert NoticeCode.JOURNAL_WRITE_RECOVERED not in _codes(rec)

        disk.free()
        assert (await _turn(session, rec, "run it again")).status == "completed"
        assert (workspace / "ran.txt").read_text() == "ran\n"
        assert rec.final_tool("bash").state == "succeeded"
        assert NoticeCode.JOURNAL_WRITE_RECOVERED in _codes(rec)
        _saved_records_match(session)
    finally:
        session.submit(Shutdown())
        await asyncio.wait_for(task, 30)


@pytest.mark.asyncio
async def test_a_state_folder_made_read_only_mid_session_is_told_and_loses_nothing(
        wired, disk: SmallDisk) -> None:
    session, rec, workspace = wired
    task = asyncio.create_task(session.run())
    try:
        assert (await _turn(session, rec, "write it")).status == "completed"
        disk.read_only()
        await _turn(session, rec, "write it again")
        # The file tool could not save the old content to rewind to: it did not write.
        write = rec.final_tool("write_file")
        assert write.state == "failed" and "Read-only file system" in write.result
        assert any("Read-only file system" in n.text for n in rec.of("notice"))
        disk.writable()
        assert (await _turn(session, rec, "write it once more")).status == "completed"
        assert rec.final_tool("write_file").state == "succeeded"
        _saved_records_match(session)
    finally:
        session.submit(Shutdown())
        await asyncio.wait_for(task, 30)


def test_a_write_cut_short_by_a_full_disk_leaves_no_part_of_a_line(disk: SmallDisk) -> None:
    path = disk.root / "journal.jsonl"
    journal = Journal(path)
    told: list[Any] = []
    journal.on_recovered = told.append
    journal.append(UserMessageRecord(turn_id="t1", text="before"), durable=True)
    disk.fill()
    big = "x" * 20_000  # several pages: the first ones may still fit, the rest cannot
    with pytest.raises(JournalWriteError) as info:
        journal.append(UserMessageRecord(turn_id="t2", text=big), durable=True)
    assert "journal not saved (user_message)" in str(info.value)
    assert path.read_bytes().endswith(b"\n")
    assert [r.text for r in Journal.load(path).records] == ["before"]
    with pytest.raises(JournalWriteError):
        journal.append(UserMessageRecord(turn_id="t3", text="still full"))
    assert not told
    disk.free()
    journal.append(UserMessageRecord(turn_id="t4", text="after"))
    loaded = Journal.load(path)
    assert [r.text for r in loaded.records] == ["before", big, "still full", "after"]
    assert loaded.damaged == []
    assert [n.code for n in told] == [NoticeCode.JOURNAL_WRITE_RECOVERED]
    assert "3 record(s)" in told[0].text


@pytest.mark.asyncio
async def test_the_status_line_says_the_journal_is_not_saved_until_writes_succeed_again(
        disk: SmallDisk) -> None:
    """The notices a real full disk produces, shown by the real app."""
    os.environ["TEXTUAL_ANIMATIONS"] = "none"
    from agent_tui.protocol import Notice, TurnStarted
    from agent_tui.ui.app import AgentApp
    from tests.snapshot_tests.support import fake_factory, settle

    journal = Journal(disk.root / "journal.jsonl")
    told: list[Any] = []
    journal.on_recovered = told.append
    disk.fill()
    try:
        journal.append(UserMessageRecord(turn_id="t1", text="x" * 20_000), durable=True)
    except JournalWriteError as exc:
        failure = exc.notice()
    disk.free()
    journal.append(UserMessageRecord(turn_id="t2", text="after"))
    failing = [TurnStarted(turn_id="t1", text="go"), failure,
               Notice(level="info", text="something else")]
    make, _ = fake_factory(failing)
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=(110, 30)) as pilot:
        await settle(pilot, app, len(failing))
        assert "✗ journal not saved" in app.status.plain()
        app.inbox.emit(told[0])
        await pilot.pause()
        assert "journal not saved" not in app.status.plain()
