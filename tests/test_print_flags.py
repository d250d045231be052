"""Print mode's flags for scripts and CI (``--max-turns``, ``--allowedTools``,
``--disallowedTools``, the system prompt, Claude Code's mode names) and their bad
values, from the real ``agent-tui`` process against the fake API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import TurnEndedRecord
from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.print_agent import only_json, run


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


# -- --allowedTools / --disallowedTools -------------------------------------------------------


@pytest.mark.parametrize(("given", "rules"), [
    (["Bash(git log:*) Bash(git diff:*)"], ["Bash(git log:*)", "Bash(git diff:*)"]),
    (["Bash(npm run test:*),Read"], ["Bash(npm run test:*)", "Read"]),
    (["Bash(git log:*)", "Bash(git diff:*)", "Read"], ["Bash(git log:*)", "Bash(git diff:*)", "Read"]),
    (["mcp__slack mcp__filesystem"], ["mcp__slack", "mcp__filesystem"]),
    (["Bash(echo a, b) , Edit"], ["Bash(echo a, b)", "Edit"]),
    ([" Read ,, Write  "], ["Read", "Write"]),
])
def test_rules_split_on_spaces_and_commas_outside_parentheses(given, rules):
    from agent_tui.cli.options import parse_options

    opts = parse_options(["-p", "hi", "--allowedTools", *given, "--disallowed-tools", *given])
    assert opts.allowed_tools == rules and opts.disallowed_tools == rules


def test_rule_flags_are_repeatable_and_take_both_spellings():
    from agent_tui.cli.options import parse_options

    opts = parse_options(["--allowedTools", "Read", "--allowed-tools", "Edit,Write", "-p", "hi",
                          "--disallowedTools", "Bash(rm:*)", "--disallowed-tools", "WebFetch"])
    assert opts.allowed_tools == ["Read", "Edit", "Write"]
    assert opts.disallowed_tools == ["Bash(rm:*)", "WebFetch"]
    assert opts.prompt == "hi"


def touching(fake_api, *names: str) -> None:
    """The model touches each file in turn, then answers."""
    fake_api.enqueue(*(Reply.tool_use("bash", {"command": f"touch {n}"}, id=f"toolu_{n}")
                       for n in names), Reply.text("done"))


def test_a_disallowed_rule_beats_auto_mode_and_the_run_goes_on(fake_api, tmp_path):
    touching(fake_api, "denied", "fine")
    out = run(tmp_path, fake_api, "-p", "touch", "--output-format", "json",
              "--permission-mode", "auto", "--disallowedTools", "bash(touch denied:*)")
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "denied").exists() and (tmp_path / "fine").exists()
    result = only_json(out.stdout)
    assert result["subtype"] == "success" and result["result"] == "done"
    assert result["permission_denials"] == [{"tool_name": "Bash", "tool_use_id": "toolu_denied",
                                             "tool_input": {"command": "touch denied"}}]
    told = fake_api.requests[1]["messages"][-1]["content"][0]
    assert told["tool_use_id"] == "toolu_denied" and "Bash(touch denied:*)" in told["content"]


def test_allowed_rules_let_calls_run_in_print_mode_where_ask_mode_would_refuse(fake_api, tmp_path):
    touching(fake_api, "a", "b", "c")
    out = run(tmp_path, fake_api, "--allowedTools", "bash(touch a:*)", "bash(touch b:*)",
              "-p", "touch", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()
    assert not (tmp_path / "c").exists()  # ask mode, no one to ask: refused
    denials = only_json(out.stdout)["permission_denials"]
    assert [d["tool_use_id"] for d in denials] == ["toolu_c"]


def test_a_disallowed_rule_on_the_command_line_beats_an_allow_in_the_settings(fake_api, tmp_path):
    (tmp_path / ".agent-tui").mkdir()
    (tmp_path / ".agent-tui" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["bash(touch:*)"]}}))
    touching(fake_api, "x")
    out = run(tmp_path, fake_api, "-p", "touch", "--output-format", "json",
              "--disallowed-tools", "bash(touch:*)")
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "x").exists()
    assert [d["tool_name"] for d in only_json(out.stdout)["permission_denials"]] == ["Bash"]


def test_a_disallowed_rule_in_claude_codes_names_beats_auto_mode(fake_api, tmp_path):
    touching(fake_api, "denied")
    out = run(tmp_path, fake_api, "-p", "touch", "--output-format", "json",
              "--permission-mode", "auto", "--disallowedTools", "Bash(touch denied:*),Read")
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "denied").exists()


@pytest.mark.parametrize(("rule", "why"), [
    ("Bash(git log:*", "missing ')'"),
    ("Read)", "')' without '('"),
    ("Bash()", "empty parentheses"),
    ("(ls)", "missing tool name"),
])
def test_an_unparsable_rule_is_a_usage_error_naming_it(fake_api, tmp_path, rule, why):
    for flag in ("--allowedTools", "--disallowed-tools"):
        out = run(tmp_path, fake_api, "-p", "hi", "--output-format", "json", flag, f"Read,{rule}")
        assert out.returncode == 1 and out.stdout == ""
        assert out.stderr.count("\n") == 1 and repr(rule) in out.stderr and why in out.stderr
    assert fake_api.requests == []


def test_a_prompt_read_as_rules_gets_a_hint(fake_api, tmp_path):
    out = run(tmp_path, fake_api, "-p", "--allowedTools", "Read", "do it")
    assert out.returncode == 1 and "end the rules with --" in out.stderr
    fake_api.enqueue(Reply.text("done"))
    out = run(tmp_path, fake_api, "-p", "--allowedTools", "Read", "--", "do it")
    assert out.returncode == 0, out.stderr
    assert fake_api.requests[0]["messages"][0]["content"][0]["text"] == "do it"


# -- the system prompt ---------------------------------------------------------------------


def system_text(request: dict) -> str:
    system = request.get("system", "")
    return system if isinstance(system, str) else "\n\n".join(b["text"] for b in system)


def test_system_prompt_replaces_the_default_one_and_memory_is_still_added(fake_api, tmp_path):
    (tmp_path / "CLAUDE.md").write_text("Use tabs, never spaces.\n")
    fake_api.enqueue(Reply.text("ok"))
    out = run(tmp_path, fake_api, "-p", "hi", "--system-prompt", "You are a release bot.")
    assert out.returncode == 0, out.stderr
    system = system_text(fake_api.requests[0])
    assert system.startswith("You are a release bot.")
    assert "Use tabs, never spaces." in system
    assert "You are agent-tui" not in system and "# Environment" not in system


def test_append_system_prompt_adds_to_the_default_one(fake_api, tmp_path):
    (tmp_path / "AGENTS.md").write_text("Run make test.\n")
    fake_api.enqueue(Reply.text("ok"))
    out = run(tmp_path, fake_api, "-p", "hi", "--append-system-prompt", "Answer in French.")
    assert out.returncode == 0, out.stderr
    system = system_text(fake_api.requests[0])
    assert system.startswith("You are agent-tui") and "Run make test." in system
    assert system.endswith("Answer in French.")


def test_system_prompt_and_append_system_prompt_together(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("ok"))
    out = run(tmp_path, fake_api, "-p", "hi", "--system-prompt", "Base.",
              "--append-system-prompt", "Then this.")
    assert out.returncode == 0, out.stderr
    assert system_text(fake_api.requests[0]) == "Base.\n\nThen this."


# -- Claude Code's permission-mode names ---------------------------------------------------------


@pytest.mark.parametrize(("given", "ours"), [
    ("default", "ask"), ("acceptEdits", "accept-edits"), ("bypassPermissions", "auto"),
    ("ask", "ask"), ("accept-edits", "accept-edits"), ("auto", "auto"),
    ("dontAsk", "dont-ask"), ("dont-ask", "dont-ask"),
])
def test_claude_codes_mode_names_are_aliases(fake_api, tmp_path, given, ours):
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch ran"}), Reply.text("ok"))
    out = run(tmp_path, fake_api, "-p", "touch", "--output-format", "stream-json",
              "--permission-mode", given)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert lines[0]["permission_mode"] == ours
    assert (tmp_path / "ran").exists() == (ours == "auto")
    assert bool(lines[-1]["permission_denials"]) == (ours != "auto")


def test_an_unknown_mode_is_a_usage_error_listing_the_modes(fake_api, tmp_path):
    out = run(tmp_path, fake_api, "-p", "hi", "--permission-mode", "yolo")
    assert out.returncode == 1
    assert "yolo" in out.stderr and "bypassPermissions" in out.stderr and "accept-edits" in out.stderr


# -- more of Claude Code's spellings ------------------------------------------------------------


def test_claude_codes_short_options_and_flags_are_taken():
    from agent_tui.cli.options import UsageError, parse_options

    opts = parse_options(["-p", "hi", "--dangerously-skip-permissions", "--verbose",
                          "--output-format", "stream-json"])
    assert opts.permission_mode == "auto" and opts.output_format == "stream-json"
    assert parse_options(["-p", "hi", "--dangerously-skip-permissions",
                          "--permission-mode", "bypassPermissions"]).permission_mode == "auto"
    with pytest.raises(UsageError, match="cannot go with --permission-mode ask"):
        parse_options(["-p", "hi", "--dangerously-skip-permissions", "--permission-mode", "ask"])
    with pytest.raises(UsageError, match="not allowed with"):
        parse_options(["-p", "hi", "-c", "-r", "abc"])
    # dontAsk is a mode of its own, in print mode and out of it
    assert parse_options(["-p", "hi", "--permission-mode", "dontAsk"]).permission_mode == "dont-ask"
    assert parse_options(["--permission-mode", "dontAsk"]).permission_mode == "dont-ask"


def test_continue_and_resume_by_their_short_names(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("first"), Reply.text("second"), Reply.text("third"))
    first = only_json(run(tmp_path, fake_api, "-p", "one", "--output-format", "json").stdout)
    again = only_json(run(tmp_path, fake_api, "-c", "-p", "two", "--output-format", "json").stdout)
    third = only_json(run(tmp_path, fake_api, "-r", first["session_id"], "three",
                          "--print", "--output-format", "json").stdout)
    assert first["session_id"] == again["session_id"] == third["session_id"]
    assert [len(r["messages"]) for r in fake_api.requests] == [1, 3, 5]


# -- a prompt on stdin ----------------------------------------------------------------------------


def sent_text(fake_api, index: int = 0) -> str:
    return fake_api.requests[index]["messages"][0]["content"][0]["text"]


def test_piped_input_follows_the_prompt_as_in_claude_code(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("a full disk"), Reply.text("hello back"))
    out = run(tmp_path, fake_api, "-p", "explain this log", input="error: disk full\nretrying\n")
    assert out.returncode == 0, out.stderr
    assert sent_text(fake_api) == "explain this log\nerror: disk full\nretrying"
    out = run(tmp_path, fake_api, "-p", "--output-format", "json", input="hello\n")
    assert out.returncode == 0, out.stderr
    assert sent_text(fake_api, 1) == "hello" and only_json(out.stdout)["result"] == "hello back"


def test_no_prompt_anywhere_is_a_usage_error(fake_api, tmp_path):
    out = run(tmp_path, fake_api, "-p", "--output-format", "json", input="")
    assert out.returncode == 1 and out.stdout == ""
    assert "-p needs a prompt, as an argument or on stdin" in out.stderr


def test_a_pipe_that_says_nothing_is_left_after_the_wait(fake_api, tmp_path):
    import os

    from tests.print_agent import api_env

    fake_api.enqueue(Reply.text("went on"))
    read_end, write_end = os.pipe()  # held open by this test, never written
    try:
        out = run_agent(["--cwd", str(tmp_path), "-p", "hi", "--output-format", "json"],
                        env=api_env(tmp_path, fake_api), stdin=read_end, timeout=60)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert out.returncode == 0, out.stderr
    assert only_json(out.stdout)["result"] == "went on" and sent_text(fake_api) == "hi"
    assert "nothing on stdin after 3 s" in out.stderr
