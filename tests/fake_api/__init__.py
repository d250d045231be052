"""Fake Anthropic Messages API server for tests (stdlib only, loopback only).

    from tests.fake_api import FakeAnthropicServer, Reply, validate_messages

Where to look:

* ``server.py``: :class:`FakeAnthropicServer`, its options and what it records;
* ``replies.py`` and ``reply_stops.py``: every :class:`Reply` factory (text, tools,
  stalls, errors, thinking, each stop reason, ``pause_turn`` continuation);
* ``tokens.py``: the token estimator behind ``usage`` and ``count_tokens``;
* ``cache.py`` and ``validate_cache.py``: prompt caching by breakpoints and prefixes;
* ``models.py``: the model catalogue, context windows and the Models API;
* ``thinking.py`` and ``validate_thinking.py``: signatures and the thinking rules;
* ``web_search.py`` and ``validate_web_search.py``: the server-side web search tool;
* ``validate.py``: the order of validation and the message-shape rules;
* ``usage.py``: the usage shapes and ``srv.usage`` records.
* ``vertex.py`` and ``bedrock.py``: the same replies behind Google Vertex AI's and
  Amazon Bedrock's wire formats (``FakeVertexServer``, ``FakeBedrockServer``), with
  ``aws_wire.py`` for SigV4 and the AWS event stream.

The pytest fixture ``fake_api`` lives in ``tests.fake_api.fixtures``.
"""

from .cache import FakeClock
from .ids import new_tool_use_id
from .models import DEFAULT_MODELS, ModelSpec
from .replies import Reply
from .server import FakeAnthropicServer
from .usage import UsageRecord
from .validate import validate_messages

__all__ = ["FakeAnthropicServer", "Reply", "ModelSpec", "DEFAULT_MODELS", "FakeClock",
           "UsageRecord", "new_tool_use_id", "validate_messages"]
