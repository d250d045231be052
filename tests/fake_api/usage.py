"""What the fake reports as ``usage``, and the per-request record tests compare against.

Shapes, as the SDK's ``Usage`` / ``MessageDeltaUsage`` describe them:

* ``message_start.message.usage``: ``input_tokens``, ``cache_creation_input_tokens``,
  ``cache_read_input_tokens``, ``cache_creation`` (``ephemeral_5m_input_tokens``,
  ``ephemeral_1h_input_tokens``), ``output_tokens: 1`` (small, as the real API sends it
  before anything is generated) and ``service_tier``;
* ``message_delta.usage``: cumulative totals: ``output_tokens`` and the three input
  figures again, plus ``output_tokens_details.thinking_tokens`` when the reply thought;
* a non-streaming message carries the final figures of both;
* a reply that used the web search tool adds ``server_tool_use`` (``web_search_requests``,
  ``web_fetch_requests``) to ``message_delta.usage`` and the final message's usage.

``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` is the whole
prompt (:mod:`tests.fake_api.tokens`), split by :mod:`tests.fake_api.cache`.

:class:`UsageRecord` is one entry of ``FakeAnthropicServer.usage``: for each
``/v1/messages`` request answered with a message (not the 4xx rejections nor scripted HTTP
errors), what the server told the client. ``output_tokens`` is the last figure the client
was sent: 1 from ``message_start`` while the stream has not reached ``message_delta``
(a cut, stalled or failed stream), the final count after it (a non-streaming request: 0
until its body went out). ``completed`` is True once
``message_stop`` (or the JSON body) went out; ``interrupted`` is its opposite for a
response that had started. ``planned_output_tokens`` is what the full reply would report;
``streamed_output_tokens`` estimates (``ceil(chars / 4)``) the deltas actually written.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cache import CacheUsage

__all__ = ["UsageRecord", "start_usage", "delta_usage", "message_usage"]

START_OUTPUT_TOKENS = 1


def _input_part(cu: CacheUsage) -> dict:
    return {"input_tokens": cu.input_tokens,
            "cache_creation_input_tokens": cu.cache_creation_input_tokens,
            "cache_read_input_tokens": cu.cache_read_input_tokens}


def start_usage(cu: CacheUsage) -> dict:
    return {**_input_part(cu),
            "cache_creation": {"ephemeral_5m_input_tokens": cu.cache_creation_5m,
                               "ephemeral_1h_input_tokens": cu.cache_creation_1h},
            "output_tokens": START_OUTPUT_TOKENS, "service_tier": "standard"}


def delta_usage(cu: CacheUsage, output_tokens: int, thinking_tokens: int,
                server_tool_use: dict | None = None) -> dict:
    out = {**_input_part(cu), "output_tokens": output_tokens}
    if thinking_tokens:
        out["output_tokens_details"] = {"thinking_tokens": thinking_tokens}
    if server_tool_use is not None:
        out["server_tool_use"] = dict(server_tool_use)
    return out


def message_usage(cu: CacheUsage, output_tokens: int, thinking_tokens: int,
                  server_tool_use: dict | None = None) -> dict:
    out = {**start_usage(cu), "output_tokens": output_tokens}
    if thinking_tokens:
        out["output_tokens_details"] = {"thinking_tokens": thinking_tokens}
    if server_tool_use is not None:
        out["server_tool_use"] = dict(server_tool_use)
    return out


@dataclass(frozen=True)
class UsageRecord:
    """What one request was told about its usage (see the module docstring)."""

    request_index: int
    model: str
    stream: bool
    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cache_creation_5m: int
    cache_creation_1h: int
    output_tokens: int
    planned_output_tokens: int
    thinking_tokens: int
    stop_reason: str | None
    completed: bool = False
    streamed_output_tokens: int = 0
    web_search_requests: int = 0  # usage.server_tool_use: the searches that ran

    @property
    def interrupted(self) -> bool:
        return not self.completed

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def as_usage(self) -> dict:
        """The four figures as the API names them (what a journal should have recorded)."""
        return {"input_tokens": self.input_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens,
                "output_tokens": self.output_tokens}
