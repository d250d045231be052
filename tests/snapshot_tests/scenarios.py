"""Fixed event lists, one per snapshot scenario, played by ``support.FakeSession``.

Ids and texts are fixed so that snapshots never move between runs.
"""

from __future__ import annotations

from agent_tui.protocol import (
    BackgroundJobChanged,
    Event,
    FileChangeInfo,
    ListRewindPoints,
    Notice,
    PermissionRequested,
    PlanRewind,
    RestoreWhat,
    RetryScheduled,
    RewindPlanned,
    RewindPoint,
    RewindPoints,
    Rewound,
    SteerState,
    SteerStatus,
    TextDelta,
    ToolOutput,
    ToolState as S,
    ToolStateChanged,
    TurnEnded,
    TurnStarted,
    TurnState as T,
    TurnStateChanged,
)

TURN = "t1"


def _tool(id: str, name: str, state: S, summary: str = "", **extra) -> ToolStateChanged:
    return ToolStateChanged(turn_id=TURN, tool_use_id=id, name=name, state=state, summary=summary, **extra)


def _text(text: str, size: int = 7) -> list[Event]:
    return [TextDelta(turn_id=TURN, text=text[i : i + size]) for i in range(0, len(text), size)]


def _start(text: str) -> list[Event]:
    return [TurnStarted(turn_id=TURN, text=text), TurnStateChanged(turn_id=TURN, state=T.RUNNING)]


IDLE: list[Event] = []

STREAMING: list[Event] = [
    *_start("explain the plan"),
    *_text(
        "## The plan\n\nI will do three things:\n\n- read `setup.cfg`\n- run the **tests**\n"
        "- fix what fails\n\nText a model sends is shown as is: [bold red]not markup[/] "
        "and \x1b[31mno escape codes\x1b[0m\x07 reach the terminal.\n\nNow reading the fi"
    ),
]

BUILD = 'sleep 600 & for i in $(seq 1 30); do echo "build step $i of 30"; sleep 1; done'

TOOL_RUNNING: list[Event] = [
    *_start("run a slow build"),
    *_text("I'll run a slow build. Press Esc at any moment to stop it."),
    _tool("toolu_1", "bash", S.STREAMING),
    _tool("toolu_1", "bash", S.QUEUED, BUILD),
    _tool("toolu_1", "bash", S.RUNNING, BUILD),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_1", text="build step 1 of 30\nbuild step 2 of 30\n"),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_1", text="build step 3 of 30\n"),
]

MIXED_DETAIL = "1 succeeded, 1 denied, 1 cancelled_while_running, 1 cancelled_before_start"

CANCELLED_MIXED: list[Event] = [
    *_start("build and publish"),
    *_text("First the listing, then the build, then the upload."),
    _tool("toolu_a", "read_file", S.QUEUED, "read_file README.md"),
    _tool("toolu_a", "read_file", S.RUNNING, "read_file README.md"),
    _tool("toolu_a", "read_file", S.SUCCEEDED, "read_file README.md"),
    _tool("toolu_b", "write_file", S.QUEUED, "write_file notes.txt"),
    _tool("toolu_b", "write_file", S.DENIED, "write_file notes.txt", detail="not now"),
    _tool("toolu_c", "bash", S.QUEUED, "make build"),
    _tool("toolu_c", "bash", S.RUNNING, "make build"),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_c", text="cc -O2 -c main.c\n"),
    _tool("toolu_d", "bash", S.QUEUED, "make upload"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="1 tool call running"),
    _tool("toolu_d", "bash", S.CANCELLED_BEFORE_START, "make upload"),
    _tool(
        "toolu_c", "bash", S.CANCELLED_WHILE_RUNNING, "make build",
        detail="SIGTERM, exit -15", signal="SIGTERM", exit_code=-15,
    ),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="1 of 1 running tool calls ended"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLED, detail=MIXED_DETAIL),
    TurnEnded(turn_id=TURN, status="cancelled"),
]

