"""Usage of every model request, its cost, and prompt caching, against the fake API.

The fake counts tokens and caches prefixes by breakpoints as the Messages API
documents (tests/fake_api); the agent must report exactly what the API said and
place its breakpoints so that a long session reads most of its input from the cache.
"""

from __future__ import annotations

import pytest

import asyncio

from agent_tui.core.journal.records import UsageRecord
from agent_tui.core.usage.pricing import PriceTable
from agent_tui.protocol import Interrupt, UserMessage
from agent_tui.providers.anthropic import AnthropicProvider
from tests.fake_api import ModelSpec, Reply
from tests.harness import QuickTool, start_session


pytestmark = pytest.mark.asyncio

def provider_for(srv) -> AnthropicProvider:
    return AnthropicProvider(api_key="test-key", base_url=srv.url)


def usage_records(journal) -> list[UsageRecord]:
    return [r for r in journal.records if isinstance(r, UsageRecord)]


async def test_each_request_records_exactly_the_usage_the_api_reported(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("quick", {"note": "look"}), Reply.text("done looking"))
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path)
    run.submit(UserMessage(text="look around"))
    await run.idle()
    await run.close()
    recorded = usage_records(run.journal)
    api = fake_api.usage
    assert len(recorded) == len(api) == 2
    for ours, theirs in zip(recorded, api):
        assert (ours.input_tokens, ours.output_tokens) == (theirs.input_tokens, theirs.output_tokens)
        assert ours.cache_read_input_tokens == theirs.cache_read_input_tokens
        assert ours.cache_creation_input_tokens == theirs.cache_creation_input_tokens
        assert not ours.interrupted
    events = run.rec.of("usage")
    assert [e.input_tokens for e in events] == [r.input_tokens for r in recorded]
    assert all(e.purpose == "turn" and e.model == "claude-test" for e in events)
    assert all(e.context_window == 200_000 for e in events)


async def test_an_interrupted_request_is_billed_and_marked_interrupted(fake_api, tmp_path):
    fake_api.enqueue(Reply.stall("thinking about it", seconds=20))
    run = start_session(provider_for(fake_api), [], tmp_path)
    run.submit(UserMessage(text="take your time"))
    await run.rec.wait_for(lambda: any(e.text for e in run.rec.of("text_delta")))
    run.submit(Interrupt())
    await run.idle()
    await run.close()
    (ours,) = usage_records(run.journal)
    assert fake_api.wait_for_usage(1, completed=False)
    (theirs,) = fake_api.usage
    assert ours.interrupted and theirs.interrupted
    # What message_start said, and the output figure the client had been sent.
    assert ours.input_tokens == theirs.input_tokens > 0
    assert ours.output_tokens == theirs.output_tokens
    assert run.rec.of("usage")[0].interrupted is True


async def test_cost_uses_the_family_price_and_says_unknown_otherwise():
    table = PriceTable()
    cost = table.cost("claude-haiku-4-5-20251001", input_tokens=1_000_000, output_tokens=0,
                      cache_read_input_tokens=1_000_000, cache_creation_input_tokens=0)
    assert cost == 1.0 + 0.10
    assert table.cost("claude-sonnet-5-5", input_tokens=10, output_tokens=10) is None
    priced = PriceTable({"claude-sonnet-5-5": {"input": 2, "output": 10, "cache_write": 2.5,
                                               "cache_read": 0.1}})
    assert priced.cost("claude-sonnet-5-5", input_tokens=1_000_000, output_tokens=0) == 2.0
    broken = PriceTable({"claude-x": {"input": "a lot"}})
    assert broken.problems and broken.lookup("claude-x") is None


async def test_the_system_prompt_and_tools_are_byte_identical_across_requests(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("quick", {"note": "a"}), Reply.text("one"),
                     Reply.text("two"))
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path)
    run.submit(UserMessage(text="first"))
    await run.idle()
    run.submit(UserMessage(text="second"))
    await run.idle()
    await run.close()
    bodies = fake_api.requests
    assert len(bodies) == 3
    assert all(b["system"] == bodies[0]["system"] for b in bodies)
    assert all(b["tools"] == bodies[0]["tools"] for b in bodies)
    assert str(tmp_path) in bodies[0]["system"][0]["text"]  # the environment is in it
    marks = [sum("cache_control" in blk for m in b["messages"] for blk in m["content"])
             + sum("cache_control" in blk for blk in b["system"]) for b in bodies]
    assert all(1 <= n <= 4 for n in marks)


def _tool_then_text(i: int) -> list[Reply]:
    return [Reply.tool_use("quick", {"note": f"step {i} " + "x" * 400}),
            Reply.text(f"finished step {i}: " + "y" * 200)]


async def test_a_long_session_reads_most_of_its_input_from_the_cache(fake_api, tmp_path):
    turns = 12
    for i in range(turns):
        fake_api.enqueue(*_tool_then_text(i))
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path)
    for i in range(turns):
        run.submit(UserMessage(text=f"do step {i} " + "z" * 300))
        await run.idle()
    await run.close()
    assert fake_api.rejections == []
    records = usage_records(run.journal)
    total = sum(r.input_tokens + r.cache_read_input_tokens + r.cache_creation_input_tokens
                for r in records)
    read = sum(r.cache_read_input_tokens for r in records)
    assert read / total >= 0.75, (read, total)


