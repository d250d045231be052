"""The permission prompt, once per kind of call: a command, an edit, a new file, a web
fetch, an MCP tool and a plan; and the edit after it ran (its numbered diff in the
transcript). Each is a fixed list of events played by the fake session."""

from __future__ import annotations

from pathlib import Path

from agent_tui.protocol import (
    Event,
    PermissionRequested,
    TextDelta,
    ToolStateChanged,
    TurnStarted,
    TurnStateChanged,
)
from agent_tui.protocol.states import ToolState as S
from agent_tui.protocol.states import TurnState as T

TURN = "t1"
HELLO = "Line one\nThis line will change.\nLine three\n"
HELLO_AFTER = "Line one\nThis line was changed.\nLine three\n"


def _asked(text: str, said: str, id: str, name: str, summary: str, tool_input: dict,
           reason: str, rule: str) -> list[Event]:
    return [
        TurnStarted(turn_id=TURN, text=text),
        TurnStateChanged(turn_id=TURN, state=T.RUNNING),
        TextDelta(turn_id=TURN, text=said),
        ToolStateChanged(turn_id=TURN, tool_use_id=id, name=name, state=S.QUEUED, summary=summary,
                         input=tool_input),
        ToolStateChanged(turn_id=TURN, tool_use_id=id, name=name, state=S.AWAITING_APPROVAL,
                         summary=summary, input=tool_input),
        PermissionRequested(turn_id=TURN, tool_use_id=id, name=name, summary=summary,
                            input=tool_input, reason=reason, rule=rule),
    ]


COMMAND = _asked("run the tests", "I'll run the test suite.", "toolu_c", "bash", "npm test",
                 {"command": "npm test", "description": "Run the project's test suite"},
                 "Bash runs a command", "mode:ask")

DANGEROUS = _asked("tidy the build folder", "I'll remove the old build output.", "toolu_r", "bash",
                   "rm -rf build/", {"command": "rm -rf build/"}, "Bash runs a command", "mode:ask")

EDIT_INPUT = {"path": "hello.txt", "old_string": "This line will change.",
              "new_string": "This line was changed."}
EDIT = _asked("change line 2", "Editing hello.txt.", "toolu_e", "edit_file", "edit_file hello.txt",
              EDIT_INPUT, "Edit writes files", "mode:ask")

NEW_FILE_INPUT = {"path": "notes/todo.md", "content": "# To do\n\n- write the tests\n- ship it\n"}
NEW_FILE = _asked("start a to-do list", "Creating the list.", "toolu_w", "write_file",
                  "write_file notes/todo.md (4 lines)", NEW_FILE_INPUT, "Write writes files", "mode:ask")

FETCH = _asked("what is new in textual?", "Let me read the changelog.", "toolu_f", "web_fetch",
               "web_fetch https://textual.textualize.io/changelog/",
               {"url": "https://textual.textualize.io/changelog/", "prompt": "What changed lately?"},
               "WebFetch fetches from textual.textualize.io", "mode:ask")

MCP = _asked("file the bug", "Opening an issue.", "toolu_m", "mcp__github__create_issue",
             "mcp__github__create_issue", {"repo": "acme/app", "title": "Crash on start",
                                           "labels": ["bug", "p1"], "draft": False},
             "mcp__github__create_issue may have side effects", "mode:ask")

PLAN = _asked("plan the refactor", "Here is my plan.", "toolu_p", "exit_plan_mode", "exit_plan_mode",
              {"plan": "## Plan\n\n1. Move the parser into its own module\n2. Add tests for it\n"
                       "3. Remove the old code"}, "", "mode:plan")


def edit_done() -> list[Event]:
    """The edit allowed and run: its diff in the transcript, in the past tense."""
    ran = [ToolStateChanged(turn_id=TURN, tool_use_id="toolu_e", name="edit_file", state=state,
                            summary="edit_file hello.txt", input=EDIT_INPUT,
                            **({"result": "Edited hello.txt"} if state is S.SUCCEEDED else {}))
           for state in (S.RUNNING, S.SUCCEEDED)]
    return [*EDIT, *ran]


def workspace(tmp: Path) -> Path:
    (tmp / "hello.txt").write_text(HELLO)
    return tmp


#: An answer longer than the window, then a command to approve: the transcript scrolls
#: behind the prompt.
LONG_ANSWER = "".join(f"Finding {i}: the parser reads line {i}.\n\n" for i in range(1, 41))
SCROLLED = _asked("review the parser", LONG_ANSWER, "toolu_s", "bash", "npm test",
                  {"command": "npm test", "description": "Run the project's test suite"},
                  "Bash runs a command", "mode:ask")


def long_edit(tmp: Path, said: str = "Writing.") -> list[Event]:
    """A write that changes every fifth line of 40: its diff folds in the prompt."""
    (tmp / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 41)))
    new = "".join(f"line {i}{' changed' if i % 5 == 0 else ''}\n" for i in range(1, 41))
    return _asked("change it", said, "toolu_l", "write_file", "write_file long.txt",
                  {"path": "long.txt", "content": new}, "Write writes files", "mode:ask")


#: A command of thirty lines: the prompt folds it after twelve, ctrl+o shows it whole.
STEPS = "\n".join(f"npm run step{i}" for i in range(1, 31))
LONG_COMMAND = _asked("run the steps", "I'll run every step.", "toolu_l", "bash", "npm run step1 …",
                      {"command": STEPS, "description": "Run thirty steps"}, "Bash runs a command",
                      "mode:ask")