#: Esc: the turn ends at once; a command that ignores TERM is still stopping, in place.
STOPPING_AFTER_THE_TURN: list[Event] = [
    *_start("run the dev server"),
    *_text("Starting the dev server."),
    _tool("toolu_s", "bash", S.QUEUED, "npm run dev"),
    _tool("toolu_s", "bash", S.RUNNING, "npm run dev"),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_s", text="ready on http://localhost:5173\n"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="1 tool call running"),
    _tool("toolu_s", "bash", S.RUNNING, "npm run dev",
          detail="stopping: it ignores TERM, killed in 1.9 s"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLED, detail="1 running"),
    TurnEnded(turn_id=TURN, status="cancelled"),
]

PERMISSION: list[Event] = [
    *_start("tidy the build folder"),
    *_text("I'll remove the old build output."),
    _tool("toolu_p", "bash", S.QUEUED, "rm -rf build/"),
    _tool("toolu_p", "bash", S.AWAITING_APPROVAL, "rm -rf build/"),
    PermissionRequested(
        turn_id=TURN, tool_use_id="toolu_p", name="bash", summary="rm -rf build/",
        input={"command": "rm -rf build/"}, reason="ask mode: commands need approval",
    ),
]

WEB_SEARCH_ASKED: list[Event] = [
    *_start("is python 3.14 out?"),
    *_text("Let me search the web."),
    _tool("toolu_s", "web_search", S.QUEUED, "web_search python 3.14 release"),
    _tool("toolu_s", "web_search", S.AWAITING_APPROVAL, "web_search python 3.14 release"),
    PermissionRequested(
        turn_id=TURN, tool_use_id="toolu_s", name="web_search",
        summary="web_search python 3.14 release", input={"query": "python 3.14 release"},
        reason="WebSearch sends the query to a web search (billed per search)",
    ),
]

STEERS: list[Event] = [
    *TOOL_RUNNING,
    SteerState(id="q1", state=SteerStatus.QUEUED, text="also run the linter"),
    SteerState(id="q2", state=SteerStatus.QUEUED, text="and keep the logs"),
    SteerState(id="q3", state=SteerStatus.QUEUED, kind="follow_up", text="then write a summary"),
    _tool("toolu_1", "bash", S.SUCCEEDED, BUILD, exit_code=0, detail="exit 0"),
    SteerState(id="q1", state=SteerStatus.APPLIED, text="also run the linter"),
    SteerState(id="q2", state=SteerStatus.APPLIED, text="and keep the logs"),
    *_text("Noted: running the linter next and keeping the logs."),
]

RETURNED: list[Event] = [
    *TOOL_RUNNING,
    SteerState(id="q1", state=SteerStatus.QUEUED, text="use the release profile"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="1 tool call running"),
    SteerState(id="q1", state=SteerStatus.RETURNED, text="use the release profile"),
    _tool("toolu_1", "bash", S.CANCELLED_WHILE_RUNNING, BUILD, signal="SIGTERM", exit_code=-15),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLED, detail="1 cancelled_while_running"),
    TurnEnded(turn_id=TURN, status="cancelled"),
]


# ------------------------------------------------------------------ rewind

T0 = 1_767_000_000.0  # a fixed moment, shown with a UTC formatter as 09:20


def _turn(turn_id: str, text: str, events: list[Event]) -> list[Event]:
    return [
        TurnStarted(turn_id=turn_id, text=text),
        TurnStateChanged(turn_id=turn_id, state=T.RUNNING),
        *events,
        TurnEnded(turn_id=turn_id, status="completed"),
    ]


def _t(turn_id: str, id: str, name: str, state: S, summary: str, **extra) -> ToolStateChanged:
    return ToolStateChanged(turn_id=turn_id, tool_use_id=id, name=name, state=state, summary=summary, **extra)


