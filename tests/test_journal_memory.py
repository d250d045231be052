"""What a long session's journal keeps in memory: the output of the tool results a
compaction replaced is let go (the file keeps it), read back for a whole-session
export, and restored when a rewind may bring it back into the model view."""

from __future__ import annotations

import json
import sys

from agent_tui.core.history.history import build_view, model_records
from agent_tui.core.journal.journal import LET_GO_AT, Journal
from agent_tui.core.journal.records import (
    AssistantMessageRecord,
    CompactionRecord,
    ConversationClearedRecord,
    RewindRecord,
    ToolResultRecord,
    TurnEndedRecord,
    UserMessageRecord,
)
from agent_tui.protocol import RestoreWhat, ToolState, TurnStatus

BIG = "x" * (LET_GO_AT + 1)


def _turn(journal: Journal, n: int, output: str) -> None:
    turn = f"t{n}"
    journal.append(UserMessageRecord(turn_id=turn, text=f"turn {n}"))
    journal.append(AssistantMessageRecord(turn_id=turn, ended="tool_use", blocks=[
        {"type": "tool_use", "id": f"toolu_{n}", "name": "bash", "input": {"command": "ls"}}]))
    journal.append(ToolResultRecord(turn_id=turn, tool_use_id=f"toolu_{n}", name="bash",
                                    state=ToolState.SUCCEEDED, content=f"{n}:{output}",
                                    details={"run_id": f"run{n}"}))
    journal.append(AssistantMessageRecord(turn_id=turn, ended="end_turn",
                                          blocks=[{"type": "text", "text": f"done {n}"}]))
    journal.append(TurnEndedRecord(turn_id=turn, status=TurnStatus.COMPLETED))


def _compacted_journal(tmp_path) -> tuple[Journal, int]:
    """Four turns, a compaction keeping the fourth; the seq of its user message."""
    journal = Journal(tmp_path / "journal.jsonl")
    for n in range(1, 4):
        _turn(journal, n, BIG)
    _turn(journal, 4, "short")
    kept = next(r.seq for r in journal.records if getattr(r, "turn_id", "") == "t4")
    journal.append(CompactionRecord(compaction_id="c1", summary="turns 1-3: ls, thrice",
                                    kept_from_seq=kept, replaced_through_seq=kept - 1),
                   durable=True)
    return journal, kept


def _results(records) -> dict[str, tuple[str, dict]]:
    return {r.tool_use_id: (r.content, r.details) for r in records
            if isinstance(r, ToolResultRecord)}


def test_the_output_a_compaction_replaced_is_let_go_and_the_model_view_is_the_same(tmp_path):
    journal, kept = _compacted_journal(tmp_path)
    view_before = build_view(journal.records).messages
    assert journal.let_go_output(kept) == 3
    in_memory = _results(journal.records)
    assert [in_memory[f"toolu_{n}"] for n in (1, 2, 3)] == [("", {})] * 3
    assert in_memory["toolu_4"] == ("4:short", {"run_id": "run4"})
    # The model view never needed them: it is exactly what it was.
    assert build_view(journal.records).messages == view_before
    assert json.dumps(view_before).count(BIG) == 0
    # The whole session, as an export reads it, still has every output.
    full = _results(journal.records_in_full())
    assert full["toolu_2"] == (f"2:{BIG}", {"run_id": "run2"})
    assert [json.loads(line).get("content", "")[:2] for line in
            (tmp_path / "journal.jsonl").read_text().splitlines()].count("2:") == 1
    assert journal.let_go_output(kept) == 0  # once


def test_a_rewind_restores_what_was_let_go_so_the_view_can_reach_back(tmp_path):
    journal, kept = _compacted_journal(tmp_path)
    journal.let_go_output(kept)
    # Rewinding the conversation to turn 2 takes the compaction away: turn 1's
    # result is in the model view again, with its output.
    journal.append(RewindRecord(checkpoint_id="t2", restore=RestoreWhat.BOTH))
    assert _results(journal.records)["toolu_1"] == (f"1:{BIG}", {"run_id": "run1"})
    view = json.dumps(build_view(journal.records).messages)
    assert f"1:{BIG}" in view and "turns 1-3" not in view


def test_nothing_is_let_go_without_a_file_or_before_the_file_holds_it(tmp_path):
    memory_only = Journal()
    _turn(memory_only, 1, BIG)
    assert memory_only.let_go_output(10**6) == 0
    assert _results(memory_only.records)["toolu_1"][0] == f"1:{BIG}"
    journal, kept = _compacted_journal(tmp_path)
    journal._unsaved.append(b"{}\n")  # a write still waiting (the disk failed)
    assert journal.let_go_output(kept) == 0


def test_the_journal_knows_where_its_cuts_are_and_a_plain_list_gives_the_same_view(tmp_path):
    journal, kept = _compacted_journal(tmp_path)
    journal.append(ConversationClearedRecord())
    _turn(journal, 5, "after the clear")
    records = journal.records
    assert records.at["compaction"] == [20] and records.at["conversation_cleared"] == [21]
    assert model_records(records) == model_records(list(records))
    assert journal.has_tool_use("toolu_5") and not journal.has_tool_use("toolu_9")


def test_stamping_a_record_does_not_grow_it() -> None:
    record = TurnEndedRecord(turn_id="t", status=TurnStatus.COMPLETED)
    size = sys.getsizeof(record.__pydantic_fields_set__)
    Journal().append(record)
    assert record.seq == 1 and record.ts > 0
    assert sys.getsizeof(record.__pydantic_fields_set__) == size
    assert json.loads(record.model_dump_json())["seq"] == 1
