"""An Anthropic-compatible server through a ``providers`` entry with ``api:
"anthropic"``: what it lacks is detected (no Models API, ``cache_control`` refused),
never assumed, and the session goes on with what it has."""

from __future__ import annotations

import pytest

from agent_tui.providers import base
from agent_tui.providers.compatible import CompatibleAnthropicProvider
from agent_tui.providers.config import ProviderConfig
from tests.fake_api import FakeAnthropicServer, Reply

pytestmark = pytest.mark.asyncio


def compatible(url: str, **extra: object) -> CompatibleAnthropicProvider:
    cfg = ProviderConfig.model_validate({
        "api": "anthropic", "baseURL": url, "apiKeyEnv": "LOCAL_KEY", "free": True,
        "models": {"claude-test": {"contextWindow": 32_768, "maxOutput": 4096}}, **extra})
    return CompatibleAnthropicProvider("local", cfg)


async def test_a_server_without_a_models_api_is_detected() -> None:
    with FakeAnthropicServer(models_api=False) as srv:
        provider = compatible(srv.url)
        info = await provider.model_info("claude-test")
        assert info is not None and info.max_input_tokens == 32_768 and info.max_tokens == 4096
        assert "models" in provider.lacks
        assert await provider.model_info("not-configured") is None  # unknown, not an error
        assert [m.id for m in await provider.list_models()] == ["claude-test"]
        await provider.aclose()


async def test_an_unknown_model_on_a_server_with_a_models_api_is_still_refused(
        fake_api: FakeAnthropicServer) -> None:
    provider = compatible(fake_api.url)
    with pytest.raises(base.ProviderError) as caught:
        await provider.model_info("no-such-model")
    assert caught.value.kind is base.ErrorKind.NOT_FOUND and "models" not in provider.lacks
    await provider.aclose()


async def test_refused_cache_control_is_learnt_and_the_request_sent_without_it(
        fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.error(400, "invalid_request_error",
                                 "messages.0.content.0.cache_control: Extra inputs are not "
                                 "permitted"), Reply.text("fine without it"))
    provider = compatible(fake_api.url)
    request = base.ModelRequest(model="claude-test", system=[
        {"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": [
            {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}])
    text = "".join([e.text async for e in provider.stream(request)
                    if isinstance(e, base.TextDelta)])
    assert text == "fine without it" and "cacheControl" in provider.lacks
    assert "cache_control" not in str(fake_api.requests[-1])
    await provider.aclose()
