"""Claude Code's tool names and input shapes beside agent-tui's own (protocol/tool_names.py)."""

from __future__ import annotations

from agent_tui.protocol.tool_names import (
    CLAUDE_NAMES,
    claude_input,
    claude_name,
    known_tool,
    our_input,
    our_name,
)
from agent_tui.tools.background import BackgroundJobs
from agent_tui.tools.registry import default_tools


def test_every_built_in_tool_has_a_claude_code_name(tmp_path) -> None:
    tools = default_tools(tmp_path, jobs=BackgroundJobs())
    for name in tools.names():
        assert name in CLAUDE_NAMES, name
        assert our_name(claude_name(name)) == name


def test_both_spellings_are_known_and_a_stranger_is_not() -> None:
    assert our_name("Bash") == "bash" and our_name("bash") == "bash"
    assert our_name("Read") == "read_file" and our_name("Agent") == "task"
    assert our_name("mcp__github__create_issue") == "mcp__github__create_issue"
    assert our_name("Bsah") is None and not known_tool("Bsah") and known_tool("Edit")


def test_input_takes_claude_code_s_keys_with_absolute_paths_and_back() -> None:
    ours = {"path": "src/a.py", "old_string": "x", "new_string": "y"}
    theirs = claude_input("edit_file", ours, "/home/dev/project")
    assert theirs == {"file_path": "/home/dev/project/src/a.py", "old_string": "x", "new_string": "y"}
    assert our_input("edit_file", theirs) == {**ours, "path": "/home/dev/project/src/a.py"}
    assert claude_input("bash", {"command": "ls", "timeout_ms": 5}, "/w") == {
        "command": "ls", "timeout": 5}
    assert claude_input("glob", {"pattern": "**/*.py", "path": "src"}, "/w") == {
        "pattern": "**/*.py", "path": "src"}
