"""Strict fakes of OpenAI's Chat Completions and Responses APIs (see ``server.py``)."""

from .replies import Call, Reply
from .server import FakeOpenAIServer, ModelSpec

__all__ = ["Call", "FakeOpenAIServer", "ModelSpec", "Reply"]
