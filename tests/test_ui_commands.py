"""Slash commands: the menu ``/`` opens (filtered as you type, Tab / Enter complete,
Esc closes), the built-in commands taking effect (checked by the op the UI submits and
the events the fake session answers with), custom commands from Markdown files, the
command palette, and that no command line ever reaches the model as a message."""

from __future__ import annotations

import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.permissions import PermissionRules, Permissions  # noqa: E402
from agent_tui.protocol import (  # noqa: E402
    ClearConversation,
    Compact,
    Compaction,
    ConversationCleared,
    FollowUp,
    ListModels,
    ModelChanged,
    ModelInfoItem,
    Models,
    SetModel,
    SetThinking,
    Usage,
    UserMessage,
)
from agent_tui.protocol.states import CompactionState, CompactionTrigger  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.commands.builtin import BUILTIN, thinking_setting  # noqa: E402
from agent_tui.ui.commands.custom import expand, load_custom, split_front_matter  # noqa: E402
from agent_tui.ui.commands.registry import Commands, parse_command_line  # noqa: E402
from agent_tui.ui.screens.info import InfoScreen  # noqa: E402
from agent_tui.ui.screens.picker import PickerScreen  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

SIZE = (110, 34)


@pytest.fixture(autouse=True)
def no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's own commands and settings must not leak into these tests."""
    config = tmp_path / "config"
    config.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # ~/.claude/commands too
    return config


def _app(replies=None, **kw):
    make, made = fake_factory([], replies, **kw)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0), made


async def _type(pilot, text: str) -> None:
    await pilot.press(*[("space" if c == " " else c) for c in text])


def _menu(app) -> list[str]:
    return [item.value for item in app.suggestions.items] if app.suggestions.is_open else []


# ------------------------------------------------------------ parsing and files


def test_a_command_line_is_a_slash_and_a_name_and_a_path_is_not() -> None:
    assert parse_command_line("/model claude-opus-4-5") == ("model", "claude-opus-4-5") or \
        parse_command_line("/model claude-opus-4-5").args == "claude-opus-4-5"
    line = parse_command_line("  /compact keep the test names \n")
    assert (line.name, line.args) == ("compact", "keep the test names")
    assert parse_command_line("/etc/hosts is odd") is None
    assert parse_command_line("what does /clear do") is None
    assert parse_command_line("/git:log").name == "git:log"


def test_unknown_names_get_the_nearest_ones() -> None:
    commands = Commands(BUILTIN)
    assert commands.nearest("modle")[0] == "model"
    assert commands.nearest("comapct")[0] == "compact"
    assert commands.nearest("zzzz") == []


def test_custom_commands_from_the_four_folders_the_users_name_wins(tmp_path: Path, no_user_config: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".agent-tui" / "commands").mkdir(parents=True)
    (ws / ".claude" / "commands" / "git").mkdir(parents=True)
    (no_user_config / "agent-tui" / "commands").mkdir(parents=True)
    (ws / ".agent-tui" / "commands" / "review.md").write_text(
        "---\ndescription: Review for bugs\nargument-hint: [file]\nallowed-tools: bash\n---\n"
        "Review $ARGUMENTS for bugs.\n")
    (no_user_config / "agent-tui" / "commands" / "review.md").write_text("the user's review\n")
    (no_user_config / "agent-tui" / "commands" / "standup.md").write_text("# Write my standup\n\nFrom git log.\n")
    (ws / ".claude" / "commands" / "git" / "log.md").write_text("Summarize the git log")
    (ws / ".claude" / "commands" / "empty.md").write_text("---\ndescription: x\n---\n")
    (ws / ".claude" / "commands" / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    found, problems = load_custom(ws, no_user_config / "agent-tui")
    by_name = {c.name: c for c in found}
    (tmp_path / "home" / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / "home" / ".claude" / "commands" / "standup.md").write_text("not this one\n")
    (tmp_path / "home" / ".claude" / "commands" / "deploy.md").write_text("Deploy $1 now\n")
    found, problems = load_custom(ws, no_user_config / "agent-tui")
    by_name = {c.name: c for c in found}
    assert set(by_name) == {"review", "standup", "git:log", "deploy"}
    # the user's /review wins over the project's (a notice names both files)
    assert by_name["review"].description == "the user's review" and by_name["review"].scope == "user"
    assert by_name["standup"].description == "Write my standup" and by_name["standup"].scope == "user"
    assert by_name["git:log"].scope == "project:git" and by_name["git:log"].also == "log"
    assert by_name["deploy"].scope == "user" and by_name["deploy"].need.value == "required"
    assert len(problems) == 3 and any("empty prompt" in p for p in problems)
    assert any("/review is also your own command" in p for p in problems)
    assert expand(by_name["git:log"], "since monday") == (
        "Summarize the git log\n\nARGUMENTS: since monday")
    assert expand(by_name["deploy"], "web") == "Deploy web now\n\nARGUMENTS: web"


def test_front_matter_is_optional_and_an_unclosed_one_is_body() -> None:
    assert split_front_matter("plain") == ({}, "plain")
    assert split_front_matter("---\ndescription: a: b\n---\nbody") == ({"description": "a: b"}, "body")
    assert split_front_matter("---\nno end") == ({}, "---\nno end")


def test_thinking_takes_off_adaptive_or_a_budget() -> None:
    assert [thinking_setting(x) for x in ("off", "Adaptive", "2048", "100", "lots")] == \
        ["off", "adaptive", "2048", None, None]


# ------------------------------------------------------------ the menu


@pytest.mark.asyncio
async def test_slash_opens_the_menu_filters_and_closes_with_esc() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        assert _menu(app) == [c.name for c in BUILTIN]
        await _type(pilot, "co")
        await pilot.pause()
        assert _menu(app)[:2] == ["compact", "cost"]
        await _type(pilot, "xz")
        await pilot.pause()
        assert app.suggestions.is_open and _menu(app) == []
        assert "no command matches /coxz" in app.suggestions.empty_text
        await pilot.press("escape")
        await pilot.pause()
        assert not app.suggestions.is_open
        assert made[0].interrupts == 0 and not app.rewind_slot.is_open  # Esc only closed the menu
        assert app.prompt.text == "/coxz"


@pytest.mark.asyncio
async def test_enter_right_after_typing_takes_the_item_for_the_text_typed_not_an_older_one() -> None:
    # Typed fast (a paste, tmux), the last keys' Changed messages still queue behind
    # Enter: the menu still shows the items for "/" when Enter comes.
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        assert _menu(app)[0] != "cost"
        app.prompt.insert("cost")
        assert app.prompt.completer.key("enter")  # before the Changed message is handled
        await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="the /cost page")
        assert "cost" in app.screen.title_text.lower()
        assert not any(isinstance(op, (Compact, ClearConversation, UserMessage)) for op in made[0].ops)


