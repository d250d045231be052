"""The openai provider on the Responses API, the real SDK over HTTP to the strict fake_openai:
reasoning items round-tripped with their encrypted content, the fake's refusals, and
bad input as clear errors. The stop-button tests run on both OpenAI wire formats in
test_openai_session.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_tui.protocol import Interrupt, UserMessage
from agent_tui.providers import base
from agent_tui.providers.factory import make_configured, routed
from tests.fake_api import FakeAnthropicServer
from tests.fake_api import Reply as AnthropicReply
from tests.fake_openai.fixtures import fake_openai  # noqa: F401  (a fixture)
from tests.fake_openai import FakeOpenAIServer, Reply
from tests.openai_support import bash, converse, entries, fake_session, session

pytestmark = pytest.mark.asyncio




async def test_reasoning_items_go_back_with_their_encrypted_content(
        fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.enqueue(bash("echo hi", reasoning="I should look first"), Reply(text="done"))
    run = fake_session(fake_openai, tmp_path, api="openai-responses", model="reasoner")
    run.submit(UserMessage(text="look"))
    await run.idle()
    await run.close()
    assert fake_openai.rejections == [] and run.rec.of("turn_ended")[-1].status == "completed"
    assert fake_openai.requests[0]["include"] == ["reasoning.encrypted_content"]
    assert fake_openai.requests[0]["store"] is False
    items = fake_openai.requests[1]["input"]
    kinds = [i.get("type", "message") for i in items]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
    reasoning = items[1]
    assert reasoning["encrypted_content"] == fake_openai.issued[reasoning["id"]]
    assert reasoning["summary"] == [{"type": "summary_text", "text": "I should look first"}]
    assert "".join(e.text for e in run.rec.of("thinking_delta")) == "I should look first"


async def test_switching_to_anthropic_leaves_the_reasoning_out_and_says_so(
        fake_openai: FakeOpenAIServer, fake_api: FakeAnthropicServer, tmp_path: Path) -> None:
    from agent_tui.providers.anthropic import AnthropicProvider

    configured = entries(fake_openai.url, "openai-responses")
    default = make_configured("fake", configured)
    router = routed("fake", default, lambda n: AnthropicProvider(
        api_key="test-key", base_url=fake_api.url), configured)
    fake_openai.enqueue(bash("echo hi", reasoning="thinking in OpenAI's way"), Reply(text="done"))
    fake_api.enqueue(AnthropicReply.text("read it all"))
    run = session(router, tmp_path, "reasoner")
    await converse(run, "first", "/model anthropic/claude-test", "second")
    await run.close()
    assert run.rec.of("turn_ended")[-1].status == "completed"
    sent = fake_api.requests[-1]["messages"]
    kinds = [b["type"] for m in sent if isinstance(m["content"], list) for b in m["content"]]
    assert "thinking" not in kinds and kinds.count("tool_use") == 1
    assert any("thinking" in n.text for n in run.rec.of("notice"))


async def test_the_fake_refuses_what_the_api_refuses(fake_openai: FakeOpenAIServer) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=fake_openai.url, api_key="k", max_retries=0)
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
    assert "No tool output found for function call c1" in fake_openai.rejections[0]
    assert "No tool call found" in fake_openai.rejections[1]
    assert "could not be verified" in fake_openai.rejections[2]
    with pytest.raises(openai.BadRequestError):  # not a reasoning model
        await client.responses.create(model="gpt-test", input=[user], stream=True,
                                      reasoning={"summary": "auto"})
    assert fake_openai.requests == []
    await client.close()


@pytest.mark.parametrize(("reply", "words"), [
    (Reply(text="abcdef", malformed=True), "malformed"),
    (Reply(text="abcdef", cut=True), "ended before"),
    (Reply.failure(500, "server error", kind="server_error"), "500"),
])
async def test_bad_streams_are_clear_errors(fake_openai: FakeOpenAIServer, reply: Reply,
                                            words: str) -> None:
    provider = make_configured("fake", entries(fake_openai.url, "openai-responses"))
    fake_openai.enqueue(reply)
    request = base.ModelRequest(model="gpt-test", system="s",
                                messages=[{"role": "user", "content": "go"}])
    with pytest.raises(base.ProviderError) as caught:
        async for _ in provider.stream(request):
            pass
    assert words in str(caught.value) and caught.value.retryable
    await provider.aclose()


async def test_esc_cancels_a_background_run_on_the_server_after_closing_the_stream(
        fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    configured = entries(fake_openai.url, "openai-responses")
    configured["fake"]["background"] = True
    default = make_configured("fake", configured)
    fake_openai.enqueue(Reply(text="a long run that stalls", chunk=4, stall_after=(4, 30)),
                        Reply(text="fine"))
    run = session(routed("fake", default, lambda n: default, configured), tmp_path, "gpt-test")
    run.submit(UserMessage(text="go"))
    await run.rec.wait_type("text_delta")
    run.submit(Interrupt())
    await run.idle()
    await asyncio.to_thread(fake_openai.wait_for, "cancelled", 1, 5.0)
    (number, _), = fake_openai.disconnects
    assert fake_openai.requests[number]["background"] is True
    assert fake_openai.requests[number]["store"] is True
    assert fake_openai.paths[-1].endswith("/cancel")  # after the stream's close
    await converse(run, "again")  # the session goes on
    await run.close()
    assert run.rec.of("turn_ended")[-1].status == "completed"
    assert len(fake_openai.cancelled) == 1  # a finished run is not cancelled
