"""ACP mapping without a process: tool states -> statuses and _meta, journal replay,
and the transport's frame checks."""

from __future__ import annotations

from pathlib import Path

from agent_tui.acp.transport import check_message
from agent_tui.acp.updates import ACP_STATUS, UpdateMapper, tool_kind
from agent_tui.protocol import SideEffects, ToolOutput, ToolState, ToolStateChanged
from agent_tui.core.journal.records import (
    AssistantMessageRecord,
    SteerRecord,
    ToolIntentRecord,
    ToolResultRecord,
    TurnEndedRecord,
    UserMessageRecord,
)


def test_every_tool_state_has_an_acp_status_and_only_running_is_in_progress():
    assert set(ACP_STATUS) == set(ToolState)
    assert [s for s, v in ACP_STATUS.items() if v == "in_progress"] == [ToolState.RUNNING]
    assert ACP_STATUS[ToolState.SUCCEEDED] == "completed"
    assert tool_kind("bash") == "execute" and tool_kind("read_file") == "read"
    assert tool_kind("write_file") == tool_kind("edit_file") == "edit"
    assert tool_kind("mcp__x__y") == "other"


def test_tool_state_updates_carry_our_state_in_meta_and_paths_as_locations(tmp_path: Path):
    (tmp_path / "a.txt").write_text("x\n")
    mapper = UpdateMapper(tmp_path)
    base = dict(turn_id="t1", tool_use_id="toolu_1", name="edit_file")
    first = mapper.tool_state(ToolStateChanged(**base, state=ToolState.STREAMING))
    assert first.session_update == "tool_call" and first.status == "pending"
    tool_input = {"path": "a.txt", "old_string": "x", "new_string": "y"}
    queued = mapper.tool_state(ToolStateChanged(**base, state=ToolState.QUEUED, input=tool_input,
                                                summary="edit_file a.txt"))
    assert queued.session_update == "tool_call_update"
    assert queued.locations[0].path == str(tmp_path / "a.txt")
    assert queued.content[0].type == "diff"
    final = mapper.tool_state(ToolStateChanged(
        **base, state=ToolState.CANCELLED_WHILE_RUNNING, result="Interrupted",
        side_effects=SideEffects.UNVERIFIED, signal="SIGTERM"))
    assert final.status == "failed"
    assert final.field_meta == {"agent_tui": {"state": "cancelled_while_running",
                                              "side_effects": "unverified", "signal": "SIGTERM"}}
    assert final.raw_output["state"] == "cancelled_while_running"


def test_replay_closes_a_call_the_agent_never_finished(tmp_path: Path):
    records = [
        UserMessageRecord(turn_id="t1", text="do it"),
        AssistantMessageRecord(turn_id="t1", ended="tool_use", blocks=[
            {"type": "text", "text": "Sure."},
            {"type": "tool_use", "id": "toolu_a", "name": "bash", "input": {"command": "true"}},
            {"type": "tool_use", "id": "toolu_b", "name": "bash", "input": {"command": "false"}},
        ]),
        ToolIntentRecord(turn_id="t1", tool_use_id="toolu_a", name="bash", input={}, operation_id="op"),
        ToolResultRecord(turn_id="t1", tool_use_id="toolu_a", name="bash",
                         state=ToolState.SUCCEEDED, content="ok", exit_code=0),
        ToolIntentRecord(turn_id="t1", tool_use_id="toolu_b", name="bash", input={}, operation_id="op2"),
        TurnEndedRecord(turn_id="t1", status="cancelled"),
    ]
    updates = UpdateMapper(tmp_path).replay(records)
    kinds = [u.session_update for u in updates]
    assert kinds == ["user_message_chunk", "agent_message_chunk", "tool_call", "tool_call",
                     "tool_call_update", "tool_call_update"]
    by_id = {u.tool_call_id: u for u in updates[-2:]}
    assert by_id["toolu_a"].status == "completed"
    assert by_id["toolu_b"].status == "failed"
    assert by_id["toolu_b"].field_meta["agent_tui"]["state"] == "unknown"


def test_frame_checks():
    assert check_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}) is None
    assert check_message({"jsonrpc": "2.0", "method": "session/cancel", "params": {}}) is None
    assert check_message({"jsonrpc": "2.0", "id": 0, "result": {}}) is None
    assert check_message([1])["error"]["code"] == -32600
    assert check_message({"id": 3, "method": 1})["id"] == 3
    assert check_message({"id": True, "method": "x"})["error"]["code"] == -32600
    assert check_message({"jsonrpc": "2.0"})["error"]["code"] == -32600
    assert check_message({"id": 1, "method": "x", "params": "nope"})["error"]["code"] == -32600


def _diff(update):
    [diff] = [c for c in update.content if c.type == "diff"]
    return diff


