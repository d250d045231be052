"""Sub-agent types from Claude Code's .claude/agents/*.md, run through ``task``.

A typed sub-agent's requests carry its file's body as the system prompt, only the tools
its file lists (never ``task``) and its model; cancel and background still hold. The
configuration is tests/claude_code/ (copied); the model is the fake API through the SDK.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from agent_tui.core.calls.agent_types import (
    AgentScope,
    load_agent_types,
)
from agent_tui.core.subagents.subagent import SUBAGENT_SYSTEM
from agent_tui.protocol import Interrupt, UserMessage
from agent_tui.tools.bash import BashTool
from agent_tui.tools.files import ReadFileTool
from agent_tui.tools.search.tools import GlobTool, GrepTool
from agent_tui.tools.task import TaskTool
from tests.fake_api import DEFAULT_MODELS, FakeAnthropicServer, ModelSpec, Reply
from tests.harness import assert_subagent_stopped, start_session
from tests.harness import provider_for
from tests.harness import alive, serve, tree

CONFIG = Path(__file__).parent / "claude_code"


@pytest.fixture
def config(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(CONFIG, tmp_path / "cc")
    return tmp_path / "cc" / "project", tmp_path / "cc" / "home"


def tools_for(types) -> list:
    return [ReadFileTool(), GlobTool(), GrepTool(), BashTool(grace=0.5), TaskTool(types)]


def request_for(fake_api, first_text: str) -> dict:
    for body in fake_api.requests:
        if body["messages"][0]["content"][0]["text"] == first_text:
            return body
    raise AssertionError(f"no request began with {first_text!r}")


def system_text(body: dict) -> str:
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


async def run_go(srv, workspace: Path, home: Path):
    """A session with the types of ``workspace`` and ``home`` that ran "go" to its end."""
    run = start_session(provider_for(srv), tools_for(load_agent_types(workspace, home)),
                        workspace)
    run.submit(UserMessage(text="go"))
    await run.idle(timeout=30)
    assert srv.rejections == []
    return run


def tool_names(body: dict) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


# -- loading -------------------------------------------------------------------------


def test_types_load_project_over_user_and_bad_files_are_named_with_line(config):
    workspace, home = config
    types = load_agent_types(workspace, home)
    assert {t.name: t.scope for t in types.types} == {
        "code-reviewer": AgentScope.PROJECT,
        "test-runner": AgentScope.PROJECT,
        "explainer": AgentScope.USER,
    }
    reviewer = types.get("code-reviewer")
    assert reviewer.tools == ("read_file", "grep", "glob")  # Claude Code's names, as ours
    assert reviewer.system.startswith("CODE-REVIEWER-SYSTEM-PROMPT")
    assert reviewer.model == "haiku"  # resolved when it starts: the newest Haiku listed
    assert types.get("test-runner").model == "inherit"
    assert types.get("explainer").model == "claude-sonnet-5-5"
    assert types.get("explainer").tools is None
    # an unquoted colon in the description is read as text
    assert types.get("explainer").description.endswith("Use when: the user asks how something works")
    problems = [str(p) for p in types.problems]

    def about(name: str) -> list[str]:
        return [p for p in problems if f"/agents/{name}.md" in p]

    assert any(":4: front matter is not valid YAML" in p and "not loaded" in p
               for p in about("bad-yaml"))
    assert any(":1: no description" in p for p in about("no-description"))
    assert any(":4: tools: 'Task': a sub-agent cannot start sub-agents" in p
               for p in about("test-runner"))
    assert any(":6: color: not applied by agent-tui" in p for p in about("test-runner"))
    assert any("also defined in" in p for p in about("code-reviewer"))


def test_bad_names_and_empty_bodies_are_refused(tmp_path):
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "shouty.md").write_text("---\nname: Shouty Agent\ndescription: d\n---\nbody\n")
    (agents / "hollow.md").write_text("---\nname: hollow\ndescription: d\n---\n\n")
    (agents / "plain.md").write_text("You are an agent without front matter.\n")
    (agents / "fine.md").write_text(
        "---\nname: fine\ndescription: d\ntools: Read, Frobnicate, mcp__github\n"
        "disallowedTools: Grep\n---\nbody\n")
    types = load_agent_types(tmp_path, tmp_path / "nohome")
    assert types.names() == ["fine"]
    texts = sorted(str(p) for p in types.problems)
    assert any("shouty.md:2: the name 'Shouty Agent' must be lowercase" in t for t in texts)
    assert any("hollow.md:5: the body (the sub-agent's system prompt) is empty" in t for t in texts)
    assert any("plain.md:1: no front matter" in t for t in texts)
    assert any("fine.md:4: tools: 'Frobnicate' names no tool" in t for t in texts)
    fine = types.get("fine")
    assert fine.allows("read_file") and fine.allows("mcp__github__create_issue")
    assert not fine.allows("grep") and not fine.allows("bash") and not fine.allows("task")


def test_the_task_tool_lists_the_types(config):
    workspace, home = config
    spec = TaskTool(load_agent_types(workspace, home)).spec()
    assert "subagent_type" in spec["input_schema"]["properties"]
    assert "- code-reviewer: Expert code reviewer." in spec["description"]
    assert "(tools: read_file, grep, glob)" in spec["description"]
    assert "- explainer: Explains code to a newcomer." in spec["description"]
    assert "bad-yaml" not in spec["description"]


# -- running -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_typed_subagent_has_its_prompt_tools_and_model(fake_api, config):
    workspace, home = config
    serve(fake_api, {
        ("go", 0): Reply.tool_uses([
            ("task", {"description": "review", "prompt": "review it",
                      "subagent_type": "code-reviewer"}, "toolu_review"),
            ("task", {"description": "test", "prompt": "run the tests",
                      "subagent_type": "test-runner"}, "toolu_tests"),
            ("task", {"description": "explain", "prompt": "explain it",
                      "subagent_type": "explainer"}, "toolu_explain"),
            ("task", {"description": "general", "prompt": "general work",
                      "subagent_type": "general-purpose"}, "toolu_general"),
        ]),
        ("review it", 0): Reply.text("looks fine"),
        ("go", 1): Reply.text("all done"),
    })
    run = await run_go(fake_api, workspace, home)
    parent = request_for(fake_api, "go")
    assert parent["model"] == "claude-test"
    assert "task" in tool_names(parent)

    review = request_for(fake_api, "review it")
    assert tool_names(review) == ["read_file", "glob", "grep"]  # the parent's order
    assert system_text(review).startswith("CODE-REVIEWER-SYSTEM-PROMPT")
    assert system_text(review) == load_agent_types(workspace, home).get("code-reviewer").system
    assert review["model"] == "claude-haiku-4-5"

    tests = request_for(fake_api, "run the tests")
    assert tool_names(tests) == ["read_file", "bash"]  # Task in the file: never given
    assert tests["model"] == "claude-test"  # inherit
    assert system_text(tests).startswith("TEST-RUNNER-SYSTEM-PROMPT")

    explain = request_for(fake_api, "explain it")
    assert tool_names(explain) == ["read_file", "glob", "grep", "bash"]  # all but task
    assert explain["model"] == "claude-sonnet-5-5"

    general = request_for(fake_api, "general work")  # today's sub-agent, unchanged
    assert system_text(general) == SUBAGENT_SYSTEM
    assert general["model"] == "claude-test"
    assert tool_names(general) == tool_names(parent)

    results = {b["tool_use_id"]: b for b in fake_api.requests[-1]["messages"][2]["content"]
               if b["type"] == "tool_result"}
    assert results["toolu_review"]["content"] == "looks fine"
    await run.close()


@pytest.mark.asyncio
async def test_an_unknown_type_is_an_error_the_model_sees(fake_api, config):
    workspace, home = config
    serve(fake_api, {
        ("go", 0): Reply.tool_use("task", {"description": "x", "prompt": "never sent",
                                           "subagent_type": "bad-yaml"}, id="toolu_bad"),
        ("go", 1): Reply.text("understood"),
    })
    run = start_session(provider_for(fake_api), tools_for(load_agent_types(workspace, home)),
                        workspace)
    run.submit(UserMessage(text="go"))
    await run.idle(timeout=20)
    final = [e for e in run.rec.of("tool_state") if e.tool_use_id == "toolu_bad"][-1]
    assert final.state == "failed"
    assert "no sub-agent type 'bad-yaml'" in final.result
    assert "code-reviewer" in final.result
    assert not any(r["messages"][0]["content"][0]["text"] == "never sent"
                   for r in fake_api.requests)
    told = json.dumps(fake_api.requests[-1]["messages"][2])
    assert "no sub-agent type" in told
    await run.close()


@pytest.mark.asyncio
async def test_esc_stops_a_typed_subagent_and_its_commands(fake_api, config):
    workspace, home = config
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    serve(fake_api, {
        ("go", 0): Reply.tool_use("task", {"description": "tests", "prompt": "run them",
                                           "subagent_type": "test-runner"}, id="toolu_task"),
        ("run them", 0): Reply.tool_use("bash", {"command": tree(marker)}, id="toolu_child"),
    })
    run = start_session(provider_for(fake_api), tools_for(load_agent_types(workspace, home)),
                        workspace)
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(lambda: alive(marker), timeout=20)
    run.submit(Interrupt())
    await run.idle(timeout=30)
    assert not alive(marker)
    assert_subagent_stopped(run.rec, "toolu_child")
    await run.close()


@pytest.mark.asyncio
async def test_a_background_typed_subagent_keeps_its_tools(fake_api, config):
    workspace, home = config
    serve(fake_api, {
        ("go", 0): Reply.tool_use("task", {"description": "review", "prompt": "bg review",
                                           "subagent_type": "code-reviewer",
                                           "run_in_background": True}, id="toolu_bg"),
        ("bg review", 0): Reply.text("reviewed in the background"),
    })
    run = start_session(provider_for(fake_api), tools_for(load_agent_types(workspace, home)),
                        workspace)
    run.submit(UserMessage(text="go"))
    await run.rec.wait_for(
        lambda: any(e.state == "completed" for e in run.rec.of("background_job")), timeout=20)
    body = request_for(fake_api, "bg review")
    assert tool_names(body) == ["read_file", "glob", "grep"]
    assert body["model"] == "claude-haiku-4-5"
    await run.close()


@pytest.mark.asyncio
async def test_a_type_with_an_empty_tools_list_gets_no_tools(fake_api, tmp_path):
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "thinker.md").write_text(
        "---\nname: thinker\ndescription: Only thinks\ntools: []\nmodel: sonnet\n---\nThink.\n")
    types = load_agent_types(tmp_path, tmp_path / "nohome")
    assert types.get("thinker").tools == ()
    serve(fake_api, {
        ("go", 0): Reply.tool_use("task", {"description": "think", "prompt": "think hard",
                                           "subagent_type": "thinker"}, id="toolu_think"),
        ("think hard", 0): Reply.text("thought"),
        ("go", 1): Reply.text("done"),
    })
    run = start_session(provider_for(fake_api), tools_for(types), tmp_path)
    run.submit(UserMessage(text="go"))
    await run.idle(timeout=20)
    assert fake_api.rejections == []
    body = request_for(fake_api, "think hard")
    assert tool_names(body) == []
    assert body["model"] == "claude-sonnet-5-5"
    assert run.rec.tool_states("toolu_think")[-1] == "succeeded"
    await run.close()


@pytest.mark.asyncio
async def test_a_model_alias_is_the_newest_model_of_its_line_the_api_lists(config, tmp_path):
    """``model: haiku`` runs on the first Haiku the Models API lists (newest first), as a
    command's ``model:`` does; an alias nothing is listed under runs on the parent's
    model, said in a warning."""
    workspace, home = config
    (workspace / ".claude" / "agents" / "poet.md").write_text(
        "---\nname: poet\ndescription: Writes verse\nmodel: opus\ntools: Read\n---\nRhyme.\n")
    newer = ModelSpec("claude-haiku-5-5", "Claude Haiku 5.5", "2026-11-01T00:00:00Z", line="haiku")
    listed = [newer, *(m for m in DEFAULT_MODELS if m.line != "opus")]  # no Opus listed
    with FakeAnthropicServer(models=listed) as srv:
        serve(srv, {
            ("go", 0): Reply.tool_use("task", {"description": "review", "prompt": "review it",
                                               "subagent_type": "code-reviewer"}, id="toolu_r"),
            ("review it", 0): Reply.text("looks fine"),
            ("go", 1): Reply.tool_use("task", {"description": "verse", "prompt": "a verse",
                                               "subagent_type": "poet"}, id="toolu_p"),
            ("a verse", 0): Reply.text("roses"),
            ("go", 2): Reply.text("all done"),
        })
        run = await run_go(srv, workspace, home)
        assert request_for(srv, "review it")["model"] == "claude-haiku-5-5"
        assert request_for(srv, "a verse")["model"] == request_for(srv, "go")["model"]
        warnings = [e.text for e in run.rec.of("notice")]
        assert any("model alias 'opus': no such model listed" in w for w in warnings), warnings
        assert run.rec.tool_states("toolu_p")[-1] == "succeeded"
        await run.close()


def test_tools_as_a_comma_string_or_a_yaml_list_name_the_same_tools(tmp_path):
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "as-string.md").write_text(
        "---\nname: as-string\ndescription: d\ntools: Read, Bash(git diff:*), mcp__github\n"
        "---\nS.\n")
    (agents / "as-list.md").write_text(
        "---\nname: as-list\ndescription: d\ntools:\n  - Read\n  - Bash(git diff:*)\n"
        "  - mcp__github\n---\nL.\n")
    types = load_agent_types(tmp_path, tmp_path / "nohome")
    assert types.problems == []
    assert types.get("as-string").tools == types.get("as-list").tools == (
        "read_file", "bash", "mcp__github")
