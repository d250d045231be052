"""``agent-tui -p`` and ``agent-tui acp`` on a custom provider (OpenAI-compatible, and the cap on every wire format) from a
``--settings`` file: the tool loop with its cost from the configured price, the
spending cap, which sends no request past it and ends the run with its own subtype,
and an ACP cancel in a stalled stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai.fixtures import fake_openai  # noqa: F401  (a fixture)
from tests.fake_api import Reply as AnthropicReply
from tests.fake_openai import Call, FakeOpenAIServer, Reply
from tests.forked_runs import run_agent
from tests.print_agent import env_for

PRICE = {"input": 2.0, "output": 8.0, "cacheRead": 0.5}




def settings_for(tmp_path: Path, url: str, price: Any = PRICE, api: str = "openai-chat",
                 model_id: str = "gpt-test") -> Path:
    model: dict[str, Any] = {"contextWindow": 128_000}
    if price is not None:
        model["price"] = price
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"providers": {"fake": {
        "api": api, "baseURL": url, "apiKeyEnv": "FAKE_OPENAI_KEY",
        "models": {model_id: model}}}}))
    return settings


def agent(tmp_path: Path, fake: Any, *args: str, price: Any = PRICE, api: str = "openai-chat",
          model_id: str = "gpt-test") -> tuple[int, dict[str, Any]]:
    settings = settings_for(tmp_path, fake.url, price, api, model_id)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    done = run_agent(["-p", "do it", "--output-format", "json", "--cwd", str(work),
                      "--settings", str(settings), "--model", f"fake/{model_id}",
                      "--permission-mode", "auto", *args],
                     env=env_for(tmp_path, FAKE_OPENAI_KEY="sk-test"), timeout=90)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_print_mode_runs_the_tool_loop_and_prices_it(tmp_path: Path,
                                                     fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(Reply(calls=[Call("bash", json.dumps({"command": "echo hi > made.txt"}))]),
                 Reply(text="made it"))
    code, result = agent(tmp_path, fake_openai)
    assert code == 0 and result["subtype"] == "success" and result["result"] == "made it"
    assert (tmp_path / "work" / "made.txt").read_text() == "hi\n"
    spent = sum((u.prompt - u.cached) * 2.0 + u.cached * 0.5 + u.output * 8.0
                for u in fake_openai.usage) / 1_000_000
    assert result["total_cost_usd"] == pytest.approx(spent)
    assert fake_openai.requests[0]["model"] == "gpt-test"


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses"])
def test_the_spending_cap_sends_no_request_past_it(tmp_path: Path, api: str,
                                                   fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(Reply(calls=[Call("bash", json.dumps({"command": "echo hi > x"}))]),
                        Reply(text="never sent"))
    code, result = agent(tmp_path, fake_openai, "--max-budget-usd", "0.000001", api=api)
    assert len(fake_openai.requests) == 1  # the first request spent the cap; no second one
    _stopped_by_the_cap(tmp_path, code, result)


def test_the_spending_cap_holds_on_an_anthropic_compatible_server(tmp_path: Path,
                                                                  fake_api: Any) -> None:
    fake_api.enqueue(AnthropicReply.tool_use("bash", {"command": "echo hi > x"}),
                     AnthropicReply.text("never sent"))
    code, result = agent(tmp_path, fake_api, "--max-budget-usd", "0.000001", api="anthropic",
                         model_id="claude-test")
    assert len(fake_api.requests) == 1
    _stopped_by_the_cap(tmp_path, code, result)


def _stopped_by_the_cap(tmp_path: Path, code: int, result: dict[str, Any]) -> None:
    assert code == 1 and result["subtype"] == "error_max_budget_usd" and result["is_error"]
    assert not (tmp_path / "work" / "x").exists()  # nor did the call it asked for run
    assert "spending cap" in " ".join(result.get("errors", []))
    # as if interrupted (the same cancel path), and the call says what stopped it
    (path,) = (tmp_path / "home").glob("sessions/*/journal.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    (ended,) = [r for r in records if r.get("kind") == "turn_ended"]
    assert ended["status"] == "cancelled" and "spending cap" in ended["detail"]
    (call,) = [r for r in records if r.get("kind") == "tool_result"]
    assert call["state"] == "cancelled_before_start" and call["ended_by"] == "budget"
    assert "spending cap" in call["content"]


def test_an_unknown_price_under_a_cap_is_never_counted_as_zero(
        tmp_path: Path, fake_openai: FakeOpenAIServer) -> None:
    code, result = agent(tmp_path, fake_openai, "--max-budget-usd", "5", price=None)
    assert code == 1 and result["subtype"] == "error_max_budget_usd"
    assert fake_openai.requests == []
    assert "unknown" in " ".join(result.get("errors", []))


@pytest.mark.asyncio
async def test_acp_cancel_in_a_stalled_stream_closes_it(tmp_path: Path,
                                                       fake_openai: FakeOpenAIServer) -> None:
    import asyncio

    from acp import text_block

    from tests.acp_client import RecordingClient, acp_agent, start

    fake_openai.enqueue(Reply(text="I am thinking about it", chunk=4, stall_after=(3, 30)))
    settings = settings_for(tmp_path, fake_openai.url)
    client = RecordingClient()
    env = {"AGENT_TUI_HOME": str(tmp_path / "home"), "FAKE_OPENAI_KEY": "sk-test"}
    args = ["--cwd", str(tmp_path), "--settings", str(settings), "--model", "fake/gpt-test"]
    async with acp_agent(client, args, env=env, cwd=tmp_path) as (conn, _):
        sid = await start(conn, tmp_path)
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await client.wait_for(lambda: "I am" in client.text(sid), timeout=30)
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(prompt, 5)  # the stall is 30 s
        assert response.stop_reason == "cancelled"
        await asyncio.to_thread(fake_openai.wait_for, "disconnects", 1, 5.0)
    assert len(fake_openai.requests) == 1
