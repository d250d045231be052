"""Skills and sub-agent types through the real ``agent-tui -p`` process: a project and a
home in Claude Code's shape (tests/claude_code/), the fake API through the real SDK."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.print_agent import env_for, events_of

CONFIG = Path(__file__).parent / "claude_code"


def test_print_mode_loads_skills_and_agents_and_names_the_bad_files(fake_api, tmp_path):
    shutil.copytree(CONFIG, tmp_path / "cc")
    workspace, home = tmp_path / "cc" / "project", tmp_path / "cc" / "home"
    reference = home / ".claude" / "skills" / "pdf-forms" / "reference.md"
    with open(reference.with_name("SKILL.md"), "a", encoding="utf-8") as body:
        body.write("\nSESSION ${CLAUDE_SESSION_ID} EFFORT ${CLAUDE_EFFORT}\n")

    def answer(body: dict) -> Reply:
        first = body["messages"][0]["content"][0]["text"]
        steps = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if first == "review this":
            return Reply.text("the review: fine")
        script = [
            Reply.tool_use("skill", {"name": "pdf-forms"}, id="toolu_skill"),
            Reply.tool_use("read_file", {"path": str(reference)}, id="toolu_ref"),
            Reply.tool_use("task", {"description": "review", "prompt": "review this",
                                    "subagent_type": "code-reviewer"}, id="toolu_task"),
        ]
        return script[steps] if steps < len(script) else Reply.text("all done")

    fake_api.enqueue(*[answer for _ in range(8)])
    allow = tmp_path / "allow-task.json"  # print mode asks no one: the task call is allowed
    allow.write_text('{"permissions": {"allow": ["task"]}}')
    out = run_agent(
        ["-p", "fill the form", "--output-format", "stream-json", "--cwd", str(workspace),
         "--settings", str(allow), "--effort", "high"],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                    HOME=str(home)), timeout=90,
    )
    assert out.returncode == 0, out.stderr
    events = events_of(out.stdout)
    notices = [e["text"] for e in events if e["type"] == "notice"]
    assert any("broken-yaml/SKILL.md:4: front matter is not valid YAML" in n for n in notices)
    assert not any("no-front-matter" in n for n in notices)  # it loads, as in Claude Code
    assert any("agents/bad-yaml.md:4: front matter is not valid YAML" in n for n in notices)
    assert any("agents/no-description.md:1: no description" in n for n in notices)

    assert fake_api.rejections == []
    main = [r for r in fake_api.requests if r["messages"][0]["content"][0]["text"] == "fill the form"]
    first = main[0]
    names = [t["name"] for t in first["tools"]]
    assert names[-1] == "skill"  # after the built-in tools: their cache prefix is unchanged
    assert "PDF-FORMS-SKILL-BODY" not in json.dumps(first)
    offered = next(t for t in first["tools"] if t["name"] == "skill")["description"]
    assert "- no-front-matter: Checks that the changelog has an entry" in offered
    assert "NO-FRONT-MATTER-SKILL-BODY" not in json.dumps(first)
    task = next(t for t in first["tools"] if t["name"] == "task")
    assert "- code-reviewer: Expert code reviewer." in task["description"]
    assert "PDF-FORMS-SKILL-BODY" in json.dumps(main[1]["messages"])
    # as Claude Code puts them: the session's id and the effort chosen
    session_id = next(e["session_id"] for e in events if e.get("session_id"))
    assert f"SESSION {session_id} EFFORT high" in json.dumps(main[1]["messages"])
    assert "PDF-FORMS-REFERENCE" in json.dumps(main[2]["messages"])

    child = next(r for r in fake_api.requests
                 if r["messages"][0]["content"][0]["text"] == "review this")
    assert [t["name"] for t in child["tools"]] == ["read_file", "glob", "grep"]
    assert child["model"] == "claude-haiku-4-5"
    system = child["system"] if isinstance(child["system"], str) else "".join(
        b["text"] for b in child["system"])
    assert system.startswith("CODE-REVIEWER-SYSTEM-PROMPT")
    tool_events = [e for e in events if e["type"] == "tool_state" and e["state"] == "succeeded"]
    assert {e["name"] for e in tool_events} >= {"skill", "read_file", "task"}