def test_edit_diffs_carry_the_whole_file_so_line_numbers_are_right(tmp_path: Path):
    lines = [f"line {n}\n" for n in range(1, 11)]
    target = tmp_path / "notes.txt"
    target.write_text("".join(lines))
    mapper = UpdateMapper(tmp_path)
    base = dict(turn_id="t1", tool_use_id="toolu_edit", name="edit_file")
    tool_input = {"path": "notes.txt", "old_string": "line 7\n", "new_string": "line seven\n"}
    mapper.tool_state(ToolStateChanged(**base, state=ToolState.STREAMING))
    queued = mapper.tool_state(ToolStateChanged(**base, state=ToolState.QUEUED, input=tool_input))
    diff = _diff(queued)
    assert diff.path == str(target)
    assert diff.old_text == "".join(lines)
    assert diff.new_text == "".join(lines).replace("line 7\n", "line seven\n")
    asked = mapper.permission_call("toolu_edit", "edit_file", "edit notes.txt", tool_input)
    assert _diff(asked).old_text == diff.old_text
    # Once done the file on disk has changed: the diff is still the one of the edit.
    target.write_text(diff.new_text)
    done = mapper.tool_state(ToolStateChanged(**base, state=ToolState.SUCCEEDED, result="ok"))
    assert (_diff(done).old_text, _diff(done).new_text) == (diff.old_text, diff.new_text)


def test_a_write_over_an_existing_file_diffs_against_it_and_outside_files_are_not_read(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("old contents\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("do not send\n")
    mapper = UpdateMapper(workspace)
    write = mapper.tool_state(ToolStateChanged(
        turn_id="t1", tool_use_id="toolu_w", name="write_file", state=ToolState.QUEUED,
        input={"path": "a.txt", "content": "new contents\n"}))
    assert (_diff(write).old_text, _diff(write).new_text) == ("old contents\n", "new contents\n")
    outside = mapper.tool_state(ToolStateChanged(
        turn_id="t1", tool_use_id="toolu_x", name="edit_file", state=ToolState.QUEUED,
        input={"path": str(secret), "old_string": "do not", "new_string": "please"}))
    assert not [c for c in (outside.content or []) if c.type == "diff"]


def test_replay_shows_a_steer_only_where_it_reached_the_model_inside_a_turn(tmp_path: Path):
    """An applied, injected steer is a user message of the turn; a queued one, a
    returned one and one that started a turn of its own (that turn's user message is
    replayed) are not shown again."""
    records = [
        UserMessageRecord(turn_id="t1", text="do it"),
        SteerRecord(id="s1", steer_kind="steer", state="queued", text="also this"),
        SteerRecord(id="s1", steer_kind="steer", state="applied", text="also this",
                    turn_id="t1", delivery="injected"),
        SteerRecord(id="s2", steer_kind="steer", state="returned", text="never mind"),
        SteerRecord(id="s3", steer_kind="follow_up", state="applied", text="next",
                    delivery="new_turn"),
        TurnEndedRecord(turn_id="t1", status="completed"),
    ]
    updates = UpdateMapper(tmp_path).replay(records)
    assert [(u.session_update, u.content.text) for u in updates] == [
        ("user_message_chunk", "do it"), ("user_message_chunk", "also this")]


def test_the_bridge_has_a_case_for_every_event_type():
    from agent_tui.acp.bridge import SessionBridge
    from tests.event_cases import unhandled_events

    assert unhandled_events(SessionBridge._forward) == set()


def test_a_bash_call_is_a_terminal_view_for_a_client_that_shows_them(tmp_path: Path):
    mapper = UpdateMapper(tmp_path)
    mapper.terminals = True
    base = dict(turn_id="t1", tool_use_id="toolu_sh", name="bash")
    mapper.tool_state(ToolStateChanged(**base, state=ToolState.QUEUED, input={"command": "ls"}))
    running = mapper.tool_state(ToolStateChanged(**base, state=ToolState.RUNNING))
    assert [c.type for c in running.content] == ["terminal"]
    assert running.field_meta["terminal_info"] == {"terminal_id": "toolu_sh", "cwd": str(tmp_path)}
    chunk = mapper.tool_output(ToolOutput(turn_id="t1", tool_use_id="toolu_sh", text="a\n"))
    assert chunk.field_meta == {"terminal_output": {"terminal_id": "toolu_sh", "data": "a\n"}}
    assert chunk.content is None  # the view stays; the output is not a text block
    done = mapper.tool_state(ToolStateChanged(**base, state=ToolState.SUCCEEDED, exit_code=0,
                                              result="a"))
    assert done.content[0].type == "terminal" and done.status == "completed"
    assert done.field_meta["terminal_exit"] == {"terminal_id": "toolu_sh", "exit_code": 0,
                                                "signal": None}
    # A call that never ran has no view; other tools and other clients keep the text.
    denied = dict(base, tool_use_id="toolu_no")
    mapper.tool_state(ToolStateChanged(**denied, state=ToolState.QUEUED))
    refused = mapper.tool_state(ToolStateChanged(**denied, state=ToolState.DENIED))
    assert "terminal_exit" not in refused.field_meta
    started = dict(base, tool_use_id="toolu_bg")
    mapper.tool_state(ToolStateChanged(**started, state=ToolState.QUEUED,
                                       input={"command": "sleep 9", "run_in_background": True}))
    assert "terminal_info" not in mapper.tool_state(
        ToolStateChanged(**started, state=ToolState.RUNNING)).field_meta
    plain = UpdateMapper(tmp_path)
    plain.tool_state(ToolStateChanged(**base, state=ToolState.RUNNING))
    shown = plain.tool_output(ToolOutput(turn_id="t1", tool_use_id="toolu_sh", text="a\n"))
    assert shown.content[0].content.text == "a\n"