HISTORY: list[Event] = [
    *_turn("t1", "add a --verbose flag to the cli", [
        TextDelta(turn_id="t1", text="Adding the flag to `cli.py`."),
        _t("t1", "toolu_e1", "edit_file", S.SUCCEEDED, "edit_file src/cli.py", result="edited src/cli.py"),
        TextDelta(turn_id="t1", text="Done: `--verbose` prints each step."),
    ]),
    *_turn("t2", "write tests for the parser", [
        TextDelta(turn_id="t2", text="Writing the tests, then running them."),
        _t("t2", "toolu_w1", "write_file", S.SUCCEEDED, "write_file tests/test_parser.py"),
        _t("t2", "toolu_b1", "bash", S.SUCCEEDED, "pip install -e . && pytest -q", exit_code=0, detail="exit 0"),
        TextDelta(turn_id="t2", text="All 12 tests pass."),
    ]),
]

POINTS = RewindPoints(points=[
    RewindPoint(checkpoint_id="t2", label="write tests for the parser", time=T0, turn_id="t2"),
    RewindPoint(
        checkpoint_id="cp-undo-1", label="before rewind to “rename the module”", time=T0 - 300,
    ),
    RewindPoint(checkpoint_id="t1", label="add a --verbose flag to the cli", time=T0 - 540, turn_id="t1"),
])

PLAN_T1 = RewindPlanned(
    checkpoint_id="t1",
    label="add a --verbose flag to the cli",
    changes=[
        FileChangeInfo(path="src/cli.py", kind="modified", lines_added=2, lines_removed=9),
        FileChangeInfo(path="src/parser.py", kind="modified", lines_added=4, lines_removed=1, conflict=True),
        FileChangeInfo(path="tests/test_parser.py", kind="deleted", lines_added=0, lines_removed=58),
        FileChangeInfo(path="docs/usage.md", kind="added", lines_added=12, lines_removed=0),
    ],
    not_undoable=[
        "$ pip install -e . && pytest -q: file changes inside the workspace are restored; anything "
        "else it did (processes, network, files outside the workspace) is not undone",
    ],
)

REWOUND_T2 = Rewound(
    checkpoint_id="t2",
    restore=RestoreWhat.BOTH,
    text="write tests for the parser",
    restored=[
        FileChangeInfo(path="tests/test_parser.py", kind="deleted", lines_added=0, lines_removed=58),
    ],
    skipped_conflicts=[FileChangeInfo(path="src/parser.py", kind="modified", conflict=True)],
    not_undoable=[
        "$ pip install -e . && pytest -q: file changes inside the workspace are restored; anything "
        "else it did (processes, network, files outside the workspace) is not undone",
    ],
    undo_checkpoint_id="cp-undo-2",
)

REWIND_REPLIES = {
    ListRewindPoints: [POINTS],
    PlanRewind: lambda op: [PLAN_T1.model_copy(update={"checkpoint_id": op.checkpoint_id})],
}


# ------------------------------------------------------------ background, output, status

BACKGROUND: list[Event] = [
    *HISTORY[:6],
    BackgroundJobChanged(id="bash_1", kind="shell", description="npm run dev", state="running", detail="pid 4242"),
    BackgroundJobChanged(id="bash_2", kind="shell", description="pytest -q --looponfail", state="running", detail="pid 4250"),
    BackgroundJobChanged(id="bash_3", kind="shell", description="make docs", state="exited", detail="exit 0"),
    BackgroundJobChanged(id="agent_1", kind="agent", description="review the diff", state="completed"),
    BackgroundJobChanged(id="bash_4", kind="shell", description="sleep 600", state="killed", detail="SIGTERM (user)"),
]

LOG = "".join(f"test_parser.py::test_case_{i:03d} PASSED\n" for i in range(1, 261))

