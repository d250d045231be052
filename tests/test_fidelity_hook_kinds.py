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


async def test_a_prompt_hooks_request_is_paid_for_and_held_to_the_spending_cap(
        fake_api, tmp_path: Path):
    from agent_tui.core.usage.hook_account import HookAccount
    from agent_tui.core.usage.pricing import PriceTable

    hooks = command_hooks(tmp_path, tmp_path / "ws", {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "Safe? $ARGUMENTS", "timeout": 20}]}]})
    run, ws = start(fake_api, tmp_path, hooks)
    deps = run.session.deps
    deps.usage.prices = PriceTable({"claude-test": {
        "input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}})
    budget = deps.budget
    budget.max_usd = 1.0
    deps.usage.on_cost = budget.charge
    hooks.provider, hooks.model = deps.provider, lambda: "claude-test"
    hooks.account = account = HookAccount(budget, deps.usage, deps.journal, run.rec)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch one"}),
                     Reply.text('{"ok": true}'), Reply.text("done"))
    account.observe(type("Started", (), {"type": "turn_started", "turn_id": "t1"})())
    run.submit(UserMessage(text="go"))
    await run.idle()
    assert (ws / "one").exists()
    hook_usage = [u for u in run.rec.of("usage") if u.purpose == "hook"]
    assert len(hook_usage) == 1 and hook_usage[0].cost_usd and hook_usage[0].turn_id == "t1"
    assert budget.spent_usd == pytest.approx(sum(u.cost_usd for u in run.rec.of("usage")))
    assert any(getattr(r, "purpose", None) == "hook" for r in deps.journal.records)
    # past the cap the hook's model is not asked: the guard fails closed
    budget.spent_usd = 5.0
    sent = len(fake_api.requests)
    run_result = await ask_with(hooks, account)
    assert run_result.ending == "not_started" and "spending cap" in (run_result.error or "")
    assert len(fake_api.requests) == sent


async def ask_with(hooks, account):
    from agent_tui.cancel import CancelScope
    from agent_tui.hooks.prompt_hook import ask_model

    return await ask_model(hooks.provider, "claude-test", "Safe?", "{}", timeout_s=5,
                           scope=CancelScope("t"), account=account)
