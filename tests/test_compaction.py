"""Compaction: a session in a small window compacts and completes every turn; the
journal keeps everything; Esc and failures leave the history exactly as it was."""

from __future__ import annotations

import pytest

import asyncio

from agent_tui.core.history.history import check_model_view, model_view
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import CompactionRecord, RewindRecord, UserMessageRecord
from agent_tui.protocol import Compact, Interrupt, RestoreWhat, UserMessage
from agent_tui.providers.anthropic import AnthropicProvider
from tests.fake_api import FakeAnthropicServer, ModelSpec, Reply
from tests.harness import QuickTool, plain, start_session


pytestmark = pytest.mark.asyncio

ASK = "Write a summary of this conversation"


def provider_for(srv) -> AnthropicProvider:
    return AnthropicProvider(api_key="test-key", base_url=srv.url)


def last_text(body: dict) -> str:
    blocks = body["messages"][-1]["content"]
    texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
    return texts[-1] if texts else ""


def is_summary_request(body: dict) -> bool:
    return ASK in last_text(body)


class Model:
    """Answers every request from what it asks: a summary, a tool call, or text."""

    def __init__(self, *, summary_reply=None) -> None:
        self.summaries = 0
        self.summary_reply = summary_reply

    def __call__(self, body: dict) -> Reply:
        if is_summary_request(body):
            self.summaries += 1
            if self.summary_reply is not None:
                return self.summary_reply()
            return Reply.text(f"summary #{self.summaries}: the user asked for numbered steps")
        last = body["messages"][-1]["content"]
        if any(b.get("type") == "tool_result" for b in last):
            return Reply.text("step done " + "y" * 300)
        return Reply.tool_use("quick", {"note": "n" * 600})


def enqueue_model(srv, model: Model, n: int) -> None:
    for _ in range(n):
        srv.enqueue(model)


async def test_forty_turns_in_a_small_window_compact_and_every_turn_completes(tmp_path):
    with FakeAnthropicServer(models=[ModelSpec("claude-test", max_input_tokens=9000)]) as srv:
        model = Model()
        enqueue_model(srv, model, 200)
        run = start_session(provider_for(srv), [QuickTool()], tmp_path)
        for i in range(40):
            run.submit(UserMessage(text=f"turn {i}: do the next step " + "w" * 200))
            await run.idle(timeout=30)
        await run.close()
        assert srv.rejections == []
        ended = [e.status for e in run.rec.of("turn_ended")]
        assert ended == ["completed"] * 40
        compactions = [r for r in run.journal.records if isinstance(r, CompactionRecord)]
        assert model.summaries >= 2 and len(compactions) == model.summaries
        # Each turn's own message reached the model, in that turn's first request.
        turn_requests = [b for b in srv.requests if b and not is_summary_request(b)]
        for i in range(40):
            assert any(f"turn {i}: do the next step" in str(plain(b["messages"]))
                       for b in turn_requests), i
        states = [e.state for e in run.rec.of("compaction")]
        assert states.count("started") == states.count("completed") == len(compactions)
        # The journal keeps everything: every user message is still there.
        users = [r for r in run.journal.records if isinstance(r, UserMessageRecord)]
        assert len(users) == 40
        check_model_view(model_view(run.journal.records))


async def test_prompt_too_long_compacts_then_the_request_is_retried_once(tmp_path):
    with FakeAnthropicServer(models=[ModelSpec("claude-test", max_input_tokens=200_000)]) as srv:
        model = Model()
        enqueue_model(srv, model, 20)
        run = start_session(provider_for(srv), [QuickTool()], tmp_path)
        for i in range(3):
            run.submit(UserMessage(text=f"warm up {i} " + "w" * 2000))
            await run.idle()
        srv.configure_model("claude-test", max_input_tokens=srv.count_tokens(srv.requests[-1]))
        run.submit(UserMessage(text="now it overflows " + "v" * 3000))
        await run.idle(timeout=30)
        await run.close()
        assert any("prompt is too long" in r for r in srv.rejections)
        assert run.rec.of("compaction")[-1].trigger == "overflow"
        assert run.rec.of("turn_ended")[-1].status == "completed"


async def test_compact_on_demand_when_idle_with_a_focus(fake_api, tmp_path):
    model = Model()
    enqueue_model(fake_api, model, 10)
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path)
    run.submit(UserMessage(text="first task"))
    await run.idle()
    run.submit(Compact(instructions="the file names"))
    await run.rec.wait_for(lambda: any(e.state == "completed" for e in run.rec.of("compaction")))
    await run.idle()
    summary_body = next(b for b in fake_api.requests if is_summary_request(b))
    assert "Focus especially on: the file names" in last_text(summary_body)
    # Same system prompt and tools as the turn's requests: the cache is reused.
    assert summary_body["system"] == fake_api.requests[0]["system"]
    assert summary_body["tools"] == fake_api.requests[0]["tools"]
    run.submit(UserMessage(text="second task"))
    await run.idle()
    await run.close()
    first = plain(fake_api.requests[-2]["messages"][0]["content"])
    assert "summary #1" in first[0]["text"] and "second task" in str(first)
    assert fake_api.rejections == []


