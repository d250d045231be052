"""The fake API's Models API, model catalogue and context window, through the real SDK."""

from __future__ import annotations

import pytest

from tests.fake_api import DEFAULT_MODELS, FakeAnthropicServer, ModelSpec, Reply
from tests.fake_api.fixtures import fake_api, sdk_aclient, sdk_client  # noqa: F401

anthropic = pytest.importorskip("anthropic")

HI = [{"role": "user", "content": "hi"}]


def test_default_catalogue_lists_real_ids_and_the_test_models(sdk_client):
    ids = [m.id for m in sdk_client.models.list()]
    assert ids[:3] == ["claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-4-5"]
    assert {"claude-test", "claude-bench", "claude-chaos"} <= set(ids)
    from agent_tui.providers.anthropic import DEFAULT_MODEL
    assert DEFAULT_MODEL in ids


def test_retrieve_gives_window_output_ceiling_and_capabilities(sdk_client):
    info = sdk_client.models.retrieve("claude-sonnet-5-5")
    assert (info.max_input_tokens, info.max_tokens) == (1_000_000, 128_000)
    assert info.display_name == "Claude Sonnet 5.5" and info.lifecycle == "active"
    caps = info.capabilities
    assert caps.thinking.supported and caps.thinking.types.adaptive.supported
    assert not caps.thinking.types.enabled.supported
    assert caps.effort.supported and caps.effort.xhigh.supported
    haiku = sdk_client.models.retrieve("claude-haiku-4-5").capabilities
    assert not haiku.effort.supported and not haiku.effort.low.supported
    assert haiku.thinking.types.enabled.supported and not haiku.thinking.types.adaptive.supported


def test_list_pages_with_limit_and_cursors(sdk_client):
    first = sdk_client.models.list(limit=2)
    assert [m.id for m in first.data] == ["claude-opus-5-5", "claude-sonnet-5-5"]
    assert first.has_more and first.first_id == "claude-opus-5-5"
    assert first.last_id == "claude-sonnet-5-5"
    nxt = sdk_client.models.list(limit=2, after_id=first.last_id)
    assert [m.id for m in nxt.data] == ["claude-haiku-4-5", "claude-test"] and nxt.has_more
    back = sdk_client.models.list(limit=2, before_id="claude-test")
    assert [m.id for m in back.data] == ["claude-sonnet-5-5", "claude-haiku-4-5"]
    assert back.has_more  # claude-opus-5-5 comes before them
    everything = [m.id for m in sdk_client.models.list(limit=4)]  # auto-pagination
    assert everything == [m.id for m in DEFAULT_MODELS]
    with pytest.raises(anthropic.BadRequestError):
        sdk_client.models.list(limit=0)


def test_lifecycle_filter_hides_retired_models_unless_asked():
    specs = [ModelSpec("claude-new"), ModelSpec("claude-old", lifecycle="retired")]
    with FakeAnthropicServer(models=specs) as srv:
        with anthropic.Anthropic(base_url=srv.url, api_key="t", max_retries=0) as c:
            assert [m.id for m in c.models.list()] == ["claude-new"]
            assert [m.id for m in c.models.list(lifecycle=["retired"])] == ["claude-old"]


def test_unknown_model_is_a_404_in_both_apis(fake_api, sdk_client):
    fake_api.enqueue(Reply.text("not consumed"))
    with pytest.raises(anthropic.NotFoundError) as ei:
        sdk_client.models.retrieve("claude-nope-9")
    assert ei.value.body["error"] == {"type": "not_found_error", "message": "model: claude-nope-9"}
    with pytest.raises(anthropic.NotFoundError) as ei:
        sdk_client.messages.create(model="claude-nope-9", max_tokens=5, messages=HI)
    assert ei.value.body["error"]["message"] == "model: claude-nope-9"
    assert fake_api.pending == 1 and fake_api.rejections == []


def test_accept_unknown_models_serves_a_generic_model():
    with FakeAnthropicServer(accept_unknown_models=True) as srv:
        with anthropic.Anthropic(base_url=srv.url, api_key="t", max_retries=0) as c:
            assert c.messages.create(model="whatever", max_tokens=5, messages=HI).model == "whatever"
            with pytest.raises(anthropic.NotFoundError):
                c.models.retrieve("whatever")  # the catalogue itself is unchanged


