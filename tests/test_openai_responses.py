"""The openai provider on the Responses API, the real SDK over HTTP to the strict fake:
reasoning items round-tripped with their encrypted content, the fake's refusals, and
bad input as clear errors. The stop-button tests run on both OpenAI wire formats in
test_openai_session.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_tui.protocol import SetModel, UserMessage
from agent_tui.providers import base
from agent_tui.providers.factory import make_configured, routed
from tests.fake_api import FakeAnthropicServer
from tests.fake_api import Reply as AnthropicReply
from tests.fake_openai import FakeOpenAIServer, Reply
from tests.openai_support import bash, entries, fake_session, session

pytestmark = pytest.mark.asyncio


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    with FakeOpenAIServer() as srv:
        yield srv
    assert srv.errors == []


async def test_reasoning_items_go_back_with_their_encrypted_content(
        fake: FakeOpenAIServer, tmp_path: Path) -> None:
    fake.enqueue(bash("echo hi", reasoning="I should look first"), Reply(text="done"))
    run = fake_session(fake, tmp_path, api="openai-responses", model="reasoner")
    run.submit(UserMessage(text="look"))
    await run.idle()
    await run.close()
    assert fake.rejections == [] and run.rec.of("turn_ended")[-1].status == "completed"
    assert fake.requests[0]["include"] == ["reasoning.encrypted_content"]
    assert fake.requests[0]["store"] is False
    items = fake.requests[1]["input"]
    kinds = [i.get("type", "message") for i in items]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
    reasoning = items[1]
    assert reasoning["encrypted_content"] == fake.issued[reasoning["id"]]
    assert reasoning["summary"] == [{"type": "summary_text", "text": "I should look first"}]
    assert "".join(e.text for e in run.rec.of("thinking_delta")) == "I should look first"


async def test_switching_to_anthropic_leaves_the_reasoning_out_and_says_so(
        fake: FakeOpenAIServer, fake_api: FakeAnthropicServer, tmp_path: Path) -> None:
    from agent_tui.providers.anthropic import AnthropicProvider

    configured = entries(fake.url, "openai-responses")
    default = make_configured("fake", configured)
    router = routed("fake", default, lambda n: AnthropicProvider(
        api_key="test-key", base_url=fake_api.url), configured)
    fake.enqueue(bash("echo hi", reasoning="thinking in OpenAI's way"), Reply(text="done"))
    fake_api.enqueue(AnthropicReply.text("read it all"))
    run = session(router, tmp_path, "reasoner")
    run.submit(UserMessage(text="first"))
    await run.idle()
    run.submit(SetModel(model="anthropic/claude-test"))
    await run.rec.wait_type("model_changed")
    run.submit(UserMessage(text="second"))
    await run.idle()
    await run.close()
    assert run.rec.of("turn_ended")[-1].status == "completed"
    sent = fake_api.requests[-1]["messages"]
    kinds = [b["type"] for m in sent if isinstance(m["content"], list) for b in m["content"]]
    assert "thinking" not in kinds and kinds.count("tool_use") == 1
    assert any("thinking" in n.text for n in run.rec.of("notice"))


async def test_the_fake_refuses_what_the_api_refuses(fake: FakeOpenAIServer) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=fake.url, api_key="k", max_retries=0)
    call = {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"}
    user = {"role": "user", "content": "hi"}
    bad = [
        [user, call],  # no output for the call
        [user, {"type": "function_call_output", "call_id": "c9", "output": "x"}],
        [user, {"type": "reasoning", "id": "rs_1", "summary": [],
                "encrypted_content": "forged"}, call,
         {"type": "function_call_output", "call_id": "c1", "output": "x"}],
    ]
    for items in bad:
        with pytest.raises(openai.BadRequestError):
            await client.responses.create(model="reasoner", input=items, stream=True,
                                          store=False)
    assert "No tool output found for function call c1" in fake.rejections[0]
    assert "No tool call found" in fake.rejections[1]
    assert "could not be verified" in fake.rejections[2]
    with pytest.raises(openai.BadRequestError):  # not a reasoning model
        await client.responses.create(model="gpt-test", input=[user], stream=True,
                                      reasoning={"summary": "auto"})
    assert fake.requests == []
    await client.close()


@pytest.mark.parametrize(("reply", "words"), [
    (Reply(text="abcdef", malformed=True), "malformed"),
    (Reply(text="abcdef", cut=True), "ended before"),
    (Reply.failure(500, "server error", kind="server_error"), "500"),
])
async def test_bad_streams_are_clear_errors(fake: FakeOpenAIServer, reply: Reply,
                                            words: str) -> None:
    provider = make_configured("fake", entries(fake.url, "openai-responses"))
    fake.enqueue(reply)
    request = base.ModelRequest(model="gpt-test", system="s",
                                messages=[{"role": "user", "content": "go"}])
    with pytest.raises(base.ProviderError) as caught:
        async for _ in provider.stream(request):
            pass
    assert words in str(caught.value) and caught.value.retryable
    await provider.aclose()
