"""A real session (no screen) on each OpenAI wire format (Chat Completions and the
Responses API), the real ``openai`` SDK over HTTP to the strict fakes: the tool loop,
and every stop-button guarantee (Esc mid-tool, Esc in a stalled stream, Esc during a
429 back-off); then a model switch across providers in one session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agent_tui.protocol import Interrupt, UserMessage
from agent_tui.providers.factory import make_configured, routed
from agent_tui.ui.commands.reports import cost_report
from agent_tui.ui.render.usage import UsageTally
from tests.fake_api import FakeAnthropicServer
from tests.fake_api import Reply as AnthropicReply
from tests.fake_openai.fixtures import fake_openai  # noqa: F401  (a fixture)
from tests.fake_openai import FakeOpenAIServer, Reply
from tests.harness import alive
from tests.openai_support import bash, converse, entries, fake_session, session

pytestmark = pytest.mark.asyncio


@pytest.fixture(params=["openai-chat", "openai-responses"])
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)




def answers(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The tool answers a request carries: (call id, what the model is told)."""
    if "messages" in body:
        return [(m["tool_call_id"], m["content"]) for m in body["messages"]
                if m["role"] == "tool"]
    return [(i["call_id"], i["output"]) for i in body["input"]
            if i.get("type") == "function_call_output"]


def calls(body: dict[str, Any]) -> list[str]:
    if "messages" in body:
        return [c["id"] for m in body["messages"] for c in m.get("tool_calls") or []]
    return [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]


async def test_tool_loop_runs_and_answers_each_call(fake_openai: FakeOpenAIServer, tmp_path: Path, api: str) -> None:
    fake_openai.enqueue(bash("echo made > out.txt && echo wrote it"), Reply(text="all done"))
    run = fake_session(fake_openai, tmp_path, api=api)
    run.submit(UserMessage(text="write a file"))
    await run.idle()
    await run.close()
    assert (tmp_path / "out.txt").read_text() == "made\n"
    assert run.rec.of("turn_ended")[-1].status == "completed"
    ((call_id, told),) = answers(fake_openai.requests[1])
    assert calls(fake_openai.requests[1]) == [call_id] and "wrote it" in told
    usage = run.rec.of("usage")
    assert len(usage) == 2 and all(u.input_tokens > 0 and not u.interrupted for u in usage)
    assert not any(u.estimated for u in usage)  # the server said each size


async def test_esc_mid_tool_ends_its_processes_and_the_next_request_is_valid(
        fake_openai: FakeOpenAIServer, tmp_path: Path, api: str) -> None:
    marker = "31.4159265"
    fake_openai.enqueue(bash(f"echo started; sleep {marker}"), Reply(text="understood"))
    run = fake_session(fake_openai, tmp_path, api=api)
    run.submit(UserMessage(text="wait a while"))
    await run.rec.wait_for(lambda: "running" in run.rec.tool_states(name="bash"))
    await run.rec.wait_for(lambda: alive(marker))
    run.submit(Interrupt())
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    assert run.rec.tool_states(name="bash")[-1] == "cancelled_while_running"
    assert not alive(marker)
    run.submit(UserMessage(text="what happened?"))
    await run.idle()
    await run.close()
    assert fake_openai.rejections == []  # the strict fake took the history as it was sent
    ((call_id, told),) = answers(fake_openai.requests[1])
    assert calls(fake_openai.requests[1]) == [call_id] and "Interrupted by the user" in told
    assert run.rec.of("turn_ended")[-1].status == "completed"


async def test_esc_in_a_stalled_stream_closes_the_connection_and_bills_it(
        fake_openai: FakeOpenAIServer, tmp_path: Path, api: str) -> None:
    fake_openai.enqueue(Reply(text="the start of an answer that stalls", chunk=5,
                       stall_after=(4, 60)))
    run = fake_session(fake_openai, tmp_path, api=api)
    run.submit(UserMessage(text="talk"))
    await run.rec.wait_type("text_delta")
    run.submit(Interrupt())
    await run.idle()
    await asyncio.to_thread(fake_openai.wait_for, "disconnects", 1, 5.0)
    await run.close()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    (usage,) = run.rec.of("usage")
    assert usage.interrupted and usage.input_tokens > 0
    assert usage.estimated  # the server never said the size: the record says it is a guess
    tally = UsageTally()
    tally.add(usage)
    assert "1 interrupted request(s) ended before the server said" in cost_report(tally).plain


async def test_esc_ends_a_429_back_off_and_sends_nothing_more(
        fake_openai: FakeOpenAIServer, tmp_path: Path, api: str) -> None:
    fake_openai.enqueue(Reply.failure(429, "Rate limit reached for requests",
                               headers={"retry-after": "20"}, kind="rate_limit_error"))
    run = fake_session(fake_openai, tmp_path, api=api)
    run.submit(UserMessage(text="hello"))
    await run.rec.wait_type("retry_scheduled")
    assert run.rec.of("retry_scheduled")[0].delay == 20  # the server's retry-after
    run.submit(Interrupt())
    await run.idle(timeout=5)
    await run.close()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    assert len(fake_openai.requests) == 1


async def test_model_switch_across_providers_keeps_the_conversation(
        fake_openai: FakeOpenAIServer, fake_api: FakeAnthropicServer, tmp_path: Path, api: str,
        ) -> None:
    from agent_tui.providers.anthropic import AnthropicProvider

    configured = entries(fake_openai.url, api)
    anthropic = AnthropicProvider(api_key="test-key", base_url=fake_api.url)
    router = routed("anthropic", anthropic, lambda n: make_configured(n, configured), configured)
    fake_api.enqueue(AnthropicReply.tool_use("bash", {"command": "echo one"}),
                     AnthropicReply.text("first done"), AnthropicReply.text("back again"))
    # an id as some servers write them (Kimi): the Messages API takes it back all the same
    fake_openai.enqueue(bash("echo two", call_id="functions.bash:0"), Reply(text="second done"))
    run = session(router, tmp_path, "claude-test")
    await converse(run, "first", "/model fake/gpt-test", "second", "/model claude-test", "third")
    await run.close()
    assert fake_openai.rejections == [] and [e.status for e in run.rec.of("turn_ended")] == [
        "completed"] * 3
    assert len(answers(fake_openai.requests[0])) == 1 and len(calls(fake_openai.requests[0])) == 1
    assert len(answers(fake_openai.requests[1])) == 2  # the first provider's call, and its own
    assert fake_openai.requests[0]["model"] == "gpt-test"
    back = fake_api.requests[-1]["messages"]
    kinds = [b["type"] for m in back if isinstance(m["content"], list) for b in m["content"]]
    assert kinds.count("tool_use") == 2 and kinds.count("tool_result") == 2