@pytest.mark.asyncio
async def test_tab_completes_and_enter_runs_a_command_that_needs_nothing_more() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/comp")
        await pilot.press("tab")
        await pilot.pause()
        assert app.prompt.text == "/compact " and not app.suggestions.is_open
        await _type(pilot, "keep the API notes")
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops == [Compact(instructions="keep the API notes")]
        await _type(pilot, "/cl")
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops[-1] == ClearConversation()
        assert app.prompt.text == ""
        # ↓ moves in the menu (not in the input's history).
        await _type(pilot, "/th")
        await pilot.pause()
        assert _menu(app)[0] == "thinking"
        await pilot.press("enter")  # it needs a setting: completed, not run
        await pilot.pause()
        assert app.prompt.text == "/thinking "
        await _type(pilot, "4096")
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops[-1] == SetThinking(thinking="4096")
        assert not any(isinstance(op, UserMessage) for op in made[0].ops)


@pytest.mark.asyncio
async def test_an_unknown_command_is_reported_with_the_nearest_and_stays_in_the_input() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/modle opus")
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops == []
        assert "unknown command /modle: did you mean /model" in app.status.plain()
        assert app.prompt.text == "/modle opus"
        app.prompt.text = "/etc/hosts looks wrong"
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops == [UserMessage(text="/etc/hosts looks wrong")]


# ------------------------------------------------------------ commands taking effect


@pytest.mark.asyncio
async def test_clear_starts_a_new_conversation_on_screen() -> None:
    app, made = _app({ClearConversation: [ConversationCleared()]})
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/clear")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "new conversation" in app.transcript.plain_text(), what="divider")
        assert made[0].ops == [ClearConversation()]


@pytest.mark.asyncio
async def test_compact_shows_started_then_the_tokens_before_and_after() -> None:
    def reply(op):
        return [Compaction(state=CompactionState.STARTED, trigger=CompactionTrigger.MANUAL),
                Compaction(state=CompactionState.COMPLETED, trigger=CompactionTrigger.MANUAL,
                           tokens_before=152_000, tokens_after=12_400)]

    app, made = _app({Compact: reply})
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/compact")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "152k → 12k tokens" in app.transcript.plain_text(), what="compacted")
        text = app.transcript.plain_text()
        assert "⟳ compacting the conversation (/compact)" in text
        assert made[0].ops == [Compact(instructions="")]


@pytest.mark.asyncio
async def test_a_failed_compaction_says_the_conversation_is_unchanged() -> None:
    app, _ = _app({Compact: [Compaction(state=CompactionState.FAILED, detail="overloaded")]})
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/compact")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "compaction failed" in app.transcript.plain_text(), what="failed")
        assert "the conversation is as it was · overloaded" in app.transcript.plain_text()


