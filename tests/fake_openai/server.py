"""A strict, scripted fake of OpenAI's Chat Completions and Responses APIs, over real
HTTP on 127.0.0.1, for the real ``openai`` SDK::

    with FakeOpenAIServer() as srv:
        srv.enqueue(Reply(text="hello"))
        client = openai.AsyncOpenAI(base_url=srv.url, api_key="k", max_retries=0)

Routes: ``POST /v1/chat/completions`` (streams only), ``POST /v1/responses``,
``POST /v1/responses/{id}/cancel``,
``GET /v1/models``, ``GET /v1/models/{id}``.
A request is checked (:mod:`tests.fake_openai.validate_chat`,
:mod:`tests.fake_openai.validate_responses`) before it takes the next scripted
:class:`~tests.fake_openai.replies.Reply`: a refused request never reaches the model.

Observation: ``requests`` (bodies that passed), ``rejections`` (400 messages),
``disconnects`` (request index and ``time.monotonic()`` when the client closed a
stalled or streaming answer), ``usage`` (what each answer counted: prompt, cached, output, interrupted).
Usage: the prompt is a quarter of its JSON's length; the cached part is the longest
prefix shared with an earlier request of the model, counted from 1024 tokens in steps
of 128, as OpenAI's prompt cache does.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .replies import ChatChunks, Reply
from .validate_chat import Invalid, check_chat

POLL = 0.015


@dataclass
class ModelSpec:
    id: str
    window: int = 128_000
    images: bool = False
    #: reasons: chat takes reasoning_content back (DeepSeek's rule); responses takes the
    #: reasoning parameter and gives reasoning items
    reasoning: bool = False


@dataclass
class UsageRecord:
    request: int
    prompt: int
    cached: int
    output: int
    interrupted: bool


class FakeOpenAIServer:
    def __init__(self, models: list[ModelSpec] | None = None) -> None:
        self.models = {m.id: m for m in (models or [ModelSpec("gpt-test", images=True),
                                                    ModelSpec("reasoner", reasoning=True)])}
        self.queue: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.rejections: list[str] = []
        self.disconnects: list[tuple[int, float]] = []
        self.usage: list[UsageRecord] = []
        self.errors: list[str] = []
        self.issued: dict[str, str] = {}  # reasoning item id: its encrypted content
        self.runs: dict[str, dict[str, Any]] = {}  # Responses ids: background, status
        self.cancelled: list[str] = []  # background responses cancelled on the server
        self.keys: set[str] | None = None
        self._prompts: dict[str, list[str]] = {}
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def enqueue(self, *replies: Reply) -> None:
        self.queue.extend(replies)

    def accept_keys(self, *keys: str) -> None:
        self.keys = set(keys)

    def _note(self, what: list[Any], item: Any) -> None:
        with self._cond:
            what.append(item)
            self._cond.notify_all()

    def gone(self, number: int) -> None:
        """The client closed request ``number``'s connection (now)."""
        self._note(self.disconnects, (number, time.monotonic()))

    def wait_for(self, what: str, count: int, timeout: float = 10.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: len(getattr(self, what)) >= count, timeout):
                raise AssertionError(f"{what}: {len(getattr(self, what))} of {count} "
                                     f"after {timeout} s")

    def take(self, body: dict[str, Any]) -> tuple[int, Reply]:
        with self._cond:
            self.requests.append(body)
            self._cond.notify_all()
            return len(self.requests) - 1, (self.queue.popleft() if self.queue else Reply(text="ok"))

    def count(self, model: str, payload: Any) -> tuple[int, int]:
        """Prompt tokens and the cached part, from the request's JSON."""
        text = json.dumps(payload, sort_keys=True)
        with self._cond:
            earlier = self._prompts.setdefault(model, [])
            shared = max((_common(text, e) for e in earlier), default=0)
            earlier.append(text)
        prompt = max(1, len(text) // 4)
        cached = shared // 4
        return prompt, (cached - cached % 128) if cached >= 1024 else 0


def _common(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class ClientGone(Exception):
    pass


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client gone is no bug of the fake's; anything else is kept in ``errors``."""
        if isinstance(sys.exc_info()[1], (ConnectionError, ClientGone)):
            return
        fake = self.fake  # type: ignore[attr-defined]
        if not fake._stopping.is_set():
            fake.errors.append(traceback.format_exc())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/1.0"
    # TCP_NODELAY, as the real API's servers stream: each event leaves when it is written
    # (with Nagle a small write waits for the client's delayed ACK, up to 40 ms, on a
    # connection kept alive from an earlier request)
    disable_nagle_algorithm = True

    @property
    def fake(self) -> FakeOpenAIServer:
        return self.server.fake  # type: ignore[attr-defined,no-any-return]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    # -- wire ---------------------------------------------------------------------------

    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def error(self, status: int, message: str, *, code: str | None = None,
              param: str | None = None, kind: str = "invalid_request_error",
              headers: dict[str, str] | None = None) -> None:
        self.send_json(status, {"error": {"message": message, "type": kind, "param": param,
                                          "code": code}}, headers)

    def start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError as exc:
            raise ClientGone() from exc

    @staticmethod
    def sse(payload: Any, name: str | None = None) -> bytes:
        head = f"event: {name}\n" if name else ""
        return f"{head}data: {json.dumps(payload)}\n\n".encode()

    def end_stream(self) -> None:
        self.chunk(b"")  # the zero chunk: "0\r\n\r\n"

    def wait(self, seconds: float) -> bool:
        """Wait, watching the socket; False when the client closed it."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.fake._stopping.is_set():
            ready, _, _ = select.select([self.connection], [], [], POLL)
            if ready:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        return False
                except OSError:
                    return False
                time.sleep(POLL)
        return True

    # -- routes ---------------------------------------------------------------------------

    def _authorized(self) -> bool:
        key = (self.headers.get("authorization") or "").removeprefix("Bearer ").strip()
        keys = self.fake.keys
        if key and (keys is None or key in keys):
            return True
        self.error(401, f"Incorrect API key provided: {key[:4]}****.",
                   code="invalid_api_key")
        return False

    def do_GET(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path.rstrip("/")
        if not self._authorized():
            return
        if path == "/v1/models":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake",
                     "context_window": s.window} for m, s in self.fake.models.items()]
            self.send_json(200, {"object": "list", "data": data})
        elif path.startswith("/v1/models/") and path[len("/v1/models/"):] in self.fake.models:
            spec = self.fake.models[path[len("/v1/models/"):]]
            self.send_json(200, {"id": spec.id, "object": "model", "created": 0,
                                 "owned_by": "fake", "context_window": spec.window})
        else:
            self.error(404, f"The model `{path.rsplit('/', 1)[-1]}` does not exist or you do "
                       "not have access to it.", code="model_not_found")

    def do_POST(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path.rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        self.fake._note(self.fake.paths, path)
        if not self._authorized():
            return
        try:
            body = json.loads(raw) if raw else {}  # a cancel has no body
        except json.JSONDecodeError:
            self.error(400, "We could not parse the JSON body of your request.")
            return
        try:
            if path == "/v1/chat/completions":
                self._chat(body)
            elif path.startswith("/v1/responses"):
                from .responses import serve_responses

                serve_responses(self, path, body)
            else:
                self.error(404, f"Invalid URL (POST {path})")
        except ClientGone:
            self.close_connection = True

    def checked_model(self, body: dict[str, Any]) -> ModelSpec | None:
        spec = self.fake.models.get(str(body.get("model")))
        if spec is None:
            self.error(404, f"The model `{body.get('model')}` does not exist or you do not "
                       "have access to it.", code="model_not_found")
        return spec

    def refuse(self, exc: Invalid) -> None:
        self.fake._note(self.fake.rejections, str(exc))
        self.error(exc.status, str(exc), param=exc.param)

    def _chat(self, body: dict[str, Any]) -> None:
        spec = self.checked_model(body) if isinstance(body, dict) else None
        if spec is None:
            return
        try:
            check_chat(body, images=spec.images, reasoning_in=spec.reasoning)
        except Invalid as exc:
            self.refuse(exc)
            return
        prompt, cached = self.fake.count(spec.id, [body["messages"], body.get("tools")])
        if prompt > spec.window:
            self.refuse(Invalid(
                f"This model's maximum context length is {spec.window} tokens. However, your "
                f"messages resulted in {prompt} tokens. Please reduce the length of the "
                "messages."))
            return
        number, reply = self.fake.take(body)
        if reply.stall_before and not self.wait(reply.stall_before):
            self.fake.gone(number)
            return
        if reply.status is not None:
            self.send_json(reply.status, {"error": reply.error}, reply.headers)
            return
        self.stream_chat(number, reply, spec, body, prompt, cached)

    def stream_chat(self, number: int, reply: Reply, spec: ModelSpec, body: dict[str, Any],
                    prompt: int, cached: int) -> None:
        chunks = ChatChunks(reply, spec.id)

        def ending(output: int) -> list[bytes]:
            frames = [self.sse(chunks.finish())]
            if (body.get("stream_options") or {}).get("include_usage"):
                frames.append(self.sse(chunks.usage(prompt, cached, output)))
            return [*frames, b"data: [DONE]\n\n"]

        self.play(number, reply, [self.sse(d) for d in chunks.deltas()],
                  b"data: {not json\n\n", ending, prompt, cached)

    def play(self, number: int, reply: Reply, frames: list[bytes], bad: bytes,
             ending: Any, prompt: int, cached: int) -> None:
        """Stream ``frames`` as ``reply`` scripts it (a stall, a malformed frame, a cut),
        then ``ending(output tokens)``'s; the usage recorded, interrupted or not."""
        output = reply.output_estimate()
        self.start_stream()
        try:
            for sent, frame in enumerate(frames):
                if reply.stall_after and reply.stall_after[0] == sent and not self.wait(
                        reply.stall_after[1]):
                    raise ClientGone()
                self.chunk(frame)
                if reply.malformed and sent == 1:
                    self.chunk(bad)
            for frame in [] if reply.cut else ending(output):
                self.chunk(frame)
            self.end_stream()
            self.fake._note(self.fake.usage, UsageRecord(number, prompt, cached, output, False))
        except ClientGone:
            self.fake._note(self.fake.usage, UsageRecord(number, prompt, cached, 0, True))
            self.fake.gone(number)
            raise
