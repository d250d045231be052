"""The first request of a session asks for thinking as the model offers it, before the
Models API has answered: a known model from the built-in table at once, an unknown one
after waiting for the lookup already on its way (a cancel point: Esc or Ctrl-C end the
wait at once). The real SDK over HTTP against the fake API, whose Models API can be
held (a slow lookup)."""

from __future__ import annotations

import logging
import signal
import time
from typing import Any

import pytest
from anthropic.types import ModelInfo as SdkModelInfo
from pydantic import BaseModel

from agent_tui.core.usage.known_models import known_model
from agent_tui.core.usage.limits import LOOKUP_TIMEOUT_S
from agent_tui.protocol import Interrupt, UserMessage
from tests.fake_api import DEFAULT_MODELS, Reply
from tests.fake_api.models import model_info
from tests.forked_runs import end_agent, popen_agent
from tests.harness import provider_for, start_session
from tests.print_agent import api_env, events_of

ADAPTIVE = {"type": "adaptive", "display": "summarized"}
LOOKUP = "/v1/models/claude-test"


def _missing(shape: type[BaseModel], given: dict[str, Any], at: str = "") -> list[str]:
    """The fields of the SDK's type (and of its nested types) the JSON leaves out."""
    missing = []
    for name, field in shape.model_fields.items():
        if name not in given:
            missing.append(at + name)
            continue
        kind = field.annotation
        inner = [a for a in getattr(kind, "__args__", (kind,)) if isinstance(a, type)]
        nested = next((a for a in inner if issubclass(a, BaseModel)), None)
        if nested is not None and isinstance(given[name], dict):
            missing += _missing(nested, given[name], f"{at}{name}.")
    return missing


def test_the_fakes_models_carry_every_capability_the_sdk_types_name() -> None:
    for spec in DEFAULT_MODELS:
        assert _missing(SdkModelInfo, model_info(spec)) == [], spec.id


def test_the_table_agrees_with_the_fake_on_the_models_both_know() -> None:
    for spec in DEFAULT_MODELS:
        row = known_model(spec.id)
        if row is None:
            continue
        assert row.thinking_adaptive == ("adaptive" in spec.thinking_types), spec.id
        assert row.thinking_enabled == ("enabled" in spec.thinking_types), spec.id
        assert row.thinking_disabled == ("disabled" in spec.thinking_types), spec.id
        assert row.effort_levels == list(spec.effort_levels), spec.id


def test_a_newer_model_of_a_known_family_is_unknown_not_assumed() -> None:
    assert known_model("claude-sonnet-5-6") is None
    assert known_model("us.anthropic.claude-opus-4-6-v1:0").thinking_adaptive  # type: ignore[union-attr]
    assert not known_model("claude-sonnet-4-5-20250929").thinking_adaptive  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_a_known_model_asks_for_adaptive_thinking_before_the_lookup_answers(
        fake_api, tmp_path) -> None:
    fake_api.hold_models()
    run = start_session(provider_for(fake_api), [], tmp_path, model="claude-sonnet-5-5")
    try:
        run.submit(UserMessage(text="hello"))
        await run.rec.wait_type("turn_ended")
        assert fake_api.requests[0]["thinking"] == ADAPTIVE
        assert "answered /v1/models/claude-sonnet-5-5" not in fake_api.traffic
    finally:
        fake_api.release_models()
        await run.close()


@pytest.mark.asyncio
async def test_an_unknown_models_first_request_waits_for_a_slow_lookup(
        fake_api, tmp_path, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="agent_tui.core.turn.turn")
    fake_api.hold_models()
    fake_api.enqueue(Reply.text("first"), Reply.text("second"))
    run = start_session(provider_for(fake_api), [], tmp_path)  # claude-test: not in the table
    try:
        run.submit(UserMessage(text="hello"))
        await run.rec.wait_for(lambda: f"asked {LOOKUP}" in fake_api.traffic)
        assert "messages" not in fake_api.traffic
        fake_api.release_models()
        await run.rec.wait_type("turn_ended")
        traffic = fake_api.traffic
        assert traffic.index(f"answered {LOOKUP}") < traffic.index("messages")
        assert fake_api.requests[0]["thinking"] == ADAPTIVE
        assert any("waited" in r.getMessage() and "claude-test" in r.getMessage()
                   for r in caplog.records)
        run.submit(UserMessage(text="again"))
        await run.rec.wait_type("turn_ended", 2)
        assert fake_api.requests[1]["thinking"] == ADAPTIVE
        assert traffic.count(f"asked {LOOKUP}") == fake_api.traffic.count(f"asked {LOOKUP}")
    finally:
        fake_api.release_models()
        await run.close()


@pytest.mark.asyncio
async def test_esc_while_the_first_request_waits_for_the_lookup_ends_the_turn_at_once(
        fake_api, tmp_path) -> None:
    fake_api.hold_models()
    run = start_session(provider_for(fake_api), [], tmp_path)
    try:
        run.submit(UserMessage(text="hello"))
        await run.rec.wait_for(lambda: f"asked {LOOKUP}" in fake_api.traffic)
        pressed = time.monotonic()
        run.submit(Interrupt())
        await run.rec.wait_type("turn_ended", timeout=LOOKUP_TIMEOUT_S)
        assert time.monotonic() - pressed < LOOKUP_TIMEOUT_S / 2  # not the lookup's timeout
        assert run.rec.of("turn_ended")[0].status == "cancelled"
        assert fake_api.requests == []
    finally:
        fake_api.release_models()
        await run.close()


def test_print_mode_sends_adaptive_thinking_on_its_first_request_after_a_slow_lookup(
        fake_api, tmp_path) -> None:
    fake_api.hold_models()
    proc = popen_agent(["-p", "hello", "--model", "claude-test", "--cwd", str(tmp_path)],
                       env=api_env(tmp_path, fake_api), stdout=-1, stderr=-1, text=True)
    try:
        assert fake_api.wait_for_traffic(f"asked {LOOKUP}", timeout=60)
        assert "messages" not in fake_api.traffic
        fake_api.release_models()
        out, err = proc.communicate(timeout=60)
    finally:
        fake_api.release_models()
        end_agent(proc, 10)
    assert proc.returncode == 0, err
    assert fake_api.requests[0]["thinking"] == ADAPTIVE


def test_ctrl_c_while_print_mode_waits_for_the_lookup_ends_the_turn_at_once(
        fake_api, tmp_path) -> None:
    fake_api.hold_models()
    proc = popen_agent(["-p", "hello", "--model", "claude-test", "--output-format",
                        "stream-json", "--verbose", "--cwd", str(tmp_path)],
                       env=api_env(tmp_path, fake_api), stdout=-1, stderr=-1, text=True)
    try:
        assert fake_api.wait_for_traffic(f"asked {LOOKUP}", timeout=60)
        pressed = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - pressed
    finally:
        fake_api.release_models()
        end_agent(proc, 10)
    assert proc.returncode == 130, err
    assert took < LOOKUP_TIMEOUT_S / 2, took  # ended by the cancel, not the lookup's timeout
    assert fake_api.requests == []
    ended = [e for e in events_of(out) if e.get("type") == "turn_ended"]
    assert ended and ended[0]["status"] == "cancelled", out
