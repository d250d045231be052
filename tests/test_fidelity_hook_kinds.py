"""HTTP hooks (``"type": "http"``) as Claude Code runs them: the input JSON POSTed to
the hook's URL (a server on loopback here), a 2xx JSON answer read as a command's
stdout, headers filled only with the variables the hook allows, a failed answer
said and passed over, and no answer at all failing closed for a gate. Prompt hooks
(``"type": "prompt"``): the model (the fake API) judges the event; its no blocks."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agent_tui.protocol import UserMessage
from tests.fake_api import Reply
from tests.hooks_support import command_hooks, hook_records, start, tool_results

pytestmark = pytest.mark.asyncio


class _Hooks:
    """A loopback server: each POST is kept; the answer depends on the path."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.seen.append((self.path, dict(self.headers), body))
                command = body.get("tool_input", {}).get("command", "")
                if self.path == "/guard" and "rm " in command:
                    self._answer(200, json.dumps({"hookSpecificOutput": {
                        "hookEventName": "PreToolUse", "permissionDecision": "deny",
                        "permissionDecisionReason": "no rm through the guard"}}))
                elif self.path == "/broken":
                    self._answer(500, "oops")
                else:
                    self._answer(200, "")

            def _answer(self, status: int, text: str) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server():
    hooks = _Hooks()
    yield hooks
    hooks.close()


def _closed_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_an_http_guard_blocks_and_sees_claude_codes_payload(
        fake_api, tmp_path: Path, server, monkeypatch):
    monkeypatch.setenv("HOOK_TOKEN", "t0ken")
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "http", "url": f"{server.url}/guard", "timeout": 10,
         "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Key": "${ANTHROPIC_API_KEY}"},
         "allowedEnvVars": ["HOOK_TOKEN", "ANTHROPIC_API_KEY"]},
        {"type": "http", "url": f"{server.url}/broken"},
    ]}]})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_uses([("bash", {"command": "rm -rf build"}),
                                      ("bash", {"command": "touch fine"})]), Reply.text("ok"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert (ws / "fine").exists()  # the broken hook (HTTP 500) is said, not a block
    guard = [s for s in server.seen if s[0] == "/guard"]
    assert [b["tool_input"]["command"] for _p, _h, b in guard] == ["rm -rf build", "touch fine"]
    path, headers, body = guard[0]
    assert body["hook_event_name"] == "PreToolUse" and body["tool_name"] == "Bash"
    assert headers["Authorization"] == "Bearer t0ken"
    assert headers["X-Key"] == ""  # the agent's own key is never sent, allowed or not
    results = tool_results(fake_api.requests[-1])
    assert "no rm through the guard" in results[0]["content"]
    notices = [n.text for n in run.rec.of("notice")]
    assert any("answered HTTP 500" in n for n in notices)


async def test_an_http_guard_that_does_not_answer_fails_closed(fake_api, tmp_path: Path):
    url = f"http://127.0.0.1:{_closed_port()}/guard"
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "http", "url": url, "timeout": 5}]}]})
    run, ws = start(fake_api, tmp_path, hooks)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch ran"}), Reply.text("ok"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert not (ws / "ran").exists()
    assert run.rec.tool_states(name="bash")[-1] == "denied"


async def test_a_prompt_hook_asks_the_model_and_its_no_is_a_block(fake_api, tmp_path: Path):
    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "Is this command safe to run? $ARGUMENTS", "timeout": 20}]}]})
    run, ws = start(fake_api, tmp_path, hooks)
    hooks.provider, hooks.model = run.session.deps.provider, lambda: "claude-test"
    fake_api.enqueue(
        Reply.tool_use("bash", {"command": "rm -rf build"}),
        Reply.text('{"ok": false, "reason": "rm -rf is destructive"}'),  # the hook's judge
        Reply.tool_use("bash", {"command": "touch fine"}),
        Reply.text('```json\n{"ok": true}\n```'),
        Reply.text("done"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert (ws / "fine").exists()
    asked = fake_api.requests[1]
    assert '{"ok": true}' in asked["system"] and not asked.get("tools")
    question = asked["messages"][0]["content"]
    assert question.startswith("Is this command safe to run? {")
    assert json.loads(question.removeprefix("Is this command safe to run? "))["tool_input"] == {
        "command": "rm -rf build"}
    results = tool_results(fake_api.requests[-1])
    assert "rm -rf is destructive" in results[0]["content"]
    assert [r.decision for r in hook_records(run)] == ["block", "none"]