async def test_esc_during_compaction_leaves_the_history_exactly_as_it_was(fake_api, tmp_path):
    model = Model(summary_reply=lambda: Reply.stall("summarizing...", seconds=20))
    enqueue_model(fake_api, model, 10)
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path)
    run.submit(UserMessage(text="a task"))
    await run.idle()
    before = model_view(run.journal.records)
    run.submit(Compact())
    await run.rec.wait_for(lambda: model.summaries == 1)
    await asyncio.sleep(0.2)
    run.submit(Interrupt())
    await run.rec.wait_for(lambda: any(e.state == "cancelled" for e in run.rec.of("compaction")))
    await run.idle()
    assert model_view(run.journal.records) == before
    assert not [r for r in run.journal.records if isinstance(r, CompactionRecord)]
    assert any("unchanged" in e.text for e in run.rec.of("notice"))
    usage = run.rec.of("usage")[-1]
    assert usage.purpose == "compaction" and usage.interrupted
    await run.close()


async def test_a_steer_queued_during_compaction_is_applied_after_it(tmp_path):
    with FakeAnthropicServer(models=[ModelSpec("claude-test", max_input_tokens=9000)]) as srv:
        model = Model(summary_reply=lambda: Reply.slow_text("summary of it all", delay=0.1))
        enqueue_model(srv, model, 100)
        run = start_session(provider_for(srv), [QuickTool()], tmp_path)
        i = 0
        while not run.rec.of("compaction"):
            run.submit(UserMessage(text=f"turn {i} " + "w" * 400))
            if i > 30:
                raise AssertionError("no compaction started")
            # Wait until either the turn ends or a compaction starts.
            await run.rec.wait_for(lambda: len(run.rec.of("turn_ended")) > i
                                   or bool(run.rec.of("compaction")), timeout=20)
            i += 1
        run.submit(UserMessage(text="STEER: use tabs"))
        await run.idle(timeout=30)
        await run.close()
        assert [e.state for e in run.rec.of("steer_state")] == ["queued", "applied"]
        after = [b for b in srv.requests if b and not is_summary_request(b)
                 and "STEER: use tabs" in str(b["messages"])]
        assert after and srv.rejections == []
        assert run.rec.of("compaction")[-1].state == "completed"


async def test_a_failed_compaction_leaves_the_session_usable_and_says_why(fake_api, tmp_path):
    model = Model(summary_reply=lambda: Reply.error(400, "invalid_request_error", "bad summary"))
    enqueue_model(fake_api, model, 10)
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path)
    run.submit(UserMessage(text="a task"))
    await run.idle()
    before = model_view(run.journal.records)
    run.submit(Compact())
    await run.rec.wait_for(lambda: any(e.state == "failed" for e in run.rec.of("compaction")))
    await run.idle()
    assert model_view(run.journal.records) == before
    assert any("compaction failed" in e.text and "bad summary" in e.text
               for e in run.rec.of("notice"))
    run.submit(UserMessage(text="still here?"))
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "completed"
    await run.close()


async def test_an_overloaded_summary_request_is_tried_again_as_a_turns_would_be(fake_api, tmp_path):
    replies = iter([Reply.error(529, "overloaded_error", retry_after=0)])
    model = Model(summary_reply=lambda: next(replies, None) or Reply.text("summary after a retry"))
    enqueue_model(fake_api, model, 10)
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path)
    run.submit(UserMessage(text="a task"))
    await run.idle()
    run.submit(Compact())
    await run.rec.wait_for(lambda: any(e.state in ("completed", "failed")
                                       for e in run.rec.of("compaction")))
    await run.idle()
    await run.close()
    assert run.rec.of("compaction")[-1].state == "completed"
    assert model.summaries == 2
    (retry,) = run.rec.of("retry_scheduled")
    assert retry.attempt == 1 and retry.reason.startswith("compaction: ")


async def test_esc_during_a_summary_retry_back_off_sends_no_further_request(fake_api, tmp_path):
    model = Model(summary_reply=lambda: Reply.error(529, "overloaded_error", retry_after=30))
    enqueue_model(fake_api, model, 10)
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path)
    run.submit(UserMessage(text="a task"))
    await run.idle()
    before = model_view(run.journal.records)
    run.submit(Compact())
    await run.rec.wait_type("retry_scheduled")
    run.submit(Interrupt())
    await run.rec.wait_for(lambda: any(e.state == "cancelled" for e in run.rec.of("compaction")))
    await run.idle()
    await run.close()
    assert model.summaries == 1  # the back-off ended with no second request
    assert model_view(run.journal.records) == before


