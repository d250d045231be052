"""The strict fakes (``tests/fake_api``, ``tests/fake_openai``) behind one face for the
peers: a scene (a short answer, a stream that stalls, a shell call of a process tree)
answers every request that carries tools; a request without tools (the title that
Claude Code and opencode ask for first) gets a short title.

The Anthropic fake checks agent-tui's requests strictly; a peer's are taken as they
come (``strict=False``): Claude Code sends what the fake refuses (``role: "system"``
messages mid-conversation, newer ``thinking`` fields), and the bench times stops, not
the shapes of requests.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tests.fake_api import FakeAnthropicServer
from tests.fake_api import Reply as AReply
from tests.fake_openai import FakeOpenAIServer, ModelSpec
from tests.fake_openai import Reply as OReply

from bench.peers_setup import OPENAI_MODEL

STALL_TEXT = "Thinking about it"
ANSWER = "Benchmark answer ready"
TITLE = "Bench title"


class Scene:
    """What the model does next: ``text``, ``stall`` or ``tree`` (one shell call)."""

    def __init__(self) -> None:
        self.mode = "text"
        self.command = ""
        self.tool = "bash"
        self._called = False
        self.lock = threading.Lock()

    def set(self, mode: str, command: str = "", tool: str = "bash") -> None:
        with self.lock:
            self.mode, self.command, self.tool, self._called = mode, command, tool, False

    def next(self) -> tuple[str, str]:
        """("text" | "stall" | "call", payload) for the next request with tools."""
        with self.lock:
            if self.mode == "stall":
                return "stall", STALL_TEXT
            if self.mode == "tree" and not self._called:
                self._called = True
                return "call", self.command
            return "text", ANSWER


class _Anthropic(FakeAnthropicServer):
    def __init__(self, scene: Scene, strict: bool) -> None:
        super().__init__(accept_unknown_models=True, default_reply=AReply.text(TITLE),
                         validate=strict)
        self.scene = scene

    def _next_reply(self, body: dict) -> AReply:
        if not body.get("tools"):
            return AReply.text(TITLE)
        kind, payload = self.scene.next()
        if kind == "stall":
            return AReply.stall(after_text=payload, seconds=60)
        if kind == "call":
            return AReply.tool_use(self.scene.tool, {"command": payload,
                                                     "description": "bench tree"})
        return AReply.text(payload)


class _OpenAI(FakeOpenAIServer):
    def __init__(self, scene: Scene) -> None:
        super().__init__([ModelSpec(OPENAI_MODEL)])
        self.scene = scene

    def take(self, body: dict[str, Any]) -> tuple[int, OReply]:
        number, _ = super().take(body)
        if not body.get("tools"):
            return number, OReply(text=TITLE)
        kind, payload = self.scene.next()
        if kind == "stall":
            return number, OReply(text=payload + ".", chunk=len(payload),
                                  stall_after=(2, 60.0))  # before the "."
        if kind == "call":
            return number, OReply.tool(self.scene.tool, {"command": payload,
                                                         "description": "bench tree"})
        return number, OReply(text=payload)


class PeerServer:
    """One fake on 127.0.0.1 for one peer: its URL, its scene, what it saw."""

    def __init__(self, api: str, strict: bool = True) -> None:
        self.scene = Scene()
        self.api = api
        if api == "openai":
            self._openai: _OpenAI | None = _OpenAI(self.scene)
            self._openai.__enter__()
            self._anthropic: _Anthropic | None = None
        else:
            self._openai = None
            self._anthropic = _Anthropic(self.scene, strict).start()

    @property
    def url(self) -> str:
        """The base URL as the peer's configuration takes it (OpenAI's ends in /v1)."""
        if self._openai is not None:
            return self._openai.url
        assert self._anthropic is not None
        return self._anthropic.url

    @property
    def disconnects(self) -> list[tuple[int, float]]:
        if self._openai is not None:
            return list(self._openai.disconnects)
        assert self._anthropic is not None
        return list(self._anthropic.disconnects)

    @property
    def requests(self) -> int:
        if self._openai is not None:
            return len(self._openai.requests)
        assert self._anthropic is not None
        return len(self._anthropic.requests)

    @property
    def refused(self) -> list[str]:
        """What the strict fake refused (a peer's request it would not take)."""
        if self._openai is not None:
            return list(self._openai.rejections)
        assert self._anthropic is not None
        return list(self._anthropic.rejections)

    def wait_disconnect(self, count: int, timeout: float) -> float | None:
        """The time the ``count``-th client close was seen, or None after ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = self.disconnects
            if len(seen) >= count:
                return seen[count - 1][1]
            time.sleep(0.002)
        return None

    def stop(self) -> None:
        if self._openai is not None:
            self._openai.__exit__(None, None, None)
        if self._anthropic is not None:
            self._anthropic.stop()