EXPANDED_OUTPUT: list[Event] = [
    *_start("run the tests"),
    *_text("Running the test suite."),
    _tool("toolu_t", "bash", S.QUEUED, "pytest -v"),
    _tool("toolu_t", "bash", S.RUNNING, "pytest -v"),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_t", text=LOG[: len(LOG) // 2]),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_t", text=LOG[len(LOG) // 2 :] + "\x1b[32m[bold]260 passed[/bold]\x1b[0m in 1.2s\n"),
    _tool(
        "toolu_t", "bash", S.SUCCEEDED, "pytest -v", exit_code=0, detail="exit 0",
        result="exit code 0\n(260 lines of output, last lines:)\n260 passed in 1.2s",
    ),
    *_text("All 260 tests pass."),
    TurnEnded(turn_id=TURN, status="completed"),
]

def _search_text() -> str:
    from agent_tui.tools.web.search import search_result

    found = [("What's New In Python 3.14", "https://docs.python.org/3.14/whatsnew/3.14.html",
              "3 days ago"),
             ("Python Release Python 3.14.0",
              "https://www.python.org/downloads/release/python-3140/", None),
             ("\x1b[31mPEP 745\x1b[0m – Python 3.14 Release Schedule",
              "https://peps.python.org/pep-0745/", "2 weeks ago")]
    content = [
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
         "input": {"query": "python 3.14 release"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
            {"type": "web_search_result", "title": t, "url": u, "page_age": a,
             "encrypted_content": "e"} for t, u, a in found]},
        {"type": "text", "text": "Python 3.14.0 was released in October 2025.", "citations": [
            {"type": "web_search_result_location", "url": found[1][1], "title": found[1][0],
             "cited_text": "Python 3.14.0", "encrypted_index": "i"}]},
    ]
    return search_result("python 3.14 release", content, searches=1, stop_reason="end_turn").content


WEB_SEARCH: list[Event] = [
    *_start("is python 3.14 out?"),
    *_text("Let me search the web."),
    _tool("toolu_s", "web_search", S.QUEUED, "web_search python 3.14 release"),
    _tool("toolu_s", "web_search", S.RUNNING, "web_search python 3.14 release"),
    _tool("toolu_s", "web_search", S.SUCCEEDED, "web_search python 3.14 release",
          result=_search_text()),
    *_text("Yes: Python 3.14.0 came out in October 2025."),
    TurnEnded(turn_id=TURN, status="completed"),
]

JOURNAL_ERROR: list[Event] = [
    *TOOL_RUNNING,
    Notice(level="error", text="journal not saved (tool_intent): No space left on device",
           code="journal_write_failed"),
    Notice(level="info", text="checkpoint: 3 files recorded"),
]

RETRY: list[Event] = [
    *_start("summarise the changes"),
    RetryScheduled(turn_id=TURN, attempt=2, delay=8.0, reason="overloaded_error: Overloaded (529)"),
]


# ------------------------------------------------------------ issue 11: every tool state on screen

# Result texts as the core words them (core/history/history.py), so the transcript reads as it would.
INTERRUPTED = (
    "Interrupted by the user after it started; it may have partly run (ended by SIGTERM, "
    "exit code -15). Verify its effects before redoing it."
)

APPROVAL_AND_QUEUED: list[Event] = [
    *_start("clean and rebuild"),
    *_text("I'll remove the old output, then build again."),
    _tool("toolu_r", "bash", S.QUEUED, "rm -rf build/"),
    _tool("toolu_m", "bash", S.QUEUED, "make all"),
    _tool("toolu_r", "bash", S.AWAITING_APPROVAL, "rm -rf build/"),
    PermissionRequested(
        turn_id=TURN, tool_use_id="toolu_r", name="bash", summary="rm -rf build/",
        input={"command": "rm -rf build/"}, reason="ask mode: commands need approval",
    ),
]

CANCELLING_PROGRESS: list[Event] = [
    BackgroundJobChanged(id="bash_1", kind="shell", description="npm run dev", state="running", detail="pid 4242"),
    *_start("test both packages"),
    *_text("Running both test suites at once."),
    _tool("toolu_u", "bash", S.QUEUED, "pytest packages/api"),
    _tool("toolu_v", "bash", S.QUEUED, "pytest packages/web"),
    _tool("toolu_u", "bash", S.RUNNING, "pytest packages/api"),
    _tool("toolu_v", "bash", S.RUNNING, "pytest packages/web"),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_u", text="collected 412 items\n"),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_v", text="collected 96 items\n"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="2 tool calls running"),
    _tool(
        "toolu_v", "bash", S.CANCELLED_WHILE_RUNNING, "pytest packages/web",
        detail="SIGTERM, exit -15", signal="SIGTERM", exit_code=-15, result=INTERRUPTED,
    ),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="1 of 2 running tool calls ended"),
]

