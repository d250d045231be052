"""The fake API's server-side web search tool, through the real SDK over HTTP."""

from __future__ import annotations

import copy

import pytest

from tests.fake_api import Reply
from tests.fake_api.fixtures import fake_api, sdk_client  # noqa: F401

anthropic = pytest.importorskip("anthropic")

MODEL = "claude-test"
HI = [{"role": "user", "content": "what is new in python?"}]
SEARCH = {"type": "web_search_20250305", "name": "web_search"}
RESULTS = [("What's new in Python 3.14", "https://docs.python.org/3.14/whatsnew/3.14.html",
            "2 days ago"), ("Python Release 3.14.0", "https://www.python.org/downloads/")]


def _search(**kw):
    return Reply.web_search("python 3.14 news", RESULTS, "Python 3.14 is out.", cite=[0], **kw)


def _dumped(message):
    return [b.model_dump(exclude_none=True) for b in message.content]


def test_a_search_streams_its_blocks_citations_and_usage(fake_api, sdk_client):
    fake_api.enqueue(_search())
    with sdk_client.messages.stream(model=MODEL, max_tokens=300, messages=HI,
                                    tools=[SEARCH]) as stream:
        kinds = [e.delta.type for e in stream if e.type == "content_block_delta"]
        msg = stream.get_final_message()
    assert "input_json_delta" in kinds and "citations_delta" in kinds
    use, result, text = msg.content
    assert use.type == "server_tool_use" and use.id.startswith("srvtoolu_")
    assert use.name == "web_search" and use.input == {"query": "python 3.14 news"}
    assert result.type == "web_search_tool_result" and result.tool_use_id == use.id
    assert [(r.title, r.url, r.page_age) for r in result.content] == [
        (RESULTS[0][0], RESULTS[0][1], "2 days ago"), (RESULTS[1][0], RESULTS[1][1], None)]
    assert all(r.encrypted_content for r in result.content)
    cite = text.citations[0]
    assert cite.type == "web_search_result_location" and cite.url == RESULTS[0][1]
    assert cite.cited_text == "Python 3.14 is out." and cite.encrypted_index
    assert msg.usage.server_tool_use.web_search_requests == 1
    assert fake_api.usage[-1].web_search_requests == 1
    # the same, not streamed
    fake_api.enqueue(_search())
    plain = sdk_client.messages.create(model=MODEL, max_tokens=300, messages=HI, tools=[SEARCH])
    assert [b.type for b in plain.content] == ["server_tool_use", "web_search_tool_result", "text"]
    assert plain.usage.server_tool_use.web_search_requests == 1


def test_the_error_form_and_max_uses(fake_api, sdk_client):
    fake_api.enqueue(Reply.web_search("q", error="unavailable"))
    msg = sdk_client.messages.create(model=MODEL, max_tokens=300, messages=HI, tools=[SEARCH])
    assert msg.content[1].content.type == "web_search_tool_result_error"
    assert msg.content[1].content.error_code == "unavailable"
    assert msg.usage.server_tool_use.web_search_requests == 0  # an error is not billed
    two = Reply.message(Reply.web_search("a", RESULTS).blocks + Reply.web_search("b", RESULTS).blocks)
    fake_api.enqueue(two)
    msg = sdk_client.messages.create(model=MODEL, max_tokens=300, messages=HI,
                                     tools=[{**SEARCH, "max_uses": 1}])
    assert isinstance(msg.content[1].content, list)
    assert msg.content[3].content.error_code == "max_uses_exceeded"
    assert msg.usage.server_tool_use.web_search_requests == 1