MODELS = Models(current="claude-sonnet-4-5", models=[
    ModelInfoItem(id="claude-sonnet-4-5", display_name="Claude Sonnet 4.5", context_window=200_000),
    ModelInfoItem(id="claude-opus-4-5", display_name="Claude Opus 4.5", context_window=200_000),
    ModelInfoItem(id="claude-haiku-4-5", display_name="Claude Haiku 4.5", context_window=200_000),
])


def _model_changed(op):
    return [ModelChanged(model=op.model, context_window=200_000)]


@pytest.mark.asyncio
async def test_model_with_a_name_sets_it_and_the_status_line_shows_it() -> None:
    app, made = _app({SetModel: _model_changed})
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/model claude-opus-4-5")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "claude-opus-4-5" in app.status.plain(), what="model shown")
        assert made[0].ops == [SetModel(model="claude-opus-4-5")]


@pytest.mark.asyncio
async def test_model_without_a_name_lists_the_models_and_the_pick_is_set() -> None:
    app, made = _app({ListModels: [MODELS], SetModel: _model_changed})
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/model")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), what="picker")
        await pilot.press("o", "p", "u", "s", "enter")
        await wait_until(pilot, lambda: any(isinstance(op, SetModel) for op in made[0].ops), what="set")
        assert made[0].ops == [ListModels(), SetModel(model="claude-opus-4-5")]
        await wait_until(pilot, lambda: "claude-opus-4-5" in app.status.plain(), what="model shown")


@pytest.mark.asyncio
async def test_cost_shows_each_turn_with_interrupted_requests_apart() -> None:
    events = [
        Usage(turn_id="t1", model="m", input_tokens=1200, output_tokens=300, cost_usd=0.02, context_window=200_000),
        Usage(turn_id="t1", model="m", input_tokens=1500, output_tokens=100, cost_usd=0.01),
        Usage(turn_id="t2", model="m", input_tokens=2000, output_tokens=40, interrupted=True, cost_usd=0.015),
    ]
    make, _ = fake_factory(events)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert "context 2.0k/200k 1%" in app.status.plain()  # the last request's input
        assert "$0.04" in app.status.plain()
        await _type(pilot, "/cost")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="page")
        page = app.screen.plain()
        assert "session: 3 request(s)" in page
        assert "of which interrupted (billed too): 1 request(s): 2.0k in, 40 out" in page
        assert "t1     2 request(s): 2.7k in, 400 out" in page
        assert "t2     no finished request" in page


@pytest.mark.asyncio
async def test_an_unknown_price_is_said_never_summed() -> None:
    events = [Usage(turn_id="t1", model="m", input_tokens=10, output_tokens=5, cost_usd=0.5),
              Usage(turn_id="t1", model="other", input_tokens=10, output_tokens=5, cost_usd=None)]
    make, _ = fake_factory(events)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert "unknown price" in app.status.plain() and "$0.50" not in app.status.plain()


@pytest.mark.asyncio
async def test_permissions_lists_each_rule_with_where_it_came_from(tmp_path: Path, no_user_config: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".agent-tui").mkdir(parents=True)
    (ws / ".agent-tui" / "settings.json").write_text(
        '{"permissions": {"deny": ["bash(rm -rf:*)"], "defaultMode": "accept-edits"}}')
    (no_user_config / "agent-tui").mkdir()
    (no_user_config / "agent-tui" / "settings.json").write_text('{"permissions": {"allow": ["bash(git status:*)"]}}')
    rules = PermissionRules(allow=["bash(git status:*)", "read_file"], deny=["bash(rm -rf:*)"])
    policy = Permissions(ws, "accept-edits", rules)
    app, _ = _app(workspace=ws, policy=policy)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _type(pilot, "/permissions")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="page")
        page = app.screen.plain()
        # a project's file is named from the workspace
        assert "mode: accept-edits  (from .agent-tui/settings.json)" in page
        # in Claude Code's names, whichever spelling the files used
        assert "deny     Bash(rm -rf:*)   .agent-tui/settings.json\n" in page
        assert f"allow    Bash(git status:*)   {no_user_config / 'agent-tui' / 'settings.json'}" in page
        assert "allow    Read   command line" in page


@pytest.mark.asyncio
async def test_mcp_lists_servers_and_their_state(tmp_path: Path) -> None:
    from agent_tui.mcp.manager import load_mcp

    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"tickets": {"command": "tickets-server"}}}')
    manager = load_mcp(tmp_path, user_config_dir=tmp_path / "user", log_dir=tmp_path / "logs")
    app, _ = _app(background=[manager])
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _type(pilot, "/mcp")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), what="the servers")
        await _type(pilot, "details")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), what="page")
        page = app.screen.plain()
        assert "tickets  not_started" in page and "tickets-server" in page
        assert f"from {tmp_path / '.mcp.json'}" in page


