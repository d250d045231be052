"""Fake Anthropic Messages API server for tests (stdlib only, loopback only).

    from tests.fake_api import FakeAnthropicServer, Reply, validate_messages

See ``server.py`` for the scripting API and ``validate.py`` for request validation.
The pytest fixture ``fake_api`` lives in ``tests.fake_api.fixtures``.
"""

from .server import FakeAnthropicServer, Reply, new_tool_use_id
from .validate import validate_messages

__all__ = ["FakeAnthropicServer", "Reply", "new_tool_use_id", "validate_messages"]