ALL_ENDS_DETAIL = (
    "1 succeeded, 1 failed, 1 denied, 1 cancelled_while_running, 1 unknown, 1 cancelled_before_start"
)

ALL_END_STATES: list[Event] = [
    *_start("check, fix and deploy"),
    *_text("Checking the tree, then the linter, the fix, the build and the deploy."),
    _tool("toolu_1", "bash", S.QUEUED, "git status --short"),
    _tool("toolu_1", "bash", S.RUNNING, "git status --short"),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_1", text=" M src/app.py\n"),
    _tool("toolu_1", "bash", S.SUCCEEDED, "git status --short", exit_code=0, detail="exit 0",
          result="exit code 0\n M src/app.py"),
    _tool("toolu_2", "bash", S.QUEUED, "ruff check src"),
    _tool("toolu_2", "bash", S.RUNNING, "ruff check src"),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_2", text="src/app.py:3:1: F401 `os` imported but unused\nFound 1 error.\n"),
    _tool("toolu_2", "bash", S.FAILED, "ruff check src", exit_code=2, detail="exit 2",
          result="exit code 2\nFound 1 error."),
    _tool("toolu_3", "edit_file", S.QUEUED, "edit_file src/app.py"),
    _tool("toolu_3", "edit_file", S.AWAITING_APPROVAL, "edit_file src/app.py"),
    _tool("toolu_3", "edit_file", S.DENIED, "edit_file src/app.py", detail="denied by the user: not this file"),
    _tool("toolu_4", "bash", S.QUEUED, "make build"),
    _tool("toolu_4", "bash", S.RUNNING, "make build"),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_4", text="cc -O2 -c main.c\n"),
    _tool("toolu_5", "bash", S.QUEUED, "./scripts/sync-cache.sh"),
    _tool("toolu_5", "bash", S.RUNNING, "./scripts/sync-cache.sh"),
    ToolOutput(turn_id=TURN, tool_use_id="toolu_5", text="syncing 3 of 40\n"),
    _tool("toolu_6", "bash", S.QUEUED, "make deploy"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="2 tool calls running"),
    _tool("toolu_6", "bash", S.CANCELLED_BEFORE_START, "make deploy"),
    _tool(
        "toolu_4", "bash", S.CANCELLED_WHILE_RUNNING, "make build",
        detail="SIGTERM, exit -15", signal="SIGTERM", exit_code=-15, result=INTERRUPTED,
    ),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="1 of 2 running tool calls ended"),
    _tool(
        "toolu_5", "bash", S.UNKNOWN, "./scripts/sync-cache.sh",
        result="Result unknown: the outcome of this call could not be confirmed "
        "(bash did not confirm it stopped within 2 s). Verify before retrying.",
    ),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="2 of 2 running tool calls ended"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLED, detail=ALL_ENDS_DETAIL),
    TurnEnded(turn_id=TURN, status="cancelled"),
]

STEER_AND_FOLLOW_UP: list[Event] = [
    *TOOL_RUNNING,
    SteerState(id="q1", state=SteerStatus.QUEUED, text="skip the docs step"),
    SteerState(id="q2", state=SteerStatus.QUEUED, kind="follow_up", text="then open a pull request"),
]

# A sub-agent's events carry its own turn id and the task call's id as parent.
SUB = "t1.task_1"


def _sub(id: str, name: str, state: S, summary: str = "", **extra) -> ToolStateChanged:
    return ToolStateChanged(
        turn_id=SUB, tool_use_id=id, name=name, state=state, summary=summary,
        parent_tool_use_id="toolu_task", **extra,
    )


TASK = "task: review the parser for unsafe input handling"

