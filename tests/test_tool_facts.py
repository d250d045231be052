"""A tool carries its own facts (core/calls/tool.py): a tool defined here, in one class
and one registration line, is named, hooked, ruled, planned, asked about and shown the
way it says, with no table elsewhere to edit. The built-in tools are all in the catalog,
and a question about a tool's name fails loudly, never as "no such tool", when nothing
loaded the catalog."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_tui.acp.updates import tool_kind, tool_locations, tool_title
from agent_tui.core.calls.agent_types import AgentScope, AgentType
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult, ToolSet, register_tool
from agent_tui.hooks.matchers import Matcher
from agent_tui.files.preview import preview
from agent_tui.hooks.payloads import tool_fields, tool_response
from agent_tui.permissions import PermissionRules, Permissions
from agent_tui.protocol import PermissionMode, PermissionRequested, UserMessage, Verdict
from agent_tui.protocol import tool_names
from agent_tui.protocol.tool_names import (
    FileAccess,
    FileChange,
    HookResponse,
    ResultShown,
    RuleSubject,
    claude_name,
    known_tool,
    our_input,
    our_name,
    runs_command,
)
from agent_tui.tools.background import BackgroundJobs
from agent_tui.tools.catalog import BUILT_IN
from agent_tui.tools.registry import default_tools
from agent_tui.tools.skills import Skill, Skills
from agent_tui.tools.skills.catalog import SkillScope
from agent_tui.settings.local_rules import lasting_rules
from agent_tui.ui.screens.approval_choices import choices_for
from agent_tui.ui.render.diffs import diff_for_call, shows_diff
from agent_tui.ui.render.states import shows_headline
from agent_tui.ui.screens.call_preview import body, title
from agent_tui.ui.widgets.read_fold import ReadRun
from agent_tui.ui.widgets.transcript_blocks import ToolBlock
from tests.fake_api import Reply
from tests.harness import provider_for, start_session

ROOT = Path(__file__).resolve().parents[1]


class StampInput(BaseModel):
    path: str
    note: str = ""
    content: str = ""
    line: int = 0


class StampTool(Tool[StampInput]):
    name = "stamp_file"
    claude_name = "Stamp"
    claude_aliases = ("Stamper",)
    claude_keys = {"path": "file_path"}
    file_access = FileAccess.EDITS
    family_rule = True
    rule_subject = RuleSubject.PATH
    prompt_title = "Stamp file"
    acp_kind = "edit"
    file_key, line_key = "path", "line"
    file_change = FileChange.WRITE
    hook_response = HookResponse.FILE_EDIT
    result_shown = ResultShown.HEADLINE
    description = "Stamp a note on a file."
    Input = StampInput

    def plan_refusal(self) -> str:
        return "a stamp changes the file it lands on"

    def summary(self, args: StampInput) -> str:
        return f"Stamp {args.path} with {args.note!r}"

    async def run(self, args: StampInput, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(f"stamped {args.path}")


class PeekInput(BaseModel):
    note: str


class PeekTool(Tool[PeekInput]):
    name = "peek_note"
    claude_name = "Peek"
    plans = True
    asks_because = "reads a note aloud"
    acp_kind = "read"
    folds_as = ("peeked at", "note", "notes")
    rule_subject = RuleSubject.NAME
    names_key = "note"
    starts_agents = True
    description = "Peek at a note."
    Input = PeekInput

    async def run(self, args: PeekInput, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(args.note)


class ChantInput(BaseModel):
    command: str


class ChantTool(Tool[ChantInput]):
    name = "chant"
    claude_name = "Chant"
    rule_subject = RuleSubject.COMMAND
    description = "Chant a command line."
    Input = ChantInput

    async def run(self, args: ChantInput, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(args.command)


NEW_TOOLS: tuple[type[Tool], ...] = (StampTool, PeekTool, ChantTool)


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    """The registration line a new tool needs (``tools/catalog.py`` holds the built-in
    ones'); forgotten after each test, so the rest of the suite never sees these."""
    for tool in NEW_TOOLS:
        register_tool(tool)
    yield
    for tool in NEW_TOOLS:
        tool_names.forget(tool.name)


def _ruling(tool: Tool, raw: dict, workspace: Path, mode: PermissionMode,
            rules: PermissionRules | None = None):
    return Permissions(workspace, mode, rules).check(tool, tool.parse(raw))


def test_a_new_tool_is_ruled_and_hooked_by_its_claude_code_names_and_subject(tmp_path):
    assert claude_name("stamp_file") == "Stamp" and known_tool("Stamp")
    assert our_name("Stamp") == our_name("Stamper") == our_name("stamp_file") == "stamp_file"
    denied = _ruling(StampTool(), {"path": "a.txt"}, tmp_path, PermissionMode.ASK,
                     PermissionRules(deny=["Stamper"]))
    assert denied.verdict is Verdict.DENY
    allowed = _ruling(PeekTool(), {"note": "x"}, tmp_path, PermissionMode.ASK,
                      PermissionRules(allow=["Peek"]))
    assert allowed.verdict is Verdict.ALLOW
    for rules in (PermissionRules(deny=["Stamp(secret/**)"]), PermissionRules(deny=["Edit(secret/**)"])):
        assert _ruling(StampTool(), {"path": "secret/a"}, tmp_path, PermissionMode.ACCEPT_EDITS,
                       rules).verdict is Verdict.DENY
        assert _ruling(StampTool(), {"path": "open/a"}, tmp_path, PermissionMode.ACCEPT_EDITS,
                       rules).verdict is Verdict.ALLOW
    named = PermissionRules(allow=["Peek(hello)"], ask=["Peek(bye)"])
    assert _ruling(PeekTool(), {"note": "hello"}, tmp_path, PermissionMode.ASK,
                   named).verdict is Verdict.ALLOW
    assert _ruling(PeekTool(), {"note": "bye"}, tmp_path, PermissionMode.ASK,
                   named).verdict is Verdict.ASK
    # it starts sub-agents: unasked without a rule, as Claude Code's Task (their calls are checked)
    unnamed = _ruling(PeekTool(), {"note": "other"}, tmp_path, PermissionMode.ASK, named)
    assert unnamed.verdict is Verdict.ALLOW and "sub-agent" in unnamed.reason
    assert Matcher.parse("Stamp").matches("stamp_file")
    assert Matcher.parse("Sta.p|Write").matches("stamp_file")
    assert not Matcher.parse("Peek").matches("stamp_file")
    fields = tool_fields("stamp_file", {"path": "a.txt", "note": "ok"}, str(tmp_path))
    assert fields == {"tool_name": "Stamp",
                      "tool_input": {"file_path": str(tmp_path / "a.txt"), "note": "ok"}}
    assert our_input("stamp_file", fields["tool_input"]) == {"path": str(tmp_path / "a.txt"),
                                                             "note": "ok"}


def test_a_new_tool_s_plan_mode_verdict_and_permission_wording_are_its_own(tmp_path):
    refused = _ruling(StampTool(), {"path": "a.txt"}, tmp_path, PermissionMode.PLAN)
    assert refused.verdict is Verdict.DENY
    assert "plan mode" in refused.reason and "a stamp changes the file it lands on" in refused.reason
    planning = _ruling(PeekTool(), {"note": "x"}, tmp_path, PermissionMode.PLAN)
    assert planning.verdict is Verdict.ASK and planning.reason == "Peek reads a note aloud"
    asked = _ruling(StampTool(), {"path": "a.txt"}, tmp_path, PermissionMode.ASK)
    assert asked.verdict is Verdict.ASK and asked.reason == "Stamp writes files"
    edits = _ruling(StampTool(), {"path": "a.txt"}, tmp_path, PermissionMode.ACCEPT_EDITS)
    assert edits.verdict is Verdict.ALLOW
    assert title("stamp_file") == "Stamp file" and title("peek_note") == "Tool Peek"


def _asked(name: str, tool_input: dict) -> PermissionRequested:
    return PermissionRequested(turn_id="t1", tool_use_id="toolu_1", name=name, summary="",
                               input=tool_input, rule="mode:ask")


def test_the_prompt_offers_a_new_tool_the_answers_its_facts_call_for():
    assert lasting_rules("chant", {"command": "make test"}) == [
        rule.replace("Bash", "Chant") for rule in lasting_rules("bash", {"command": "make test"})]
    second = choices_for(_asked("chant", {"command": "make test"}))[1]
    assert second.label == "Yes, and don't ask again for: make test *"
    assert second.rules == ("Chant(make test *)",)
    assert "allow all edits" in choices_for(_asked("stamp_file", {"path": "a"}))[1].label
    assert body("chant", {"command": "make test"}, {}).plain == "make test"


def test_a_new_tool_is_shown_by_its_kind_summary_and_fold(tmp_path):
    assert tool_kind("stamp_file") == "edit" and tool_kind("peek_note") == "read"
    tools = ToolSet([StampTool(), PeekTool()])
    assert tool_title(tools, "stamp_file", {"path": "a.txt", "note": "ok"}) == "Stamp a.txt with 'ok'"
    blocks = [ToolBlock(f"toolu_{n}", "peek_note") for n in range(3)]
    assert ReadRun(blocks).words() == "Peeked at 3 notes"


def test_a_new_tool_s_file_change_location_hook_response_and_result_are_its_own(tmp_path):
    call = {"path": "a.txt", "content": "stamped\n", "line": 3}
    assert preview("stamp_file", call, tmp_path) == (str(tmp_path / "a.txt"), None, "stamped\n")
    diff = diff_for_call("stamp_file", call, tmp_path)
    assert shows_diff("stamp_file") and diff is not None and diff.new_file and diff.added == 1
    assert not shows_diff("peek_note") and preview("peek_note", {"path": "a.txt"}, tmp_path) is None
    [where] = tool_locations("stamp_file", call, tmp_path)
    assert (where.path, where.line) == (str(tmp_path / "a.txt"), 3)
    assert tool_locations("peek_note", {"note": "a.txt"}, tmp_path) == []
    given = tool_fields("stamp_file", call, str(tmp_path))["tool_input"]
    shaped = tool_response("stamp_file", given, {"content": "stamped a.txt", "is_error": False})
    assert isinstance(shaped, dict)
    assert (shaped["filePath"], shaped["success"], shaped["type"], shaped["content"]) == (
        str(tmp_path / "a.txt"), True, "create", "stamped\n")
    assert tool_response("peek_note", {}, {"content": "x"}) == {"content": "x"}
    assert shows_headline("stamp_file") and not shows_headline("peek_note")
    assert runs_command("chant") and not runs_command("stamp_file")


def test_a_sub_agent_is_never_given_a_new_tool_that_starts_sub_agents(tmp_path):
    anyone = AgentType(name="helper", description="helps", system="", file=tmp_path / "a.md",
                       scope=AgentScope.PROJECT)
    assert not anyone.allows("peek_note") and anyone.allows("stamp_file")


@pytest.mark.asyncio
async def test_a_new_tool_runs_in_a_session_under_its_own_summary(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("stamp_file", {"path": "a.txt", "note": "ok"}),
                     Reply.text("stamped"))
    run = start_session(provider_for(fake_api), [StampTool()], tmp_path)
    run.submit(UserMessage(text="stamp it"))
    await run.idle()
    states = [e for e in run.rec.of("tool_state") if e.name == "stamp_file"]
    assert {e.summary for e in states if e.summary} == {"Stamp a.txt with 'ok'"}
    assert states[-1].state == "succeeded"
    assert [t["name"] for t in fake_api.requests[0]["tools"]] == ["stamp_file"]
    await run.close()


def test_each_catalog_row_offers_its_own_class_in_the_order_the_model_sees(tmp_path):
    skills = Skills(skills=[Skill(name="pdf", description="PDFs", folder=tmp_path,
                                  scope=SkillScope.PROJECT)])
    offered = default_tools(tmp_path, jobs=BackgroundJobs(), web_search=True, skills=skills)
    assert [type(offered.get(n)) for n in offered.names()] == [cls for cls, _make in BUILT_IN]
    assert "bash_output" not in default_tools(tmp_path).names()  # no jobs: no job tools


def test_a_name_asked_before_the_catalog_loads_fails_instead_of_naming_no_tool():
    code = ("from agent_tui.protocol.tool_names import our_name\n"
            "try:\n    our_name('Bash')\nexcept RuntimeError as exc:\n    print('refused:', exc)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True)
    assert out.stdout.startswith("refused: the tool catalog is not loaded")


def test_a_tool_that_would_take_another_tool_s_name_is_refused():
    for claims in ({"claude_name": "Bash"}, {"claude_aliases": ("Read",)},
                   {"claude_name": "Stamper"}, {"name": "Edit"}):
        impostor = type("Impostor", (PeekTool,), {"name": "impostor", **claims})
        with pytest.raises(ValueError, match="would take the name"):
            register_tool(impostor)
        assert our_name("Bash") == "bash" and our_name("Read") == "read_file"


def test_the_built_in_tools_say_what_was_once_a_list_of_their_names():
    built_in = {cls.name for cls, _make in BUILT_IN} | {"multi_edit", "notebook_edit"}
    told = [f for f in tool_names.every_tool() if f.name in built_in]

    def named(said) -> set[str]:
        return {f.name for f in told if said(f)}

    assert named(lambda f: f.result_shown is ResultShown.HEADLINE) == {"grep", "glob", "web_fetch"}
    assert named(lambda f: f.result_shown is ResultShown.SOURCES) == {"web_search"}
    assert {f.name: f.file_change for f in told if f.file_change is not FileChange.NONE} == {
        "edit_file": FileChange.EDIT, "write_file": FileChange.WRITE}
    assert named(lambda f: f.file_key == "path") == {"read_file", "write_file", "edit_file"}
    assert named(lambda f: bool(f.line_key)) == {"read_file"}
    assert {f.name: f.hook_response for f in told if f.hook_response is not HookResponse.PLAIN} == {
        "bash": HookResponse.COMMAND, "read_file": HookResponse.FILE_READ,
        "write_file": HookResponse.FILE_EDIT, "edit_file": HookResponse.FILE_EDIT,
        "multi_edit": HookResponse.FILE_EDIT}
    assert named(lambda f: f.starts_agents) == {"task"}
    assert {name for name in built_in if runs_command(name)} == {"bash"}
