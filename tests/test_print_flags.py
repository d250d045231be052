"""Print mode's flags for scripts and CI (``--max-turns``, ``--allowedTools``,
``--disallowedTools``, the system prompt, Claude Code's mode names) and their bad
values, from the real ``agent-tui`` process against the fake API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.core.journal import Journal
from agent_tui.core.records import TurnEndedRecord
from tests.fake_api import Reply
from tests.test_print_results import only_json, run


def journal_of(tmp_path: Path, session_id: str) -> Journal:
    return Journal.load(tmp_path / "home" / "sessions" / session_id / "journal.jsonl")


# -- --max-turns ---------------------------------------------------------------------------


def test_max_turns_stops_before_the_next_request_with_error_max_turns(fake_api, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    fake_api.enqueue(Reply.tool_use("read_file", {"path": "a.txt"}, text_before="Reading a."),
                     Reply.text("never asked for"))
    out = run(tmp_path, fake_api, "-p", "read a", "--output-format", "json", "--max-turns", "1")
    assert out.returncode == 1, out.stderr
    result = only_json(out.stdout)
    assert result["subtype"] == "error_max_turns" and result["is_error"] is True
    assert result["num_turns"] == 1 and len(fake_api.requests) == 1
    assert result["result"] == "Reading a."
    assert "--max-turns 1" in result["errors"][0]
    # The journal is honest: the call's result is kept, the turn ended as failed.
    journal = journal_of(tmp_path, result["session_id"])
    [ended] = [r for r in journal.records if isinstance(r, TurnEndedRecord)]
    assert ended.status == "failed" and "--max-turns 1" in ended.detail


def test_a_session_stopped_by_max_turns_resumes_with_a_valid_model_view(fake_api, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    fake_api.enqueue(Reply.tool_use("read_file", {"path": "a.txt"}, id="toolu_a"),
                     Reply.text("a says alpha"))
    first = only_json(run(tmp_path, fake_api, "-p", "read a", "--output-format", "json",
                          "--max-turns", "1").stdout)
    out = run(tmp_path, fake_api, "-p", "go on", "--output-format", "json",
              "--resume", first["session_id"])
    assert out.returncode == 0, out.stderr
    assert only_json(out.stdout)["result"] == "a says alpha"
    assert fake_api.rejections == []
    messages = fake_api.requests[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    kinds = [b["type"] for b in messages[2]["content"]]
    assert kinds[0] == "tool_result" and "text" in kinds
    assert "alpha" in json.dumps(messages[2]["content"][0])


def test_max_turns_not_reached_is_a_success(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("done at once"))
    out = run(tmp_path, fake_api, "-p", "hi", "--output-format", "json", "--max-turns", "3")
    assert out.returncode == 0, out.stderr
    result = only_json(out.stdout)
    assert result["subtype"] == "success" and result["num_turns"] == 1


def test_max_turns_in_text_mode_says_so_on_stderr_and_exits_one(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("glob", {"pattern": "*"}, text_before="Looking."))
    out = run(tmp_path, fake_api, "-p", "look", "--max-turns", "1")
    assert out.returncode == 1
    assert out.stdout == "Looking.\n"
    assert "--max-turns 1" in out.stderr


@pytest.mark.parametrize("value", ["0", "-1", "x", "1.5", ""])
def test_a_bad_max_turns_is_a_usage_error(fake_api, tmp_path, value):
    out = run(tmp_path, fake_api, "-p", "hi", "--output-format", "json", "--max-turns", value)
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.startswith(f"agent-tui: --max-turns {value}: ") and "1 or more" in out.stderr
    assert out.stderr.count("\n") == 1 and fake_api.requests == []


def test_argparse_complaints_are_one_line_and_exit_one(fake_api, tmp_path):
    for args in (["--bogus"], ["--max-turns"], ["--output-format", "xml"]):
        out = run(tmp_path, fake_api, "-p", "hi", *args)
        assert out.returncode == 1, args
        assert out.stderr.startswith("agent-tui: ") and out.stderr.count("\n") == 1, out.stderr