# ------------------------------------------------------------ custom commands and the palette


@pytest.mark.asyncio
async def test_a_custom_command_is_sent_as_its_prompt_with_the_arguments(tmp_path: Path) -> None:
    (tmp_path / ".agent-tui" / "commands").mkdir(parents=True)
    (tmp_path / ".agent-tui" / "commands" / "review.md").write_text(
        "---\ndescription: Review a file for bugs\n---\nReview $ARGUMENTS for bugs.")
    app, made = _app(workspace=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _type(pilot, "/rev")
        await pilot.pause()
        assert _menu(app)[0] == "review"  # the best match first
        assert "Review a file for bugs" in app.suggestions.items[0].prompt.plain
        await pilot.press("enter")  # it takes arguments: completed
        await _type(pilot, "src/app.py")
        await pilot.press("ctrl+f")  # as a follow-up
        await pilot.pause()
        assert made[0].ops == [FollowUp(text="Review src/app.py for bugs.")]


@pytest.mark.asyncio
async def test_the_palette_offers_the_same_commands() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for command in BUILTIN:
            assert command.usage in titles
        palette_clear = next(c for c in app.get_system_commands(app.screen) if c.title == "/clear")
        palette_clear.callback()
        await pilot.pause()
        assert made[0].ops == [ClearConversation()]


class _Saved:
    def __init__(self, id: str, first: str) -> None:
        self.id, self.first_message, self.workspace = id, first, "/home/dev/demo"
        self.updated, self.last_status = 1_767_000_000.0, "completed"


class _Directory:
    """Saved sessions for /resume: opening one makes a fake session that remembers
    which id it was opened for."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.made: list = []

    def saved_sessions(self):
        return [_Saved("s-new", "fix the parser"), _Saved("s-old", "write the docs")]

    def session_maker(self, session_id: str):
        from agent_tui.core.journal.records import UserMessageRecord

        def make(emit):
            self.opened.append(session_id)
            session_make, made = fake_factory([])
            session = session_make(emit)
            session.past_records = lambda: [UserMessageRecord(turn_id="t1", text=f"hello from {session_id}")]
            self.made.append(session)
            return session

        return make


@pytest.mark.asyncio
async def test_resume_picks_a_saved_session_and_the_app_switches_to_it() -> None:
    directory = _Directory()
    make, made = fake_factory([])
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0, sessions=directory)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        app.transcript.add_user("a message of the first session")
        await _type(pilot, "/resume")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), what="picker")
        await _type(pilot, "docs")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "hello from s-old" in app.transcript.plain_text(), what="switched")
        assert directory.opened == ["s-old"]
        assert "a message of the first session" not in app.transcript.plain_text()
        assert any(type(op).__name__ == "Shutdown" for op in made[0].ops)  # the first one was closed
        await _type(pilot, "go on")
        await pilot.press("enter")
        await wait_until(pilot, lambda: directory.made[0].ops, what="op to the new session")
        assert directory.made[0].ops == [UserMessage(text="go on")]


def test_a_resumed_sessions_usage_records_count_in_the_totals() -> None:
    from types import SimpleNamespace

    from agent_tui.ui.render.usage import UsageTally, money

    records = [
        SimpleNamespace(kind="usage", turn_id="t1", model="m", input_tokens=1000, output_tokens=10,
                        cache_read_input_tokens=0, cache_creation_input_tokens=0, interrupted=False,
                        purpose="turn", cost_usd=0.25, context_window=200_000, parent_tool_use_id=None),
        SimpleNamespace(kind="user_message", turn_id="t2", text="hello"),
        SimpleNamespace(kind="usage", turn_id="t2", model="m", input_tokens=3000, output_tokens=20,
                        cache_read_input_tokens=0, cache_creation_input_tokens=0, interrupted=True,
                        purpose="turn", cost_usd=0.5, context_window=200_000, parent_tool_use_id=None),
    ]
    tally = UsageTally()
    assert tally.add_records(records) == 2
    assert tally.total().requests == 2 and money(tally.total()) == "$0.75"
    assert tally.interrupted().requests == 1
    assert tally.context is not None and tally.context.used == 3000


@pytest.mark.asyncio
async def test_resume_never_offers_the_session_that_is_open() -> None:
    directory = _Directory()
    make, made = fake_factory([])

    def this_one(emit):
        session = make(emit)
        session.session_id = "s-new"  # the store lists this session too: it is open here
        return session

    app = AgentApp(this_one, cursor_blink=False, clock=lambda: 0.0, sessions=directory)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await _type(pilot, "/resume")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), what="picker")
        assert [item.id for item in app.screen.items] == ["s-old"]