SUBAGENT_RUNNING: list[Event] = [
    *_start("have a sub-agent review the parser"),
    *_text("I'll hand the review to a sub-agent."),
    _tool("toolu_task", "task", S.QUEUED, TASK),
    _tool("toolu_task", "task", S.RUNNING, TASK),
    TextDelta(turn_id=SUB, text="Reading the parser first.", parent_tool_use_id="toolu_task"),
    _sub("toolu_s1", "read_file", S.QUEUED, "read_file src/parser.py"),
    _sub("toolu_s1", "read_file", S.RUNNING, "read_file src/parser.py"),
    _sub("toolu_s1", "read_file", S.SUCCEEDED, "read_file src/parser.py", result="(212 lines)"),
    _sub("toolu_s2", "bash", S.QUEUED, "pytest tests/test_parser.py -q"),
    _sub("toolu_s2", "bash", S.RUNNING, "pytest tests/test_parser.py -q"),
    ToolOutput(turn_id=SUB, tool_use_id="toolu_s2", text="..........", parent_tool_use_id="toolu_task"),
]

SUBAGENT_INTERRUPTED: list[Event] = [
    *SUBAGENT_RUNNING,
    _sub("toolu_s3", "bash", S.QUEUED, "ruff check src/parser.py"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="1 tool call running"),
    _sub("toolu_s3", "bash", S.CANCELLED_BEFORE_START, "ruff check src/parser.py"),
    _sub(
        "toolu_s2", "bash", S.CANCELLED_WHILE_RUNNING, "pytest tests/test_parser.py -q",
        detail="SIGTERM, exit -15", signal="SIGTERM", exit_code=-15, result=INTERRUPTED,
    ),
    _tool(
        "toolu_task", "task", S.CANCELLED_WHILE_RUNNING, TASK,
        result="Interrupted by the user after it started; it may have partly run. "
        "Verify its effects before redoing it.",
    ),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="1 of 1 running tool calls ended"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLED, detail="1 cancelled_while_running"),
    TurnEnded(turn_id=TURN, status="cancelled"),
]


# ------------------------------------------------------------ a resumed session

def past_records() -> list:
    """Journal records of an earlier session: one turn cancelled mid-command, one
    completed (what ``--continue`` reads)."""
    from agent_tui.core.journal.records import (
        AssistantMessageRecord,
        ToolResultRecord,
        TurnEndedRecord,
        UserMessageRecord,
    )

    ts = 1_795_900_000.0  # fixed: the divider shows its time
    return [
        UserMessageRecord(turn_id="t1", text="run the test suite", ts=ts),
        AssistantMessageRecord(turn_id="t1", ended="tool_use", ts=ts, blocks=[
            {"type": "text", "text": "Running the tests."},
            {"type": "tool_use", "id": "toolu_p1", "name": "bash", "input": {"command": "pytest -q"}},
        ]),
        ToolResultRecord(turn_id="t1", tool_use_id="toolu_p1", name="bash", ts=ts,
                         state=S.CANCELLED_WHILE_RUNNING, content=INTERRUPTED, signal="SIGTERM"),
        TurnEndedRecord(turn_id="t1", status="cancelled", detail="1 cancelled_while_running", ts=ts),
        UserMessageRecord(turn_id="t2", text="only the parser tests, please", ts=ts + 60),
        AssistantMessageRecord(turn_id="t2", ended="tool_use", ts=ts + 60, blocks=[
            {"type": "tool_use", "id": "toolu_p2", "name": "bash",
             "input": {"command": "pytest tests/test_parser.py -q"}},
        ]),
        ToolResultRecord(turn_id="t2", tool_use_id="toolu_p2", name="bash", ts=ts + 61,
                         state=S.SUCCEEDED, content="12 passed", exit_code=0),
        AssistantMessageRecord(turn_id="t2", ended="end_turn", ts=ts + 62, blocks=[
            {"type": "text", "text": "All **12** parser tests pass."},
        ]),
        TurnEndedRecord(turn_id="t2", status="completed", ts=ts + 62),
    ]
