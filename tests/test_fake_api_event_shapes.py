"""Every event the fake streams, held to the SDK's own type of a stream event.

agent-tui reads the Messages API's stream as the JSON the API sends (``cast_to=object``;
``providers/anthropic.py``), not through the SDK's event models, which are made without
checking what they hold. So the fake's events are checked here the strict way: each one,
as the real SDK receives it over HTTP, is validated against
``anthropic.types.RawMessageStreamEvent`` (every required field there, of its type; every
``type`` one the SDK knows), for each kind of reply the fake can give.
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic.types import RawMessageStreamEvent
from pydantic import TypeAdapter

from tests.fake_api import FakeAnthropicServer, Reply
from tests.fake_api.fixtures import fake_api  # noqa: F401  (fixture)

EVENT = TypeAdapter(RawMessageStreamEvent)
BASH = {"name": "bash", "description": "run a command",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}
SEARCH = {"type": "web_search_20250305", "name": "web_search"}
THINK = {"type": "enabled", "budget_tokens": 1024}

#: (what the fake answers, what the request adds to its body)
CASES: dict[str, tuple[Reply, dict[str, Any]]] = {
    "text": (Reply.text("hello there"), {}),
    "tool_use": (Reply.tool_use("bash", {"command": "ls"}), {"tools": [BASH]}),
    "thinking": (Reply.thinking("let me see", "done").with_redacted_thinking(),
                 {"thinking": THINK}),
    "web_search_cited": (Reply.web_search("q", [("A page", "https://example.com/a")],
                                          "found it", cite=[0]), {"tools": [SEARCH]}),
    "max_tokens": (Reply.max_tokens("cut short"), {}),
    "stop_sequence": (Reply.stop_sequence("one two", "END"), {"stop_sequences": ["END"]}),
    "refusal": (Reply.refusal("no"), {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_streamed_event_is_one_the_sdk_s_type_accepts(
        fake_api: FakeAnthropicServer, case: str) -> None:  # noqa: F811
    reply, extra = CASES[case]
    fake_api.enqueue(reply)
    body = {"model": "claude-test", "max_tokens": 2048, "stream": True,
            "messages": [{"role": "user", "content": "go"}], **extra}
    with anthropic.Anthropic(base_url=fake_api.url, api_key="test", max_retries=0,
                             timeout=10) as client:
        stream = client.post("/v1/messages", body=body, cast_to=object, stream=True,
                             stream_cls=anthropic.Stream[object])
        events = list(stream)
    assert fake_api.rejections == [] and fake_api.errors == []
    assert events and all(isinstance(e, dict) for e in events)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    for event in events:
        EVENT.validate_python(event)  # raises on a missing field, a wrong type or kind


def test_the_check_fails_on_an_event_the_sdk_would_not_accept() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):  # a content block start without its block
        EVENT.validate_python({"type": "content_block_start", "index": 0})
    with pytest.raises(ValidationError):  # a text delta whose text is not a string
        EVENT.validate_python({"type": "content_block_delta", "index": 0,
                               "delta": {"type": "text_delta", "text": 3}})