async def test_an_unknown_price_reports_none_not_a_guess(tmp_path):
    srv_models = [ModelSpec("claude-test")]
    from tests.fake_api import FakeAnthropicServer

    with FakeAnthropicServer(models=srv_models) as srv:
        srv.enqueue(Reply.text("hi"))
        run = start_session(provider_for(srv), [], tmp_path)
        run.submit(UserMessage(text="hello"))
        await run.idle()
        await run.close()
    (event,) = run.rec.of("usage")
    assert event.cost_usd is None
    await asyncio.sleep(0)


async def test_stream_json_carries_one_usage_event_per_request_and_takes_compact(fake_api,
                                                                               tmp_path):
    import json
    import subprocess
    import sys

    from tests.print_agent import env_for, events_of

    def answer(body):
        blocks = body["messages"][-1]["content"]
        if any("Write a summary of this conversation" in b.get("text", "") for b in blocks):
            return Reply.text("the summary")
        return Reply.text("an answer")

    for _ in range(4):
        fake_api.enqueue(answer)
    ops = "\n".join(json.dumps(op) for op in (
        {"type": "user_message", "text": "first"},
        {"type": "compact", "instructions": "keep names"},
        {"type": "user_message", "text": "second"},
    )) + "\n"
    out = subprocess.run(
        [sys.executable, "-m", "agent_tui.cli", "-p", "--input-format", "stream-json",
         "--output-format", "stream-json", "--model", "claude-test", "--cwd", str(tmp_path)],
        input=ops, capture_output=True, text=True, timeout=60,
        env=env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url),
    )
    assert out.returncode == 0, out.stderr
    events = events_of(out.stdout)
    usage = [e for e in events if e["type"] == "usage"]
    assert [u["purpose"] for u in usage] == ["turn", "compaction", "turn"]
    for u in usage:
        assert set(u) >= {"turn_id", "model", "input_tokens", "output_tokens",
                          "cache_read_input_tokens", "cache_creation_input_tokens",
                          "interrupted", "purpose"}
    states = [e["state"] for e in events if e["type"] == "compaction"]
    assert states == ["started", "completed"]
    done = next(e for e in events if e["type"] == "compaction" and e["state"] == "completed")
    assert done["tokens_before"] > 0 and done["tokens_after"] > 0
    assert len(fake_api.requests) == 3 and fake_api.rejections == []


async def test_memory_is_in_the_prompt_and_a_subfolders_joins_once_it_is_worked_in(fake_api,
                                                                                  tmp_path):
    import os

    ws = tmp_path / "ws"
    (ws / "pkg" / "deep").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("Always run make check.")
    (ws / "pkg" / "AGENTS.md").write_text("pkg: use tabs.")
    user = tmp_path / "xdg" / "agent-tui"
    user.mkdir(parents=True)
    (user / "CLAUDE.md").write_text("The user prefers short answers.")
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    try:
        fake_api.enqueue(Reply.tool_use("quick", {"note": "x", "path": "pkg/deep/file.py"}),
                         Reply.text("ok"), Reply.text("again"))
        run = start_session(provider_for(fake_api), [QuickTool()], ws)
        run.submit(UserMessage(text="edit pkg/deep/file.py"))
        await run.idle()
        run.submit(UserMessage(text="more"))
        await run.idle()
        await run.close()
    finally:
        del os.environ["XDG_CONFIG_HOME"]
    system = fake_api.requests[0]["system"][0]["text"]
    assert "Always run make check." in system and "short answers" in system
    assert "pkg: use tabs." not in system  # not loaded at start
    second = str(fake_api.requests[1]["messages"])
    assert "pkg: use tabs." in second
    assert str(fake_api.requests[2]["messages"]).count("pkg: use tabs.") == 1
    assert fake_api.requests[2]["system"] == fake_api.requests[0]["system"]
    assert [m.scope for m in run.session.memory()] == ["user", "project"]


async def test_context_report_says_what_fills_the_window(fake_api, tmp_path):
    from agent_tui.protocol import ShowContext

    fake_api.enqueue(Reply.tool_use("quick", {"note": "q" * 2000}), Reply.text("done"))
    run = start_session(provider_for(fake_api), [QuickTool()], tmp_path)
    run.submit(ShowContext())
    await run.rec.wait_type("context_report")
    before = run.rec.of("context_report")[0]
    assert not before.measured
    run.submit(UserMessage(text="go"))
    await run.idle()
    run.submit(ShowContext())
    await run.rec.wait_type("context_report", 2)
    await run.close()
    report = run.rec.of("context_report")[1]
    parts = {i.label: i.tokens for i in report.items}
    assert report.measured and report.window == 200_000
    assert report.used == fake_api.usage[-1].total_input_tokens
    assert parts["tool output"] > 400 and parts["system prompt"] > 200 and parts["tools"] > 0
