"""The transcript hooks read (``transcript_path``): the journal's conversation in
Claude Code's JSONL shape, beside the journal, append-only and private, written once
per record even across a resume, and never a reason a turn fails."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from agent_tui.core.journal.claude_transcript import ClaudeTranscript
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import (
    AssistantMessageRecord,
    CompactionRecord,
    ConversationClearedRecord,
    HookRecord,
    RewindRecord,
    ToolResultRecord,
    UserMessageRecord,
)
from agent_tui.protocol import HookEnding, HookEvent, ToolState, TurnStatus, UserMessage
from agent_tui.protocol.states import RestoreWhat
from tests.fake_api import Reply
from tests.hooks_support import command_hooks, hook_script, start


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def conversation(journal: Journal) -> None:
    journal.append(UserMessageRecord(turn_id="t1", text="list the files"))
    journal.append(AssistantMessageRecord(turn_id="t1", ended="tool_use", model="claude-x", blocks=[
        {"type": "thinking", "thinking": "let me see", "signature": "sig"},
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls",
                                                                        "timeout_ms": 1000}},
    ]))
    journal.append(HookRecord(event=HookEvent.PRE_TOOL_USE, command="x", source="f:1",
                              ending=HookEnding.EXITED))  # not part of the conversation
    journal.append(ToolResultRecord(turn_id="t1", tool_use_id="toolu_1", name="bash",
                                    state=ToolState.SUCCEEDED, content="a.txt\n"))
    journal.append(AssistantMessageRecord(turn_id="t1", ended="end_turn", model="claude-x",
                                          blocks=[{"type": "text", "text": "One file."}]))


def test_lines_are_claude_codes_messages_linked_in_order(tmp_path):
    journal = Journal(tmp_path / "s" / "journal.jsonl")
    conversation(journal)
    transcript = ClaudeTranscript.beside(journal, session_id="s-1", cwd="/work")
    assert transcript is not None and transcript.path == tmp_path / "s" / "transcript.jsonl"
    transcript.sync()
    got = lines(transcript.path)
    assert [(e["type"], e["message"]["role"]) for e in got] == [
        ("user", "user"), ("assistant", "assistant"), ("user", "user"), ("assistant", "assistant")]
    assert got[0]["message"]["content"] == "list the files"
    thinking, text, call = got[1]["message"]["content"]
    assert thinking["type"] == "thinking" and text == {"type": "text", "text": "Looking."}
    assert call == {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                    "input": {"command": "ls", "timeout": 1000}}
    assert got[1]["message"]["model"] == "claude-x" and got[1]["message"]["stop_reason"] == "tool_use"
    assert got[2]["message"]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_1",
                                             "content": "a.txt\n", "is_error": False}]
    assert got[3]["message"]["content"] == [{"type": "text", "text": "One file."}]
    assert [e["parentUuid"] for e in got] == [None] + [e["uuid"] for e in got[:-1]]
    assert all(e["sessionId"] == "s-1" and e["cwd"] == "/work" and e["isSidechain"] is False
               for e in got)
    assert stat.S_IMODE(os.stat(transcript.path).st_mode) == 0o600


def test_a_resumed_session_goes_on_where_the_file_ends(tmp_path):
    path = tmp_path / "s" / "journal.jsonl"
    journal = Journal(path)
    conversation(journal)
    ClaudeTranscript.beside(journal, session_id="s-1", cwd="/work").sync()
    before = (tmp_path / "s" / "transcript.jsonl").read_text()
    journal.close()
    again = Journal.load(path)  # the next process
    transcript = ClaudeTranscript.beside(again, session_id="s-1", cwd="/work")
    transcript.sync()
    assert transcript.path.read_text() == before  # nothing twice
    again.append(UserMessageRecord(turn_id="t2", text="and now?"))
    again.append(CompactionRecord(compaction_id="c1", summary="They listed files.",
                                  kept_from_seq=1, replaced_through_seq=5))
    transcript.sync()
    transcript.sync()
    got = lines(transcript.path)
    assert transcript.path.read_text().startswith(before)  # append-only
    assert len(got) == 6 and got[4]["message"]["content"] == "and now?"
    assert got[4]["parentUuid"] == got[3]["uuid"]
    assert got[5]["isCompactSummary"] is True and got[5]["message"]["content"] == "They listed files."


def chain(got: list[dict]) -> list[str]:
    """The conversation as a reader of Claude Code's transcript finds it: the parent links
    from the last line back to a root, in order."""
    by_id = {e["uuid"]: e for e in got}
    texts, at = [], got[-1]["uuid"]
    while at is not None:
        content = by_id[at]["message"]["content"]
        texts.append(content if isinstance(content, str) else content[0].get("text", "result"))
        at = by_id[at]["parentUuid"]
    return texts[::-1]


def answer(journal: Journal, turn: str, text: str) -> None:
    journal.append(AssistantMessageRecord(turn_id=turn, ended="end_turn", model="claude-x",
                                          blocks=[{"type": "text", "text": text}]))


def test_a_rewind_branches_from_before_its_message_and_clear_starts_a_new_root(tmp_path):
    path = tmp_path / "s" / "journal.jsonl"
    journal = Journal(path)
    journal.append(UserMessageRecord(turn_id="t1", text="one"))
    answer(journal, "t1", "first answer")
    journal.append(UserMessageRecord(turn_id="t2", text="two"))
    answer(journal, "t2", "second answer")
    transcript = ClaudeTranscript.beside(journal, session_id="s-1", cwd="/work")
    transcript.sync()
    journal.append(RewindRecord(checkpoint_id="t2", restore=RestoreWhat.CODE))  # files only
    journal.append(RewindRecord(checkpoint_id="t2", restore=RestoreWhat.BOTH))
    journal.append(UserMessageRecord(turn_id="t3", text="two, again"))
    answer(journal, "t3", "another second answer")
    transcript.sync()
    got = lines(transcript.path)
    assert len(got) == 6  # append-only: the rewound lines stay, on their branch
    assert chain(got) == ["one", "first answer", "two, again", "another second answer"]
    journal.append(ConversationClearedRecord())
    journal.append(UserMessageRecord(turn_id="t4", text="fresh start"))
    transcript.sync()
    got = lines(transcript.path)
    assert chain(got) == ["fresh start"] and got[-1]["parentUuid"] is None
    before = transcript.path.read_text()
    journal.close()

    again = Journal.load(path)  # the next process links on as the first did
    resumed = ClaudeTranscript.beside(again, session_id="s-1", cwd="/work")
    again.append(RewindRecord(checkpoint_id="t3", restore=RestoreWhat.CONVERSATION))
    answer(again, "t5", "after the resume")
    resumed.sync()
    got = lines(resumed.path)
    assert resumed.path.read_text().startswith(before) and len(got) == 8
    assert chain(got) == ["one", "first answer", "after the resume"]


def test_a_line_cut_short_is_left_alone_and_written_again(tmp_path):
    journal = Journal(tmp_path / "s" / "journal.jsonl")
    conversation(journal)
    transcript = ClaudeTranscript.beside(journal, session_id="s-1", cwd="/work")
    transcript.sync()
    whole = transcript.path.read_text().splitlines(keepends=True)
    transcript.path.write_text("".join(whole[:-1]) + whole[-1][:20])  # the last one torn
    fresh = ClaudeTranscript.beside(journal, session_id="s-1", cwd="/work")
    fresh.sync()
    text = fresh.path.read_text().splitlines()
    assert text[:-2] == [line.rstrip("\n") for line in whole[:-1]]
    assert text[-2] == whole[-1][:20]  # on a line of its own
    assert json.loads(text[-1])["uuid"] == json.loads(whole[-1])["uuid"]


def test_a_failed_write_is_said_once_and_tried_again(tmp_path):
    journal = Journal(tmp_path / "s" / "journal.jsonl")
    conversation(journal)
    told: list = []
    transcript = ClaudeTranscript.beside(journal, session_id="s-1", cwd="/work", emit=told.append)
    transcript.path.parent.mkdir(parents=True, exist_ok=True)
    transcript.path.mkdir()  # the file cannot be opened
    transcript.sync()
    transcript.sync()
    assert len(told) == 1 and "could not be written" in told[0].text
    transcript.path.rmdir()
    transcript.sync()
    assert len(lines(transcript.path)) == 4


@pytest.mark.asyncio
async def test_a_transcript_that_cannot_be_written_never_fails_the_turn(fake_api, tmp_path):
    hook = hook_script(tmp_path / "hooks", "stop", """
        given = json.load(sys.stdin)
        print(given["transcript_path"], file=sys.stderr)
    """)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"Stop": [
        {"hooks": [{"type": "command", "command": hook}]}]})
    (tmp_path / "state" / "transcript.jsonl").mkdir(parents=True)
    run, _ = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.text("done"))
    run.submit(UserMessage(text="hi"))
    await run.idle()
    assert run.session.last_status is TurnStatus.COMPLETED
    assert sum("could not be written" in n.text for n in run.rec.of("notice")) == 1
    await run.close()


def test_a_transcript_that_fell_behind_a_compaction_still_writes_the_outputs_in_full(tmp_path):
    """A compaction lets go, in memory, of the outputs it replaced; a transcript written
    for the first time after that (no hook had run before) reads them back from the file."""
    journal = Journal(tmp_path / "s" / "journal.jsonl")
    big = "line of output\n" * 1000  # over the journal's let-go size
    journal.append(UserMessageRecord(turn_id="t1", text="build it"))
    journal.append(AssistantMessageRecord(turn_id="t1", ended="tool_use", model="claude-x", blocks=[
        {"type": "tool_use", "id": "toolu_big", "name": "bash", "input": {"command": "make"}}]))
    journal.append(ToolResultRecord(turn_id="t1", tool_use_id="toolu_big", name="bash",
                                    state=ToolState.SUCCEEDED, content=big))
    summary = journal.append(CompactionRecord(compaction_id="c1", summary="we built it",
                                              kept_from_seq=4, replaced_through_seq=3))
    assert journal.let_go_output(summary.seq) == 1
    transcript = ClaudeTranscript.beside(journal, session_id="s-1", cwd="/work")
    assert transcript is not None
    transcript.sync()
    [result] = [e for e in lines(transcript.path)
                if isinstance(e["message"]["content"], list)
                and e["message"]["content"][0].get("type") == "tool_result"]
    assert result["message"]["content"][0]["content"] == big
    assert result["toolUseResult"] == big
    assert journal.records[2].content == ""  # memory stays let go of
