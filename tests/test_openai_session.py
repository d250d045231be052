"""A real session (no screen) on the openai-chat provider, the real ``openai`` SDK over
HTTP to the strict Chat Completions fake: the tool loop, and every stop-button
guarantee on this wire format (Esc mid-tool, Esc in a stalled stream, Esc during a
429 back-off); then a model switch across providers in one session."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.calls.tool import ToolSet
from agent_tui.core.journal.journal import Journal
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.session.session import Session
from agent_tui.protocol import Interrupt, SetModel, UserMessage
from agent_tui.providers.base import Provider
from agent_tui.providers.factory import make_configured, routed
from agent_tui.tools.bash import BashTool
from tests.fake_api import FakeAnthropicServer
from tests.fake_api import Reply as AnthropicReply
from tests.fake_openai import Call, FakeOpenAIServer, Reply
from tests.harness import Recorder, Running

pytestmark = pytest.mark.asyncio


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    with FakeOpenAIServer() as srv:
        yield srv
    assert srv.errors == []


def entries(url: str) -> dict[str, Any]:
    return {"fake": {"api": "openai-chat", "baseURL": url, "apiKeyEnv": "FAKE_OPENAI_KEY",
                     "models": {"gpt-test": {"contextWindow": 128_000, "images": True}}}}


def session(provider: Provider, workspace: Path, model: str) -> Running:
    journal = Journal()
    rec = Recorder()
    deps = SessionDeps(config=AgentConfig(workspace=workspace, model=model),
                       provider=provider, tools=ToolSet([BashTool(grace=0.5)]),
                       policy=AllowAll(), journal=journal, emit=rec)
    return Running(Session(deps), rec, journal)


def chat_session(fake: FakeOpenAIServer, workspace: Path) -> Running:
    configured = entries(fake.url)
    default = make_configured("fake", configured)
    return session(routed("fake", default, lambda n: make_configured(n, configured), configured),
                   workspace, "gpt-test")


def bash(command: str) -> Reply:
    return Reply(calls=[Call("bash", json.dumps({"command": command}))])


async def test_tool_loop_runs_and_answers_each_call(fake: FakeOpenAIServer, tmp_path: Path) -> None:
    fake.enqueue(bash("echo made > out.txt && echo wrote it"), Reply(text="all done"))
    run = chat_session(fake, tmp_path)
    run.submit(UserMessage(text="write a file"))
    await run.idle()
    await run.close()
    assert (tmp_path / "out.txt").read_text() == "made\n"
    assert run.rec.of("turn_ended")[-1].status == "completed"
    tool_message = fake.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "wrote it" in tool_message["content"]
    usage = run.rec.of("usage")
    assert len(usage) == 2 and all(u.input_tokens > 0 and not u.interrupted for u in usage)


async def test_esc_mid_tool_ends_its_processes_and_the_next_request_is_valid(
        fake: FakeOpenAIServer, tmp_path: Path) -> None:
    marker = "31.4159265"
    fake.enqueue(bash(f"echo started; sleep {marker}"), Reply(text="understood"))
    run = chat_session(fake, tmp_path)
    run.submit(UserMessage(text="wait a while"))
    await run.rec.wait_for(lambda: "running" in run.rec.tool_states(name="bash"))
    await run.rec.wait_for(lambda: _sleeping(marker))
    run.submit(Interrupt())
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    assert run.rec.tool_states(name="bash")[-1] == "cancelled_while_running"
    assert not _sleeping(marker)
    run.submit(UserMessage(text="what happened?"))
    await run.idle()
    await run.close()
    assert fake.rejections == []  # the strict fake took the history as it was sent
    sent = fake.requests[1]["messages"]
    call_id = sent[2]["tool_calls"][0]["id"]
    assert sent[3]["role"] == "tool" and sent[3]["tool_call_id"] == call_id
    assert "Interrupted by the user" in sent[3]["content"]
    assert run.rec.of("turn_ended")[-1].status == "completed"


def _sleeping(marker: str) -> bool:
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if marker in " ".join(proc.info["cmdline"] or []):
                return True
        except psutil.Error:
            continue
    return False


async def test_esc_in_a_stalled_stream_closes_the_connection_and_bills_it(
        fake: FakeOpenAIServer, tmp_path: Path) -> None:
    fake.enqueue(Reply(text="the start of an answer that stalls", chunk=5,
                       stall_after=(2, 60)))
    run = chat_session(fake, tmp_path)
    run.submit(UserMessage(text="talk"))
    await run.rec.wait_type("text_delta")
    run.submit(Interrupt())
    await run.idle()
    await asyncio.to_thread(fake.wait_for, "disconnects", 1, 5.0)
    await run.close()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    (usage,) = run.rec.of("usage")
    assert usage.interrupted and usage.input_tokens > 0


async def test_esc_ends_a_429_back_off_and_sends_nothing_more(
        fake: FakeOpenAIServer, tmp_path: Path) -> None:
    fake.enqueue(Reply.failure(429, "Rate limit reached for requests",
                               headers={"retry-after": "20"}, kind="rate_limit_error"))
    run = chat_session(fake, tmp_path)
    run.submit(UserMessage(text="hello"))
    await run.rec.wait_type("retry_scheduled")
    assert run.rec.of("retry_scheduled")[0].delay == 20  # the server's retry-after
    run.submit(Interrupt())
    await run.idle(timeout=5)
    await run.close()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    assert len(fake.requests) == 1


async def test_model_switch_across_providers_keeps_the_conversation(
        fake: FakeOpenAIServer, fake_api: FakeAnthropicServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_tui.providers.anthropic import AnthropicProvider

    configured = entries(fake.url)
    anthropic = AnthropicProvider(api_key="test-key", base_url=fake_api.url)
    router = routed("anthropic", anthropic, lambda n: make_configured(n, configured), configured)
    fake_api.enqueue(AnthropicReply.tool_use("bash", {"command": "echo one"}),
                     AnthropicReply.text("first done"), AnthropicReply.text("back again"))
    fake.enqueue(bash("echo two"), Reply(text="second done"))
    run = session(router, tmp_path, "claude-test")
    run.submit(UserMessage(text="first"))
    await run.idle()
    run.submit(SetModel(model="fake/gpt-test"))
    await run.rec.wait_type("model_changed")
    run.submit(UserMessage(text="second"))
    await run.idle()
    run.submit(SetModel(model="claude-test"))
    await run.rec.wait_type("model_changed", 2)
    run.submit(UserMessage(text="third"))
    await run.idle()
    await run.close()
    assert fake.rejections == [] and [e.status for e in run.rec.of("turn_ended")] == [
        "completed"] * 3
    on_openai = fake.requests[0]["messages"]
    assert [m["role"] for m in on_openai] == ["system", "user", "assistant", "tool",
                                              "assistant", "user"]
    assert fake.requests[0]["model"] == "gpt-test"
    back = fake_api.requests[-1]["messages"]
    kinds = [b["type"] for m in back if isinstance(m["content"], list) for b in m["content"]]
    assert kinds.count("tool_use") == 2 and kinds.count("tool_result") == 2
