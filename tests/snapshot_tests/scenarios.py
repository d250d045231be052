"""Fixed event lists, one per snapshot scenario, played by ``support.FakeSession``.

Ids and texts are fixed so that snapshots never move between runs.
"""

from __future__ import annotations

from agent_tui.core.events import (
    Event,
    PermissionRequested,
    SteerState,
    SteerStatus,
    TextDelta,
    ToolOutput,
    ToolStateChanged,
    TurnEnded,
    TurnStarted,
    TurnStateChanged,
)
from agent_tui.core.state import ToolState as S
from agent_tui.core.state import TurnState as T

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
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="stopping: 1 tool call running"),
    _tool("toolu_d", "bash", S.CANCELLED_BEFORE_START, "make upload"),
    _tool(
        "toolu_c", "bash", S.CANCELLED_WHILE_RUNNING, "make build",
        detail="SIGTERM, exit -15", signal="SIGTERM", exit_code=-15,
    ),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="stopping: 1 of 1 running tool calls ended"),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLED, detail=MIXED_DETAIL),
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
    TurnStateChanged(turn_id=TURN, state=T.CANCELLING, detail="stopping: 1 tool call running"),
    SteerState(id="q1", state=SteerStatus.RETURNED, text="use the release profile"),
    _tool("toolu_1", "bash", S.CANCELLED_WHILE_RUNNING, BUILD, signal="SIGTERM", exit_code=-15),
    TurnStateChanged(turn_id=TURN, state=T.CANCELLED, detail="1 cancelled_while_running"),
    TurnEnded(turn_id=TURN, status="cancelled"),
]
