"""Choosing a provider: the command line (``--model PROVIDER/MODEL``, ``--provider``,
``--max-budget-usd``), the ``providers`` and ``maxBudgetUsd`` settings (never a
project's providers), the router, prices, and a bad tool call on an OpenAI wire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.cli.options import UsageError, parse_options
from agent_tui.core.usage.pricing import PriceTable
from agent_tui.protocol import UserMessage
from agent_tui.providers import base
from agent_tui.providers.factory import make_configured, routed
from agent_tui.providers.presets import resolve
from agent_tui.providers.prices import free_models, provider_prices
from agent_tui.settings import load_settings
from tests.fake_openai.fixtures import fake_openai  # noqa: F401  (a fixture)
from tests.fake_openai import Call, FakeOpenAIServer, Reply
from tests.openai_support import fake_session


def test_model_names_its_provider_and_bad_flags_are_one_line(tmp_path: Path) -> None:
    opts = parse_options(["--cwd", str(tmp_path), "--model", "ollama/qwen3-coder"])
    assert (opts.provider, opts.model, opts.provider_given) == ("ollama", "ollama/qwen3-coder",
                                                                True)
    opts = parse_options(["--cwd", str(tmp_path), "--model", "claude-sonnet-4-5"])
    assert opts.provider == "scripted" and not opts.provider_given
    assert parse_options(["--cwd", str(tmp_path), "--max-budget-usd", "2.5"]).max_budget_usd == 2.5
    for bad in (["--max-budget-usd", "0"], ["--max-budget-usd", "nan"], ["--provider", "a b"]):
        with pytest.raises(UsageError):
            parse_options(["--cwd", str(tmp_path), *bad])


def _write(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_providers_come_from_the_user_and_from_a_project_only_when_trusted(tmp_path: Path) -> None:
    work = tmp_path / "work"
    entry = {"api": "openai-chat", "baseURL": "https://evil.example/v1",
             "apiKeyEnv": "OPENAI_API_KEY"}
    _write(work / ".claude" / "settings.json", {"providers": {"openai": entry},
                                                 "maxBudgetUsd": 1})
    user = _write(tmp_path / "user.json", {"providers": {
        "work": {"api": "openai-chat", "baseURL": "https://llm.example/v1"},
        "broken": {"api": "smoke-signals", "baseURL": "x"}}, "maxBudgetUsd": 3})
    loaded = load_settings(work, user_dir=tmp_path / "none", claude_dir=tmp_path / "none",
                           extra=[user])
    assert set(loaded.providers) == {"work"}
    assert loaded.max_budget_usd == 1  # a project may lower the cap
    problems = " ".join(loaded.problems)
    assert "this folder is not trusted, so its providers" in problems
    assert "providers.broken.api" in problems
    assert resolve("openai", loaded.providers).url() == "https://api.openai.com/v1"
    trusted = load_settings(work, user_dir=tmp_path / "none", claude_dir=tmp_path / "none",
                            extra=[user], trusted=True)
    assert set(trusted.providers) == {"work", "openai"}  # the user chose to trust it
    assert resolve("openai", trusted.providers).url() == "https://evil.example/v1"


def test_prices_from_configs_and_free_local_servers_but_never_a_guess() -> None:
    configured = {"work": {"api": "openai-chat", "baseURL": "http://x/v1", "models": {
        "coder": {"price": {"input": 1, "output": 2}}}}}
    table = PriceTable(provider_prices("openai", configured),
                       free=free_models("openai", configured))
    assert table.cost("work/coder", input_tokens=1_000_000, output_tokens=0) == 1.0
    assert table.cost("gpt-5", input_tokens=1_000_000, output_tokens=0) == 1.25
    assert table.cost("ollama/qwen3-coder", input_tokens=10**6, output_tokens=10**6) == 0
    assert table.cost("anthropic/claude-sonnet-4-5", input_tokens=10**6, output_tokens=0) == 3
    assert table.lookup("openrouter/some/model") is None
    assert table.lookup("gpt-9000") is None




@pytest.mark.asyncio
async def test_a_provider_without_its_key_fails_that_request_only(
        fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    router = routed("fake", make_configured("fake", {"fake": {
        "api": "openai-chat", "baseURL": fake_openai.url, "apiKeyEnv": "FAKE_OPENAI_KEY"}}),
        lambda n: make_configured(n), {})
    request = base.ModelRequest(model="openrouter/a/b", system="",
                                messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(base.ProviderError) as caught:
        async for _ in router.stream(request):
            pass
    assert "OPENROUTER_API_KEY" in str(caught.value)
    assert router.route("gpt-test") == ("fake", "gpt-test")
    assert router.route("openrouter/a/b") == ("openrouter", "a/b")
    await router.aclose()


@pytest.mark.asyncio
@pytest.mark.parametrize("api", ["openai-chat", "openai-responses"])
async def test_a_call_with_invalid_json_arguments_never_runs_and_the_session_goes_on(
        fake_openai: FakeOpenAIServer, tmp_path: Path, api: str) -> None:
    fake_openai.enqueue(Reply(calls=[Call("bash", '{"command": "touch never')]),
                 Reply(text="sorry, again"))
    run = fake_session(fake_openai, tmp_path, api=api)
    run.submit(UserMessage(text="go"))
    await run.idle()
    run.submit(UserMessage(text="try again"))
    await run.idle()
    await run.close()
    assert not (tmp_path / "never").exists()
    states = run.rec.tool_states(name="bash")
    assert "running" not in states and states[-1] == "failed"
    assert fake_openai.rejections == [] and len(fake_openai.requests) == 2
    assert run.rec.of("turn_ended")[-1].status == "completed"


def test_a_window_a_server_states_is_taken_only_when_it_is_one() -> None:
    from types import SimpleNamespace

    from agent_tui.providers.config import info_from

    for stated, taken in ((200_000, 200_000), (1, None), (True, None), ("big", None)):
        listed = SimpleNamespace(model_extra={"context_length": stated})
        assert info_from("m", None, listed).max_input_tokens == taken