def test_prompt_above_the_window_is_the_documented_400(fake_api, sdk_client):
    fake_api.configure_model("claude-test", max_input_tokens=4000)
    fake_api.enqueue(Reply.text("not consumed"))
    small = [{"role": "user", "content": "x" * 15_000}]
    assert sdk_client.messages.create(model="claude-test", max_tokens=5, messages=small)
    big = [{"role": "user", "content": "x" * 16_000}]
    n = fake_api.count_tokens({"model": "claude-test", "messages": big})
    with pytest.raises(anthropic.BadRequestError) as ei:
        sdk_client.messages.create(model="claude-test", max_tokens=5, messages=big)
    assert ei.value.body["error"] == {"type": "invalid_request_error",
                                      "message": f"prompt is too long: {n} tokens > 4000 maximum"}
    assert fake_api.rejections[-1].startswith("prompt is too long:")


def test_newer_models_accept_input_plus_max_tokens_above_the_window(fake_api, sdk_client):
    fake_api.configure_model("claude-test", max_input_tokens=4000)
    msgs = [{"role": "user", "content": "x" * 15_000}]
    fake_api.enqueue(Reply.context_window_exceeded("and then I ran out"))
    msg = sdk_client.messages.create(model="claude-test", max_tokens=3000, messages=msgs)
    assert msg.stop_reason == "model_context_window_exceeded"


def test_older_models_reject_input_plus_max_tokens_above_the_window():
    spec = ModelSpec("claude-old", max_input_tokens=4000, overflow_is_error=True)
    with FakeAnthropicServer(models=[spec]) as srv:
        with anthropic.Anthropic(base_url=srv.url, api_key="t", max_retries=0) as c:
            body = {"model": "claude-old", "messages": [{"role": "user", "content": "x" * 15_000}]}
            n = srv.count_tokens(body)
            with pytest.raises(anthropic.BadRequestError) as ei:
                c.messages.create(max_tokens=3000, **body)
    assert ei.value.body["error"]["message"] == (
        f"input length and `max_tokens` exceed context limit: {n} + 3000 > 4000, "
        "decrease input length or `max_tokens` and try again")


def test_max_tokens_above_the_models_ceiling(sdk_client):
    with pytest.raises(anthropic.BadRequestError) as ei:
        sdk_client.messages.create(model="claude-haiku-4-5", max_tokens=64_001, messages=HI,
                                   stream=True)
    assert ei.value.body["error"]["message"] == (
        "max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens "
        "for claude-haiku-4-5")


def test_models_option_takes_dicts_and_bare_ids():
    with FakeAnthropicServer(models=[{"id": "claude-a", "max_input_tokens": 1234}, "claude-b"]) as srv:
        assert list(srv.models) == ["claude-a", "claude-b"]
        assert srv.models["claude-a"].max_input_tokens == 1234
        spec = srv.configure_model("claude-c", max_tokens=10)
        assert spec.max_tokens == 10 and "claude-c" in srv.models


@pytest.mark.asyncio
async def test_async_models_api(sdk_aclient):
    info = await sdk_aclient.models.retrieve("claude-opus-5-5")
    assert info.max_tokens == 128_000
    ids = [m.id async for m in sdk_aclient.models.list(limit=1)]
    assert len(ids) == len(DEFAULT_MODELS)


@pytest.mark.asyncio
async def test_a_model_id_that_is_no_path_segment_is_not_asked(fake_api):  # noqa: F811
    """A model named by a settings file (a cloned repository's) is looked up at
    ``/v1/models/{id}``: an id such as ``..`` or an empty one is refused before any request,
    said as a provider error, never sent elsewhere on the server."""
    from agent_tui.providers.anthropic import AnthropicProvider
    from agent_tui.providers.base import ProviderError

    provider = AnthropicProvider(api_key="test", base_url=fake_api.url)
    try:
        for bad in ("..", ""):
            with pytest.raises(ProviderError, match="cannot be looked up"):
                await provider.model_info(bad)
        assert fake_api.traffic == []  # nothing asked
        info = await provider.model_info("claude-test")  # a real id still is
        assert info is not None and info.id == "claude-test"
    finally:
        await provider.aclose()