async def test_resume_after_compaction_and_rewind_before_it_restores_everything(fake_api, tmp_path):
    model = Model()
    enqueue_model(fake_api, model, 20)
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    from agent_tui.core.services.deps import AgentConfig, SessionDeps
    from agent_tui.core.calls.permission import AllowAll
    from agent_tui.core.session.session import Session
    from agent_tui.core.calls.tool import ToolSet
    from tests.harness import Recorder, Running

    rec = Recorder()
    deps = SessionDeps(config=AgentConfig(workspace=tmp_path, model="claude-test"),
                       provider=provider_for(fake_api), tools=ToolSet([QuickTool()]),
                       policy=AllowAll(), journal=journal, emit=rec)
    run = Running(Session(deps), rec, journal)
    run.submit(UserMessage(text="first task"))
    await run.idle()
    after_first = model_view(journal.records)
    run.submit(UserMessage(text="second task"))
    await run.idle()
    full = model_view(journal.records)
    second_turn = [r for r in journal.records if isinstance(r, UserMessageRecord)][1]
    run.submit(Compact())
    await run.rec.wait_for(lambda: any(e.state == "completed" for e in run.rec.of("compaction")))
    await run.idle()
    await run.close()
    compacted = model_view(journal.records)
    assert compacted != full and "summary #1" in str(compacted)
    resumed = Journal.load(path)
    assert model_view(resumed.records) == compacted
    # A rewind of the conversation to before the compaction brings it all back.
    rewound = resumed.records + [RewindRecord(checkpoint_id=second_turn.turn_id,
                                              restore=RestoreWhat.CONVERSATION)]
    assert model_view(rewound) == after_first  # verbatim, not the summary
    assert "summary" not in str(after_first) and "second task" in str(full)


async def test_without_a_models_api_one_rejection_says_the_window_and_compaction_runs_ahead(tmp_path):
    """A gateway (no Models API) serving a model the built-in table does not know: the
    first "prompt is too long" gives the window; after it, every compaction is ahead of
    the window (one rejection in the session, not one per compaction)."""
    spec = ModelSpec("claude-test", max_input_tokens=5000)
    with FakeAnthropicServer(models=[spec], models_api=False) as srv:
        model = Model()
        enqueue_model(srv, model, 400)
        run = start_session(provider_for(srv), [QuickTool()], tmp_path)
        for i in range(30):
            run.submit(UserMessage(text=f"turn {i}: do the next step " + "w" * 200))
            await run.idle(timeout=30)
        await run.close()
    too_long = [r for r in srv.rejections if "prompt is too long" in r]
    assert len(too_long) == 1, too_long
    assert too_long[0].endswith("> 5000 maximum")
    compactions = [r for r in run.journal.records if isinstance(r, CompactionRecord)]
    assert len(compactions) >= 3 and model.summaries == len(compactions)
    assert [r.trigger for r in compactions][1:] == ["auto"] * (len(compactions) - 1)
    assert [e.status for e in run.rec.of("turn_ended")] == ["completed"] * 30
    notices = [e.text for e in run.rec.of("notice")]
    assert not any("unknown model" in t for t in notices)  # a 404 of no Models API says nothing
    assert sum("context window is 5,000 tokens" in t for t in notices) == 1
    assert run.rec.of("model_changed")[-1].context_window == 5000
    check_model_view(model_view(run.journal.records))


async def test_the_window_is_read_from_the_apis_message_and_only_from_it():
    from agent_tui.core.usage.limits import ModelLimits, Overflow, parse_overflow
    from agent_tui.providers.base import ErrorKind, ProviderError

    said = ProviderError("400: prompt is too long: 210345 tokens > 200000 maximum",
                         status=400, kind=ErrorKind.CONTEXT_OVERFLOW)
    assert parse_overflow(str(said)) == Overflow(prompt_tokens=210345, window=200000)
    assert parse_overflow("400: prompt is too long") is None  # no figures: nothing learnt
    limits = ModelLimits(settings_window=500_000)
    assert limits.window("gateway/model") == 500_000
    assert limits.learn_from_overflow("gateway/model", said) == Overflow(210345, 200000)
    assert limits.window("gateway/model") == 200_000  # what the endpoint enforces wins
    assert limits.window("another-model") == 500_000  # for that model only


async def test_a_routed_anthropic_id_has_its_models_window() -> None:
    from agent_tui.core.usage.limits import DEFAULT_WINDOW, ModelLimits

    limits = ModelLimits()  # a window the default is not, so a miss shows
    for model_id in ("claude-opus-4-7", "anthropic/claude-opus-4-7", "bedrock/claude-opus-4-7",
                     "us.anthropic.claude-opus-4-7-v1:0", "claude-opus-4-7@20260101"):
        assert limits.window(model_id) == 1_000_000 != DEFAULT_WINDOW, model_id
        assert limits.max_output(model_id) == 128_000, model_id
    assert limits.window("ollama/claude-opus-4-7-look-alike") == DEFAULT_WINDOW
