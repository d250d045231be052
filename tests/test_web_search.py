"""web_search: the API's server-side search behind a client tool asked per use, through
the real SDK over HTTP to the fake API (which models the server tool as documented)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.journal.journal import Journal
from agent_tui.core.usage.pricing import WEB_SEARCH_USD, PriceTable
from agent_tui.core.journal.records import ToolResultRecord, UsageRecord
from agent_tui.core.session.session import Session
from agent_tui.core.calls.tool import ToolSet
from agent_tui.core.usage.usage import UsageMeter
from agent_tui.permissions import PermissionRules, Permissions
from agent_tui.protocol import Decide, Decision, Interrupt, PermissionMode, UserMessage, Verdict
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.settings import load_settings
from agent_tui.tools.registry import default_tools
from agent_tui.tools.web.search import WebSearchTool
from agent_tui.ui.commands.reports import cost_report
from agent_tui.ui.render.usage import UsageTally
from tests.fake_api import Reply
from tests.fake_api.fixtures import fake_api, sdk_client  # noqa: F401
from tests.harness import Recorder, Running

anthropic = pytest.importorskip("anthropic")

PRICE = {"claude-test": {"input": 1, "output": 5, "cache_write": 1.25, "cache_read": 0.1}}
RESULTS = [("What's New In Python 3.14", "https://docs.python.org/3.14/whatsnew/3.14.html",
            "3 days ago"), ("Python 3.14.0 release", "https://www.python.org/downloads/release/")]
SERVER_TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 1}


def _searched(**kw) -> Reply:
    return Reply.web_search("python 3.14 release", RESULTS, "Python 3.14.0 came out in October.",
                            cite=[0, 1], **kw)


def _start(fake_api, tmp_path: Path, *, mode=PermissionMode.AUTO, rules=None,
           journal: Journal | None = None, retry_base: float = 0.01) -> Running:
    rec = Recorder()
    journal = journal if journal is not None else Journal(tmp_path / "journal.jsonl")
    deps = SessionDeps(
        config=AgentConfig(workspace=tmp_path, model="claude-test", retry_base=retry_base),
        provider=AnthropicProvider(api_key="k", base_url=fake_api.url),
        tools=ToolSet([WebSearchTool()]),
        policy=Permissions(tmp_path, mode, rules),
        journal=journal, emit=rec, usage=UsageMeter(PriceTable(PRICE)),
    )
    return Running(Session(deps), rec, journal)


def _search_requests(fake_api) -> list[dict]:
    return [body for body in fake_api.requests
            if any(t.get("type") == "web_search_20250305" for t in body.get("tools", []))]


@pytest.mark.asyncio
async def test_an_allowed_search_runs_once_and_shows_titles_and_links(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"}),
                     _searched(), Reply.text("It is out."))
    run = _start(fake_api, tmp_path)
    run.submit(UserMessage(text="is python 3.14 out?"))
    await run.idle()
    final = run.rec.final_tool("web_search")
    assert final.state == "succeeded"
    for title, url, *_ in RESULTS:
        assert title in final.result and url in final.result
    assert "(3 days ago)" in final.result and "came out in October" in final.result
    # one separate request declares the server tool, with one search at most
    (search,) = _search_requests(fake_api)
    assert search["tools"] == [SERVER_TOOL]
    assert search["messages"] == [{"role": "user", "content":
                                   "Perform a web search for the query: python 3.14 release"}]
    # the conversation's own requests never declare it: the model cannot search unasked
    main = [b for b in fake_api.requests if b is not search]
    assert all(t.get("type") is None for b in main for t in b["tools"])
    assert "Web search results" in str(main[-1]["messages"][-1]["content"])
    await run.close()


@pytest.mark.asyncio
async def test_ask_mode_asks_and_a_no_makes_no_search(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "secret project name"}),
                     Reply.text("I will not search."))
    run = _start(fake_api, tmp_path, mode=PermissionMode.ASK)
    run.submit(UserMessage(text="look it up"))
    await run.rec.wait_type("permission_requested")
    request = run.rec.of("permission_requested")[0]
    assert request.name == "web_search" and request.summary == "web_search secret project name"
    assert len(fake_api.requests) == 1  # nothing was searched while asking
    run.submit(Decide(tool_use_id=request.tool_use_id, decision=Decision.DENY))
    await run.idle()
    assert run.rec.final_tool("web_search").state == "denied"
    assert _search_requests(fake_api) == [] and len(fake_api.requests) == 2
    await run.close()


@pytest.mark.asyncio
async def test_a_websearch_deny_rule_holds_even_in_auto_mode(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "anything"}), Reply.text("ok"))
    run = _start(fake_api, tmp_path, rules=PermissionRules(deny=["WebSearch"]))
    run.submit(UserMessage(text="search"))
    await run.idle()
    assert run.rec.final_tool("web_search").state == "denied"
    assert run.rec.of("permission_requested") == []
    assert _search_requests(fake_api) == []
    await run.close()


@pytest.mark.asyncio
async def test_an_allow_rule_stops_the_asking(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"}),
                     _searched(), Reply.text("done"))
    run = _start(fake_api, tmp_path, mode=PermissionMode.ASK,
                 rules=PermissionRules(allow=["WebSearch"]))
    run.submit(UserMessage(text="search"))
    await run.idle()
    assert run.rec.of("permission_requested") == []
    assert run.rec.final_tool("web_search").state == "succeeded"
    await run.close()


@pytest.mark.asyncio
async def test_pause_turn_goes_on_with_the_content_sent_back_as_is(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"}),
                     _searched(pause=True), Reply.text("Python 3.14.0 is the latest."),
                     Reply.text("done"))
    run = _start(fake_api, tmp_path)
    run.submit(UserMessage(text="search"))
    await run.idle()
    first, again = _search_requests(fake_api)
    sent_back = again["messages"][-1]
    assert sent_back["role"] == "assistant"
    assert [b["type"] for b in sent_back["content"]] == ["server_tool_use", "web_search_tool_result"]
    assert again["messages"][:-1] == first["messages"]
    record = next(r for r in run.journal.records if isinstance(r, ToolResultRecord))
    content = record.details["search"]["content"]
    assert content[:2] == sent_back["content"]  # the journal keeps what was sent back
    assert content[2]["text"] == "Python 3.14.0 is the latest."
    assert "Python 3.14.0 is the latest." in run.rec.final_tool("web_search").result
    await run.close()


@pytest.mark.asyncio
async def test_the_blocks_survive_a_resume_verbatim_and_the_cost_counts_searches(
        fake_api, sdk_client, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"}),
                     _searched(), Reply.text("It is out."))
    run = _start(fake_api, tmp_path)
    run.submit(UserMessage(text="search"))
    await run.idle()
    await run.close()
    run.journal.close()
    resumed = Journal.load(tmp_path / "journal.jsonl")
    record = next(r for r in resumed.records if isinstance(r, ToolResultRecord))
    content = record.details["search"]["content"]
    assert [b["type"] for b in content] == ["server_tool_use", "web_search_tool_result", "text"]
    assert content[2]["citations"][0]["type"] == "web_search_result_location"
    # verbatim: the fake API takes them back only unchanged
    fake_api.enqueue(Reply.text("ok"))
    sdk_client.messages.create(model="claude-test", max_tokens=100, tools=[SERVER_TOOL],
                               messages=[{"role": "user", "content": "q"},
                                         {"role": "assistant", "content": content},
                                         {"role": "user", "content": "thanks"}])
    # usage: the search request's searches are counted and billed ($10 per 1,000)
    usage = [r for r in resumed.records if isinstance(r, UsageRecord)]
    (search_usage,) = [u for u in usage if u.purpose == "web_search"]
    assert search_usage.web_search_requests == 1
    tokens = PriceTable(PRICE).cost("claude-test", input_tokens=search_usage.input_tokens,
                                    output_tokens=search_usage.output_tokens,
                                    cache_read_input_tokens=search_usage.cache_read_input_tokens,
                                    cache_creation_input_tokens=search_usage.cache_creation_input_tokens)
    assert search_usage.cost_usd == pytest.approx(tokens + WEB_SEARCH_USD)
    tally = UsageTally()
    tally.add_records(resumed.records)
    assert tally.total().web_search_requests == 1
    page = cost_report(tally).plain
    assert "1 web search" in page and "$10 per 1,000" in page
    # a resumed session sends the results as the model saw them
    fake_api.enqueue(Reply.text("again"))
    later = _start(fake_api, tmp_path, journal=resumed)
    later.submit(UserMessage(text="and now?"))
    await later.idle()
    assert RESULTS[0][1] in str(fake_api.requests[-1]["messages"])
    await later.close()


@pytest.mark.asyncio
async def test_a_failed_search_is_a_tool_error_with_the_reason(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "x y"}),
                     Reply.web_search("x y", error="too_many_requests"), Reply.text("ok"))
    run = _start(fake_api, tmp_path)
    run.submit(UserMessage(text="search"))
    await run.idle()
    final = run.rec.final_tool("web_search")
    assert final.state == "failed" and "too_many_requests" in final.result
    assert "try again later" in final.result
    await run.close()


@pytest.mark.asyncio
async def test_one_allowed_call_runs_one_search_at_most(fake_api, tmp_path):
    twice = Reply.message(_searched().blocks[:2] + Reply.web_search("again", RESULTS).blocks)
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"}),
                     twice, Reply.text("ok"))
    run = _start(fake_api, tmp_path)
    run.submit(UserMessage(text="search"))
    await run.idle()
    final = run.rec.final_tool("web_search")
    assert final.state == "succeeded" and RESULTS[0][1] in final.result
    assert "A further search failed: max_uses_exceeded" in final.result
    usage = [e for e in run.rec.of("usage") if e.purpose == "web_search"]
    assert [u.web_search_requests for u in usage] == [1]
    await run.close()


@pytest.mark.asyncio
async def test_esc_during_the_search_stops_it_and_bills_what_was_used(fake_api, tmp_path):
    stalled = _searched()
    stalled.end, stalled.stall_seconds = "stall", 30.0
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"}), stalled)
    run = _start(fake_api, tmp_path)
    run.submit(UserMessage(text="search"))
    # the search request is streaming: the call's output says what it searched and found
    await run.rec.wait_for(lambda: "2 results" in "".join(e.text for e in run.rec.of("tool_output")))
    assert "searching: python 3.14 release" in run.rec.of("tool_output")[0].text
    run.submit(Interrupt())
    await run.rec.wait_type("turn_ended")
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    assert run.rec.final_tool("web_search").state == "cancelled_while_running"
    assert await asyncio.to_thread(fake_api.wait_for_disconnect, 5)
    (usage,) = [e for e in run.rec.of("usage") if e.purpose == "web_search"]
    assert usage.interrupted and usage.parent_tool_use_id == run.rec.final_tool("web_search").tool_use_id
    await run.close()


@pytest.mark.asyncio
async def test_a_search_request_the_api_refuses_is_a_tool_error_and_the_turn_goes_on(
        fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"}),
                     Reply.error(400, "invalid_request_error", "tools.0: unknown tool type"),
                     Reply.text("I could not search."))
    run = _start(fake_api, tmp_path)
    run.submit(UserMessage(text="search"))
    await run.idle()
    final = run.rec.final_tool("web_search")
    assert final.state == "failed" and "The web search request failed: 400" in final.result
    assert run.rec.of("retry_scheduled") == []  # a refusal is not tried again
    assert len(_search_requests(fake_api)) == 1
    assert run.rec.of("turn_ended")[-1].status == "completed"
    await run.close()


@pytest.mark.asyncio
async def test_an_overloaded_search_request_is_tried_again_and_then_searches(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"}),
                     Reply.error(529, "overloaded_error"), Reply.error(429, "rate_limit_error"),
                     _searched(), Reply.text("ok"))
    run = _start(fake_api, tmp_path)
    run.submit(UserMessage(text="search"))
    await run.idle()
    final = run.rec.final_tool("web_search")
    assert final.state == "succeeded" and RESULTS[0][1] in final.result
    retries = run.rec.of("retry_scheduled")
    assert [r.attempt for r in retries] == [1, 2]
    assert "web search" in retries[0].reason and "529" in retries[0].reason
    assert len(_search_requests(fake_api)) == 3
    assert [r.kind for r in run.journal.records if r.kind == "retry"] == ["retry", "retry"]
    await run.close()


@pytest.mark.asyncio
async def test_a_search_request_overloaded_every_time_fails_after_the_retries(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"}),
                     *[Reply.error(529, "overloaded_error") for _ in range(5)],
                     Reply.text("I could not search."))
    run = _start(fake_api, tmp_path)
    run.submit(UserMessage(text="search"))
    await run.idle()
    final = run.rec.final_tool("web_search")
    assert final.state == "failed" and "The web search request failed: 529" in final.result
    assert len(run.rec.of("retry_scheduled")) == 4  # AgentConfig.max_retries
    assert len(_search_requests(fake_api)) == 5
    assert run.rec.of("turn_ended")[-1].status == "completed"
    await run.close()


@pytest.mark.asyncio
async def test_esc_during_a_search_s_back_off_stops_it(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"}),
                     Reply.error(529, "overloaded_error"))
    run = _start(fake_api, tmp_path, retry_base=60.0)
    run.submit(UserMessage(text="search"))
    await run.rec.wait_type("retry_scheduled")
    run.submit(Interrupt())
    await run.rec.wait_type("turn_ended")
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    assert run.rec.final_tool("web_search").state == "cancelled_while_running"
    assert len(_search_requests(fake_api)) == 1
    await run.close()


def test_the_tool_is_offered_only_when_settings_enable_it(tmp_path):
    assert "web_search" not in default_tools(tmp_path).names()
    tools = default_tools(tmp_path, web_search=True).names()
    assert tools.index("web_search") == tools.index("web_fetch") + 1
    user, ws = tmp_path / "user", tmp_path / "ws"
    (ws / ".agent-tui").mkdir(parents=True)
    user.mkdir()
    assert load_settings(ws, user_dir=user, trusted=True).web_search_enabled is False
    (user / "settings.json").write_text('{"webSearch": {"enabled": true}}')
    assert load_settings(ws, user_dir=user, trusted=True).web_search_enabled is True
    (user / "settings.json").write_text('{"webSearch": {"enabled": "yes", "maxUses": 3}}')
    problems = load_settings(ws, user_dir=user, trusted=True).problems
    assert any("webSearch" in p for p in problems)


def test_the_input_takes_one_domain_filter():
    tool = WebSearchTool()
    assert tool.parse({"query": "abc", "allowed_domains": ["python.org"]}).allowed_domains
    with pytest.raises(ValueError, match="not both"):
        tool.parse({"query": "abc", "allowed_domains": ["a.org"], "blocked_domains": ["b.org"]})
    with pytest.raises(ValueError):
        tool.parse({"query": "a"})


def test_the_policy_asks_per_call_and_remembers_the_tool_for_the_session(tmp_path):
    tool = WebSearchTool()
    args = tool.parse({"query": "python news"})
    ask = Permissions(tmp_path, PermissionMode.ASK)
    ruling = ask.check(tool, args)
    assert ruling.verdict is Verdict.ASK
    assert ruling.reason == "WebSearch sends the query to a web search (billed per search)"
    ask.remember(tool, args)
    assert [r.text for r in ask.session_rules] == ["WebSearch"]
    assert ask.check(tool, tool.parse({"query": "other"})).verdict is Verdict.ALLOW
    assert Permissions(tmp_path, PermissionMode.PLAN).check(tool, args).verdict is Verdict.ASK
    assert Permissions(tmp_path, PermissionMode.ACCEPT_EDITS).check(tool, args).verdict is Verdict.ASK
    printing = Permissions(tmp_path, PermissionMode.ASK, non_interactive=True)
    assert printing.check(tool, args).verdict is Verdict.DENY
    allowed = PermissionRules(allow=["WebSearch"])
    assert Permissions(tmp_path, PermissionMode.ASK, allowed).check(tool, args).verdict is Verdict.ALLOW
    denied = PermissionRules(deny=["WebSearch"], allow=["WebSearch"])
    for mode in PermissionMode:
        assert Permissions(tmp_path, mode, denied).check(tool, args).verdict is Verdict.DENY
