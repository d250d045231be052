"""The journal is read once into conversation items (core/history/items.py), and every
reader of the conversation (the model view, the resumed transcript, /export, ACP's
replay) matches on the items, never on the journal's record kinds."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import agent_tui
from agent_tui.core.history.items import (
    CallStarted,
    ItemKind,
    Reply,
    Steer,
    Text,
    Thinking,
    ToolCall,
    ToolUse,
    TurnEnded,
    UnfinishedCall,
    UserTurn,
    conversation,
    read_items,
)
from agent_tui.core.history.history import model_view
from agent_tui.core.journal import records as journal_records
from agent_tui.core.journal.records import (
    AssistantMessageRecord,
    CheckpointRecord,
    HookRecord,
    Record,
    RewindRecord,
    SessionStarted,
    SteerRecord,
    ToolIntentRecord,
    ToolResultRecord,
    TurnEndedRecord,
    UserMessageRecord,
)
from agent_tui.protocol import ToolState
from agent_tui.protocol.states import HookDecision, HookEnding, HookEvent, TurnStatus

PACKAGE = Path(agent_tui.__file__).parent
BUILDER = PACKAGE / "core/history/items.py"
READERS = ["core/history/history.py", "core/history/export.py", "ui/render/replay.py",
           "acp/updates.py"]
RECORD_KINDS = {kind.__name__ for kind in get_args(get_args(Record)[0])}


def _turn(turn_id: str, command: str, *, result: bool = True) -> list[Record]:
    out: list[Record] = [
        UserMessageRecord(turn_id=turn_id, text=f"run {command}"),
        AssistantMessageRecord(turn_id=turn_id, ended="tool_use", blocks=[
            {"type": "thinking", "thinking": "  ", "signature": "s"},
            {"type": "thinking", "thinking": "which one?", "signature": "s"},
            {"type": "text", "text": " \n"},
            {"type": "text", "text": "Running it."},
            {"type": "tool_use", "id": "toolu_same", "name": "bash", "input": {"command": command}},
            {"type": "tool_use", "id": f"toolu_{turn_id}", "name": "read_file",
             "input": {"path": "a"}},
        ]),
        ToolIntentRecord(turn_id=turn_id, tool_use_id="toolu_same", name="bash",
                         input={"command": command}, operation_id="op"),
    ]
    if result:
        out.append(ToolResultRecord(turn_id=turn_id, tool_use_id="toolu_same", name="bash",
                                    state=ToolState.SUCCEEDED, content=command))
    return out


def test_a_journal_reads_as_typed_items_in_order_each_call_with_its_end() -> None:
    records: list[Record] = [
        SessionStarted(session_id="s", workspace="/ws", provider="p", model="m"),
        *_turn("t1", "echo one"),
        SteerRecord(id="s1", steer_kind="steer", state="queued", text="also"),
        SteerRecord(id="s1", steer_kind="steer", state="applied", text="also", turn_id="t1",
                    delivery="injected"),
        TurnEndedRecord(turn_id="t1", status=TurnStatus.CANCELLED),
        *_turn("t2", "echo two"),
    ]
    for i, record in enumerate(records):
        record.ts = float(i)
    past = conversation(records)
    assert past.workspace == "/ws" and past.last_ts == len(records) - 1
    assert [item.kind for item in past.items] == [
        ItemKind.USER_TURN, ItemKind.REPLY, ItemKind.CALL_STARTED, ItemKind.TOOL_CALL,
        ItemKind.STEER, ItemKind.UNFINISHED_CALL, ItemKind.TURN_ENDED,
        ItemKind.USER_TURN, ItemKind.REPLY, ItemKind.CALL_STARTED, ItemKind.TOOL_CALL,
    ]
    reply = past.items[1]
    assert isinstance(reply, Reply)
    assert reply.parts == [  # blank text and thinking left out
        Thinking(text="which one?"), Text(text="Running it."),
        ToolUse(tool_use_id="toolu_same", name="bash", input={"command": "echo one"}),
        ToolUse(tool_use_id="toolu_t1", name="read_file", input={"path": "a"})]
    assert reply.texts == ["Running it."] and reply.blocks[0]["signature"] == "s"
    # A call's end carries the model's input, from its own turn's reply.
    calls = [item for item in past.items if isinstance(item, ToolCall)]
    assert [(c.turn_id, c.input, c.state) for c in calls] == [
        ("t1", {"command": "echo one"}, ToolState.SUCCEEDED),
        ("t2", {"command": "echo two"}, ToolState.SUCCEEDED)]
    unfinished = past.items[5]
    assert isinstance(unfinished, UnfinishedCall)
    assert (unfinished.tool_use_id, unfinished.started, unfinished.state) == (
        "toolu_t1", False, ToolState.CANCELLED_BEFORE_START)
    steer = past.items[4]
    assert isinstance(steer, Steer) and steer.text == "also"
    ended = past.items[6]
    assert isinstance(ended, TurnEnded) and ended.status is TurnStatus.CANCELLED
    started = past.items[2]
    assert isinstance(started, CallStarted) and started.operation_id == "op"


def test_a_call_that_started_and_never_ended_is_of_unknown_outcome() -> None:
    records = [*_turn("t1", "sleep 9", result=False),
               TurnEndedRecord(turn_id="t1", status=TurnStatus.FAILED)]
    unfinished = [i for i in conversation(records).items if isinstance(i, UnfinishedCall)]
    assert [(u.tool_use_id, u.state) for u in unfinished] == [
        ("toolu_same", ToolState.UNKNOWN), ("toolu_t1", ToolState.CANCELLED_BEFORE_START)]


def test_a_rewound_part_is_not_in_the_conversation_but_read_items_takes_records_as_they_are() -> None:
    records: list[Record] = [
        *_turn("t1", "echo one"), TurnEndedRecord(turn_id="t1", status=TurnStatus.COMPLETED),
        CheckpointRecord(checkpoint_id="t2", turn_id="t2"),
        *_turn("t2", "echo two"), TurnEndedRecord(turn_id="t2", status=TurnStatus.COMPLETED),
        RewindRecord(checkpoint_id="t2", restore="both"),
    ]
    for i, record in enumerate(records):
        record.seq = i + 1
    turns = [i.text for i in conversation(records).items if isinstance(i, UserTurn)]
    assert turns == ["run echo one"]
    assert [i.text for i in read_items(records).items if isinstance(i, UserTurn)] == [
        "run echo one", "run echo two"]
    assert conversation(records).items[-1].kind is ItemKind.REWIND


def test_a_prompt_a_hook_blocked_is_marked_whichever_record_comes_first() -> None:
    def hook(turn_id: str) -> HookRecord:
        return HookRecord(event=HookEvent.USER_PROMPT_SUBMIT, command="check", source="user",
                          ending=HookEnding.EXITED, decision=HookDecision.BLOCK,
                          turn_id=turn_id, context="the hook says no")

    records: list[Record] = [
        UserMessageRecord(turn_id="t1", text="first"), hook("t1"),
        hook("t2"), UserMessageRecord(turn_id="t2", text="second"),
        UserMessageRecord(turn_id="t3", text="third"),
    ]
    turns = [i for i in conversation(records).items if isinstance(i, UserTurn)]
    assert [(t.text, t.blocked) for t in turns] == [
        ("first", True), ("second", True), ("third", False)]
    # The model view leaves the blocked prompts out and reads the hooks' context.
    assert [b["text"] for b in model_view(records)[0]["content"]] == [
        "the hook says no", "the hook says no", "third"]


def _case_names(tree: ast.AST) -> set[str]:
    """The class names of every ``case X():`` pattern in ``tree``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.MatchClass) and isinstance(node.cls, ast.Name):
            names.add(node.cls.id)
    return names