def test_pause_turn_continuation_sends_the_content_back_as_is(fake_api, sdk_client):
    fake_api.enqueue(_search(pause=True), Reply.text("Here is what I found."))
    with sdk_client.messages.stream(model=MODEL, max_tokens=300, messages=HI,
                                    tools=[SEARCH]) as stream:
        paused = stream.get_final_message()
    assert paused.stop_reason == "pause_turn"
    sent = _dumped(paused)
    more = sdk_client.messages.create(model=MODEL, max_tokens=300, tools=[SEARCH],
                                      messages=HI + [{"role": "assistant", "content": sent}])
    assert more.content[0].text == "Here is what I found."
    # a later request holding the blocks is checked like every other block
    later = HI + [{"role": "assistant", "content": sent + _dumped(more)},
                  {"role": "user", "content": "thanks"}]
    fake_api.enqueue(Reply.text("welcome"))
    assert sdk_client.messages.create(model=MODEL, max_tokens=300, tools=[SEARCH],
                                      messages=later).content[0].text == "welcome"


def _rejected(sdk_client, messages, tools=(SEARCH,)):
    with pytest.raises(anthropic.BadRequestError) as ei:
        sdk_client.messages.create(model=MODEL, max_tokens=300, tools=list(tools),
                                   messages=messages)
    return ei.value.body["error"]["message"]


def test_blocks_sent_back_altered_or_unpaired_are_refused(fake_api, sdk_client):
    fake_api.enqueue(_search())
    sent = _dumped(sdk_client.messages.create(model=MODEL, max_tokens=300, messages=HI,
                                              tools=[SEARCH]))
    after = [{"role": "user", "content": "and?"}]
    # the result without its server_tool_use
    msg = _rejected(sdk_client, HI + [{"role": "assistant", "content": sent[1:]}] + after)
    assert "has no `server_tool_use`" in msg
    # a server_tool_use without its result, not at the end of a paused message
    msg = _rejected(sdk_client, HI + [{"role": "assistant", "content": [sent[0], sent[2]]}] + after)
    assert "has no result block" in msg
    # a result whose title, url or encrypted content changed
    for key in ("title", "url", "encrypted_content"):
        changed = copy.deepcopy(sent)
        changed[1]["content"][0][key] += "x"
        msg = _rejected(sdk_client, HI + [{"role": "assistant", "content": changed}] + after)
        assert "differs from the one the API sent" in msg
    changed = copy.deepcopy(sent)
    changed[2]["citations"][0]["cited_text"] = "something else"
    assert "citation was altered" in _rejected(
        sdk_client, HI + [{"role": "assistant", "content": changed}] + after)
    # a result in a user message
    msg = _rejected(sdk_client, [{"role": "user", "content": [sent[1]]}])
    assert "can only be in `assistant` messages" in msg
    # unchanged, it is accepted
    fake_api.enqueue(Reply.text("ok"))
    assert sdk_client.messages.create(model=MODEL, max_tokens=300, tools=[SEARCH], messages=(
        HI + [{"role": "assistant", "content": sent}] + after)).content[0].text == "ok"


@pytest.mark.parametrize("tool, words", [
    ({"type": "web_search_20250305", "name": "search"}, "name: Input should be 'web_search'"),
    ({"type": "web_search_20990101", "name": "web_search"}, "does not match any of the expected"),
    ({**SEARCH, "max_uses": 0}, "max_uses: Input should be greater than 0"),
    ({**SEARCH, "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}, "cannot be used together"),
    ({**SEARCH, "max_results": 3}, "max_results: Extra inputs are not permitted"),
    ({**SEARCH, "user_location": {"type": "exact"}}, "user_location.type"),
])
def test_a_tool_declared_wrongly_is_refused(fake_api, sdk_client, tool, words):
    assert words in _rejected(sdk_client, HI, tools=[tool])
    assert fake_api.pending == 0 and fake_api.usage == []


def test_a_scripted_search_needs_the_tool_declared(fake_api, sdk_client):
    fake_api.enqueue(_search())
    with pytest.raises(anthropic.InternalServerError):
        sdk_client.messages.create(model=MODEL, max_tokens=300, messages=HI)
    assert "declares no web_search tool" in fake_api.errors[0]
    fake_api._errors.clear()
