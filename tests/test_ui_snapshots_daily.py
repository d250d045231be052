"""Snapshots of the daily-use states: the command menu (all, filtered, no match),
the model picker, the /cost page, a compaction and a new conversation in the
transcript, and the status line's context meter, tokens and cost.

Review changes in snapshot_report.html, then ``pytest --snapshot-update``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import (  # noqa: E402
    Compaction,
    ConversationCleared,
    ListModels,
    ModelChanged,
    ModelInfoItem,
    Models,
    PermissionRequested,
    SteerState,
    TextDelta,
    ThinkingDelta,
    ToolStateChanged,
    TurnEnded,
    TurnStarted,
    TurnStateChanged,
    Usage,
)
from agent_tui.protocol.states import (  # noqa: E402
    CompactionState,
    CompactionTrigger,
    RequestPurpose,
    SteerStatus,
    TurnState,
)
from agent_tui.protocol.states import ToolState as S  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

WIDE = (110, 32)


@pytest.fixture(autouse=True)
def quiet_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.claude/commands of the machine


def _app(events, replies=None, workspace: Path | None = None, badges: list[str] | None = None) -> AgentApp:
    make, _ = fake_factory(events, replies, workspace=workspace, badges=badges)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0)


def _typed(events, keys: list[str]):
    async def run_before(pilot) -> None:
        await settle(pilot, pilot.app, len(events))
        await pilot.press(*keys)
        await pilot.pause()
        await settle(pilot, pilot.app, len(events))

    return run_before


def _turn(turn_id: str, text: str, answer: str) -> list:
    return [TurnStarted(turn_id=turn_id, text=text), TurnStateChanged(turn_id=turn_id, state=TurnState.RUNNING),
            TextDelta(turn_id=turn_id, text=answer), TurnEnded(turn_id=turn_id, status="completed")]


class TestCommandMenu:
    def test_slash_lists_every_command(self, snap_compare, tmp_path: Path) -> None:
        assert snap_compare(_app([], workspace=tmp_path), terminal_size=WIDE, run_before=_typed([], ["slash"]))

    def test_typing_filters_the_menu(self, snap_compare, tmp_path: Path) -> None:
        (tmp_path / ".agent-tui" / "commands").mkdir(parents=True)
        (tmp_path / ".agent-tui" / "commands" / "commit.md").write_text(
            "---\ndescription: Write the commit message for the staged change\n---\nWrite it.")
        assert snap_compare(_app([], workspace=tmp_path), terminal_size=WIDE,
                            run_before=_typed([], ["slash", "c", "o"]))

    def test_claude_code_commands_show_their_hint_description_and_scope(
        self, snap_compare, tmp_path: Path
    ) -> None:
        fixtures = Path(__file__).parent / "claude_commands_fixtures"
        shutil.copytree(fixtures / "project" / ".claude", tmp_path / ".claude")
        for bad in ("broken.md", "unclosed.md"):  # their notices name a temporary path
            (tmp_path / ".claude" / "commands" / bad).unlink()
        shutil.copytree(fixtures / "home", tmp_path / "home")
        assert snap_compare(_app([], workspace=tmp_path), terminal_size=WIDE,
                            run_before=_typed([], ["slash", "c", "o"]))

    def test_no_command_matches(self, snap_compare, tmp_path: Path) -> None:
        assert snap_compare(_app([], workspace=tmp_path), terminal_size=WIDE,
                            run_before=_typed([], ["slash", "x", "y", "z"]))


MODELS = Models(current="claude-sonnet-4-5", models=[
    ModelInfoItem(id="claude-sonnet-4-5", display_name="Claude Sonnet 4.5", context_window=200_000),
    ModelInfoItem(id="claude-opus-4-5", display_name="Claude Opus 4.5", context_window=200_000),
    ModelInfoItem(id="claude-haiku-4-5", display_name="Claude Haiku 4.5", context_window=200_000),
])


def test_model_picker(snap_compare, tmp_path: Path) -> None:
    app = _app([], {ListModels: [MODELS]}, workspace=tmp_path)

    async def run_before(pilot) -> None:
        await settle(pilot, app, 0)
        await pilot.press("slash", "m", "o", "d", "e", "l", "enter")
        await wait_until(pilot, lambda: app.model_slot.is_open, what="picker")
        await pilot.pause()

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


USAGE = [
    *_turn("t1", "read the parser", "The parser reads tokens one at a time."),
    Usage(turn_id="t1", model="claude-sonnet-4-5", input_tokens=18_200, output_tokens=640,
          cache_read_input_tokens=12_000, cost_usd=0.0712, context_window=200_000),
    *_turn("t2", "now fix the bug", "Fixed."),
    Usage(turn_id="t2", model="claude-sonnet-4-5", input_tokens=3_100, output_tokens=210,
          cache_read_input_tokens=30_100, interrupted=True, cost_usd=0.0214, context_window=200_000),
    ModelChanged(model="claude-sonnet-4-5", thinking="adaptive", context_window=200_000),
]


def test_cost_page_per_turn_with_interrupted_apart(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(_app(USAGE, workspace=tmp_path), terminal_size=WIDE,
                        run_before=_typed(USAGE, ["slash", "c", "o", "s", "t", "enter"]))


SEARCHED = [
    *USAGE[:2],
    Usage(turn_id="t1", model="claude-sonnet-4-5", input_tokens=420, output_tokens=96,
          web_search_requests=1, purpose=RequestPurpose.WEB_SEARCH, cost_usd=0.011700,
          parent_tool_use_id="toolu_s"),
    *USAGE[2:],
]


def test_cost_page_counts_web_searches(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(_app(SEARCHED, workspace=tmp_path), terminal_size=WIDE,
                        run_before=_typed(SEARCHED, ["slash", "c", "o", "s", "t", "enter"]))


def test_the_status_line_says_the_sandbox_is_on(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot) -> None:
        await settle(pilot, pilot.app, len(USAGE))
        await wait_until(pilot, lambda: "⛨ sandbox" in pilot.app.status.plain(), what="the badge")

    assert snap_compare(_app(USAGE, workspace=tmp_path, badges=["sandbox"]), terminal_size=WIDE,
                        run_before=run_before)


COMPACTED = [
    *USAGE,
    Compaction(state=CompactionState.STARTED, trigger=CompactionTrigger.AUTO),
    Compaction(state=CompactionState.COMPLETED, trigger=CompactionTrigger.AUTO,
               tokens_before=186_000, tokens_after=14_200),
    Compaction(state=CompactionState.STARTED, trigger=CompactionTrigger.MANUAL),
    Compaction(state=CompactionState.CANCELLED, trigger=CompactionTrigger.MANUAL, detail="interrupted"),
    ConversationCleared(),
]


def test_compaction_dividers_and_a_new_conversation(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(_app(COMPACTED, workspace=tmp_path), terminal_size=WIDE, run_before=_typed(COMPACTED, []))


def _files(root: Path) -> Path:
    (root / "src" / "ui").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / "src" / "ui" / "widgets.py").write_text("class Button: ...\n")
    (root / "src" / "apply.py").write_text("")
    (root / "docs").mkdir()
    (root / "docs" / "api.md").write_text("")
    return root


class TestFilePicker:
    def test_at_filters_the_workspace_files(self, snap_compare, tmp_path: Path) -> None:
        ws = _files(tmp_path / "ws")
        app = _app([], workspace=ws)

        async def run_before(pilot) -> None:
            await settle(pilot, app, 0)
            await pilot.press("e", "x", "p", "l", "a", "i", "n", "space", "@", "a", "p")
            await wait_until(pilot, lambda: app.files.index.complete and [i.value for i in app.suggestions.items]
                             == ["src/app.py", "docs/api.md", "src/apply.py"], what="results")
            await pilot.pause()

        assert snap_compare(app, terminal_size=WIDE, run_before=run_before)

    def test_a_chosen_file_is_a_chip_and_folds_in_the_transcript(self, snap_compare, tmp_path: Path) -> None:
        ws = _files(tmp_path / "ws")
        sent = [TurnStarted(turn_id="t1", text='explain @src/app.py\n\n<file path="src/app.py">\n'
                                                'def main():\n    return 42\n</file>')]
        app = _app(sent, workspace=ws)

        async def run_before(pilot) -> None:
            await settle(pilot, app, len(sent))
            await pilot.press("@", "w", "i", "d", "g")
            await wait_until(pilot, lambda: [i.value for i in app.suggestions.items][:1] == ["src/ui/widgets.py"],
                             what="results")
            await pilot.press("enter")
            await settle(pilot, app, len(sent))

        assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


# ------------------------------------------------------------ diffs

OLD_SRC = "".join(f"    step_{i}()\n" for i in range(1, 25))
NEW_SRC = OLD_SRC.replace("    step_4()\n", "    step_4(verbose=True)\n").replace(
    "    step_11()\n", "    step_11(retries=3)\n").replace(
    "    step_18()\n", "    step_18()\n    log('done')\n")


def _edit_events(state: S) -> list:
    edit = {"path": "src/app.py", "old_string": "def run():\n" + OLD_SRC, "new_string": "def run():\n" + NEW_SRC}

    def call(st: S, **extra) -> ToolStateChanged:
        return ToolStateChanged(turn_id="t1", tool_use_id="toolu_e", name="edit_file", state=st,
                                summary="edit_file src/app.py", input=edit, **extra)

    events = [*_turn("t1", "make step 4 verbose and log the end", "Editing.")[:3],
              call(S.QUEUED), call(S.RUNNING)]
    if state is S.SUCCEEDED:
        events.append(call(S.SUCCEEDED, result="Edited src/app.py: replaced 25 line(s) with 26 line(s) at line 1"))
    return events


class TestDiffs:
    def test_a_long_diff_folds_to_its_summary(self, snap_compare, tmp_path: Path) -> None:
        events = _edit_events(S.SUCCEEDED)
        assert snap_compare(_app(events, workspace=tmp_path), terminal_size=WIDE, run_before=_typed(events, []))

    def test_unfolded_every_line_has_its_symbol(self, snap_compare, tmp_path: Path) -> None:
        events = _edit_events(S.SUCCEEDED)
        assert snap_compare(_app(events, workspace=tmp_path), terminal_size=(110, 44),
                            run_before=_typed(events, ["ctrl+o"]))

    def test_the_permission_prompt_shows_the_diff(self, snap_compare, tmp_path: Path) -> None:
        (tmp_path / "config.toml").write_text('[server]\nport = 80\ndebug = false\nworkers = 2\n')
        content = '[server]\nport = 8080\ndebug = false\nworkers = 4\n'
        ask = {"path": "config.toml", "content": content}
        events = [*_turn("t1", "use port 8080 and 4 workers", "Updating the config.")[:3],
                  ToolStateChanged(turn_id="t1", tool_use_id="toolu_w", name="write_file", state=S.AWAITING_APPROVAL,
                                   summary="write_file config.toml (4 lines)", input=ask),
                  PermissionRequested(turn_id="t1", tool_use_id="toolu_w", name="write_file",
                                      summary="write_file config.toml (4 lines)", input=ask,
                                      reason="ask mode: file writes need approval")]
        assert snap_compare(_app(events, workspace=tmp_path), terminal_size=WIDE, run_before=_typed(events, []))


# ------------------------------------------------------------ queue editing

QUEUE = [
    *_turn("t1", "run the build", "Building.")[:3],
    SteerState(id="q1", state=SteerStatus.QUEUED, text="also run the linter"),
    SteerState(id="q2", state=SteerStatus.QUEUED, kind="follow_up", text="then write a summary"),
    SteerState(id="q3", state=SteerStatus.QUEUED, text="and keep the logs"),
    SteerState(id="q3", state=SteerStatus.APPLIED, text="and keep the logs"),
]


class TestQueueEditing:
    def test_a_queued_item_selected(self, snap_compare, tmp_path: Path) -> None:
        assert snap_compare(_app(QUEUE, workspace=tmp_path), terminal_size=WIDE,
                            run_before=_typed(QUEUE, ["alt+up", "up"]))

    def test_editing_a_queued_item(self, snap_compare, tmp_path: Path) -> None:
        assert snap_compare(_app(QUEUE, workspace=tmp_path), terminal_size=WIDE,
                            run_before=_typed(QUEUE, ["alt+up", "up", "e", "space", "t", "o", "o"]))


# ------------------------------------------------------------ thinking

THOUGHT = ("The user wants the flaky test fixed.\nIt times out on a loaded machine: the wait is "
           "fixed at 2 s.\nBetter: wait on the event, with a generous bound.\nRead tests/test_sync.py first.")
THINKING = [
    TurnStarted(turn_id="t1", text="fix the flaky sync test"),
    TurnStateChanged(turn_id="t1", state=TurnState.RUNNING),
    *[ThinkingDelta(turn_id="t1", text=THOUGHT[i:i + 11]) for i in range(0, len(THOUGHT), 11)],
    TextDelta(turn_id="t1", text="I'll make the test wait on the event instead of a fixed sleep."),
]


class TestThinking:
    def test_thinking_is_folded_to_one_dim_line(self, snap_compare, tmp_path: Path) -> None:
        assert snap_compare(_app(THINKING, workspace=tmp_path), terminal_size=WIDE, run_before=_typed(THINKING, []))

    def test_ctrl_o_unfolds_the_thinking(self, snap_compare, tmp_path: Path) -> None:
        assert snap_compare(_app(THINKING, workspace=tmp_path), terminal_size=WIDE,
                            run_before=_typed(THINKING, ["ctrl+o"]))