def test_every_record_kind_has_its_one_case_in_the_item_builder() -> None:
    """A new record kind is one case in ``items._read`` (the type checker's
    ``assert_never`` there fails until it has one)."""
    tree = ast.parse(BUILDER.read_text())
    read = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_read")
    assert _case_names(read) == RECORD_KINDS


def test_no_reader_of_the_conversation_matches_on_record_kinds() -> None:
    """So a new record kind (or a new field the readers show) changes the builder, not
    each reader: they match on items, and take from the journal's records only the
    ``Record`` type and a call's result record (an item carries it whole)."""
    allowed = {"Record", "ToolResultRecord"}
    for reader in READERS:
        tree = ast.parse((PACKAGE / reader).read_text())
        assert not (_case_names(tree) & RECORD_KINDS), reader
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.module == journal_records.__name__ for alias in node.names}
        assert imported <= allowed, (reader, imported - allowed)
        isinstance_checks = {
            arg.id for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
            for arg in ast.walk(node.args[1]) if isinstance(arg, ast.Name)}
        assert not (isinstance_checks & RECORD_KINDS), reader


def test_every_reader_shows_the_conversation_as_it_stands_after_a_rewind(tmp_path: Path) -> None:
    """The export, the final answer and ACP's replay read the same items: what a rewind
    of the conversation cut is in none of them (the journal keeps it)."""
    from agent_tui.acp.updates import UpdateMapper
    from agent_tui.core.history.export import conversation_markdown, final_answer

    records: list[Record] = [
        *_turn("t1", "echo one"), TurnEndedRecord(turn_id="t1", status=TurnStatus.COMPLETED),
        *_turn("t2", "echo cut"), TurnEndedRecord(turn_id="t2", status=TurnStatus.COMPLETED),
        RewindRecord(checkpoint_id="t2", restore="conversation"),
    ]
    for i, record in enumerate(records):
        record.seq = i + 1
    markdown = conversation_markdown(records, now=0)
    assert "echo one" in markdown and "echo cut" not in markdown
    assert final_answer(records) == "Running it."
    updates = UpdateMapper(tmp_path).replay(records)
    users = [u.content.text for u in updates if u.session_update == "user_message_chunk"]
    assert users == ["run echo one"]
    # The call with no result (read_file) is closed as never run, once.
    failed = [u.tool_call_id for u in updates
              if u.session_update == "tool_call_update" and u.status == "failed"]
    assert failed == ["toolu_t1"]
