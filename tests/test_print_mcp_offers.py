"""What MCP servers offer, in print mode (the real ``agent-tui -p`` process, the fake
API): ``/mcp__server__prompt`` sends the prompt's messages, ``@server:uri`` sends the
resource after the message, and a server's question (elicitation) is declined, said
on stderr and in the stream."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.mcp_support import SERVERS
from tests.print_agent import env_for, events_of


def _project(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = {"mcpServers": {
        "notes": {"command": sys.executable, "args": [str(SERVERS / "catalog_server.py")]},
        "shop": {"command": sys.executable, "args": [str(SERVERS / "elicit_server.py"), str(tmp_path / "rec.jsonl")]},
    }}
    (workspace / ".mcp.json").write_text(json.dumps(config))
    return workspace


def _run(fake_api, tmp_path: Path, prompt: str) -> subprocess.CompletedProcess:
    workspace = tmp_path / "ws" if (tmp_path / "ws").exists() else _project(tmp_path)
    return run_agent(
        ["-p", prompt, "--output-format", "stream-json", "--permission-mode", "auto", "--trust",
         "--cwd", str(workspace)],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                    XDG_CONFIG_HOME=str(tmp_path / "config"), MCP_TIMEOUT="20000"),
        timeout=90,
    )


def _user_text(request: dict) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_a_resource_follows_the_message_and_a_question_is_declined(fake_api, tmp_path: Path) -> None:
    fake_api.enqueue(Reply.tool_use("mcp__shop__signup", {}, id="toolu_ask"), Reply.text("ok"))
    out = _run(fake_api, tmp_path, "sum up @notes:notes://today")
    assert out.returncode == 0, out.stderr
    sent = _user_text(fake_api.requests[0])
    assert sent.startswith("sum up @notes:notes://today\n\n<resource uri=\"notes:notes://today\">")
    assert "buy milk" in sent
    notices = [e["text"] for e in events_of(out.stdout) if e["type"] == "notice"]
    assert any("MCP server shop asked for input ('Tell us about you'): declined" in n for n in notices), notices
    tool_result = fake_api.requests[1]["messages"][-1]["content"][0]
    assert json.loads(tool_result["content"]) == {"action": "decline", "content": None}


def test_an_mcp_prompt_is_sent_as_its_messages_and_a_bad_one_sends_nothing(fake_api, tmp_path: Path) -> None:
    fake_api.enqueue(Reply.text("reviewed"))
    out = _run(fake_api, tmp_path, '/mcp__notes__review main.py "the tests"')
    assert out.returncode == 0, out.stderr
    assert _user_text(fake_api.requests[0]) == "Please review main.py, looking at the tests."
    out = _run(fake_api, tmp_path, "/mcp__notes__review")
    assert len(fake_api.requests) == 1  # nothing more was sent
    assert "not sent: /mcp__notes__review: missing file: usage /mcp__notes__review file [focus]" in out.stdout
