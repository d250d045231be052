"""A scripted fake of the Anthropic Messages API, served over real HTTP on loopback.

The real ``anthropic`` SDK talks to it unchanged::

    with FakeAnthropicServer() as srv:
        srv.enqueue(Reply.text("hello world", chunk=5))
        client = anthropic.Anthropic(base_url=srv.url, api_key="test", max_retries=0)
        ...

Only the standard library is used (``http.server`` with one thread per connection).
The server only ever binds 127.0.0.1.

Scripting
---------
Each ``POST /v1/messages`` that passes validation takes the next :class:`Reply` from
the queue (or a copy of ``default_reply``, ``Reply.text("ok")``, when it is empty).
Requests rejected by validation (400, 404) do **not** consume a queued reply: invalid
requests never "reach the model".

With ``"stream": true`` the reply is sent as Server-Sent Events exactly like the real
API (``message_start``, ``content_block_start``, ``ping``, ``content_block_delta``
with ``text_delta`` / ``input_json_delta`` / ``thinking_delta`` / ``signature_delta``,
``content_block_stop``, ``message_delta``, ``message_stop``) using HTTP/1.1 chunked
transfer encoding (keep-alive). Without ``stream`` the whole message is returned as JSON.

Constructor options
-------------------
``validate=True`` (strict validation, :mod:`tests.fake_api.validate`),
``allow_assistant_last=False`` (accept a final assistant message / prefill),
``default_reply``, ``models=`` (the catalogue: :class:`ModelSpec`, dicts of its fields or
bare ids; default :data:`~tests.fake_api.models.DEFAULT_MODELS`),
``accept_unknown_models=False`` (True: an id not in the catalogue is served as a generic
200k-window model instead of the 404 ``model: NAME``), ``models_api=True`` (False: no
Models API, as behind a gateway: ``GET /v1/models`` and ``/v1/models/{id}`` are the 404
of any unknown path, while the catalogue still rules the Messages requests), ``clock=`` (a callable returning
seconds for cache TTLs, e.g. :class:`FakeClock`), ``thinking_secret=`` (the HMAC key of
thinking signatures).

Keys: any key (``x-api-key``, or ``Authorization: Bearer KEY``) is accepted until
:meth:`FakeAnthropicServer.accept_keys` names the ones that are; then any other is
answered 401 ``authentication_error`` (and kept in ``refused_keys``).

Observation
-----------
``requests`` (parsed JSON bodies of ``/v1/messages``, in order; index = request index),
``request_headers``, ``rejections`` (400 validation messages), ``disconnects``
(``(request_index, time.monotonic())`` when the client went away during a stalled or
streaming reply), ``usage`` (:class:`~tests.fake_api.usage.UsageRecord` per answered
request), ``count_tokens(body)`` (the estimator of :mod:`tests.fake_api.tokens`),
``cache`` (the :class:`~tests.fake_api.cache.PromptCache`; ``clear_cache()``),
``models`` / ``configure_model(id, **changes)``, ``traffic`` (in order of arrival:
``"asked /v1/models/ID"``, ``"answered /v1/models/ID"``, ``"messages"``),
``hold_models()`` / ``release_models()`` (a slow Models API: lookups are asked but not
answered until released; ``wait_for_traffic``), ``wait_for_requests``,
``wait_for_disconnect``, ``wait_for_usage``, ``errors`` (handler tracebacks: stays empty).
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from dataclasses import replace
from typing import Any, Callable, Iterable

from .cache import FakeClock, PromptCache
from .http_handler import Handler, HTTPServer
from .ids import new_tool_use_id
from .models import ModelSpec, catalogue, generic_model
from .replies import Reply
from .thinking import DEFAULT_SECRET, EmittedTurns, ThinkingSigner
from .tokens import count_prompt_tokens
from .usage import UsageRecord
from .web_search import EmittedSearches

__all__ = ["FakeAnthropicServer", "Reply", "FakeClock", "new_tool_use_id"]


class FakeAnthropicServer:
    """Fake Messages API on ``http://127.0.0.1:<free port>``. Context manager.

    See the module docstring for the constructor options.
    """

    #: The request handler (the clouds' fakes have their own routes and wire formats).
    handler_class: type[Handler] = Handler

    def __init__(
        self,
        *,
        validate: bool = True,
        allow_assistant_last: bool = False,
        default_reply: Reply | None = None,
        models: Iterable[ModelSpec | dict | str] | None = None,
        accept_unknown_models: bool = False,
        models_api: bool = True,
        clock: Callable[[], float] | None = None,
        thinking_secret: bytes = DEFAULT_SECRET,
    ) -> None:
        self.validate = validate
        self.allow_assistant_last = allow_assistant_last
        self.default_reply = default_reply or Reply.text("ok")
        self.accept_unknown_models = accept_unknown_models
        self.models_api = models_api
        self.clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._models = catalogue(models)
        self._cache = PromptCache(self.clock)
        self._signer = ThinkingSigner(thinking_secret)
        self._emitted = EmittedTurns()
        self._searches = EmittedSearches()
        self._queue: deque[Reply | Callable[[dict], Reply]] = deque()
        self._requests: list[Any] = []
        self._request_headers: list[dict[str, str]] = []
        self._disconnects: list[tuple[int, float]] = []
        self._rejections: list[str] = []
        self._traffic: list[str] = []  # Models API lookups and Messages requests, in order
        self._models_held = False
        self._errors: list[str] = []
        self._usage: list[UsageRecord] = []
        self._conns: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._stopping = threading.Event()
        self._httpd: HTTPServer | None = None
        #: The keys accepted (None: any); see :meth:`accept_keys`.
        self.api_keys: frozenset[str] | None = None
        self.refused_keys: list[str] = []
        self._thread: threading.Thread | None = None

    # ---- lifecycle ------------------------------------------------------------------

    def start(self) -> "FakeAnthropicServer":
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = HTTPServer(("127.0.0.1", 0), self.handler_class)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
            name=f"fake-anthropic-{self.port}", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        httpd = self._httpd
        if httpd is None:
            return
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
            threads = list(self._threads)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        deadline = time.monotonic() + timeout
        if self._thread is not None:
            self._thread.join(max(0.0, deadline - time.monotonic()))
        for t in threads:
            if t is not threading.current_thread():
                t.join(max(0.0, deadline - time.monotonic()))
        self._httpd = None
        self._thread = None

    close = stop

    def __enter__(self) -> "FakeAnthropicServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- scripting ------------------------------------------------------------------

    def accept_keys(self, *keys: str) -> None:
        """From now on accept only these keys: any other is answered
        401 ``authentication_error`` "invalid x-api-key", as the API does (a key that
        rotates: call it again with the new one)."""
        with self._lock:
            self.api_keys = frozenset(keys)

    def refuses_key(self, key: str | None) -> bool:
        with self._lock:
            refused = self.api_keys is not None and key not in self.api_keys
            if refused:
                self.refused_keys.append(key or "")
            return refused

    def enqueue(self, *replies: Reply | Callable[[dict], Reply]) -> None:
        """Queue replies, used in order by valid ``POST /v1/messages`` requests.

        An item may also be a callable ``f(request_body) -> Reply`` for replies that
        depend on the request. A ``Reply`` carries fixed tool_use ids, so enqueueing
        the same tool-using ``Reply`` twice gives duplicate ids (which the validator
        would then reject in the follow-up request) - build a new one instead.
        """
        with self._lock:
            for r in replies:
                if not isinstance(r, Reply) and not callable(r):
                    raise TypeError(f"expected Reply or callable, got {type(r).__name__}")
                self._queue.append(r)

    def clear_queue(self) -> None:
        with self._lock:
            self._queue.clear()

    @property
    def pending(self) -> int:
        """Number of queued replies not yet used."""
        with self._lock:
            return len(self._queue)

    # ---- models, tokens, cache ------------------------------------------------------

    @property
    def models(self) -> dict[str, ModelSpec]:
        """The catalogue, ``{id: ModelSpec}`` in the order the Models API lists it."""
        with self._lock:
            return dict(self._models)

    def configure_model(self, model_id: str, **changes: Any) -> ModelSpec:
        """Change (or add, from a generic spec) one model of the catalogue, e.g.
        ``srv.configure_model("claude-test", max_input_tokens=4000)``."""
        with self._lock:
            spec = self._models.get(model_id) or generic_model(model_id)
            spec = spec.with_changes(**changes)
            self._models[model_id] = spec
            return spec

    def _model_spec(self, model_id: Any) -> ModelSpec | None:
        with self._lock:
            spec = self._models.get(model_id) if isinstance(model_id, str) else None
        if spec is None and (self.accept_unknown_models or not self.validate):
            return generic_model(str(model_id))
        return spec

    def count_tokens(self, body: dict) -> int:
        """The whole prompt's tokens as the server counts them (no validation)."""
        spec = self._model_spec(body.get("model")) or generic_model(str(body.get("model")))
        return count_prompt_tokens(body, keeps_prior_thinking=spec.keeps_prior_thinking)

    @property
    def cache(self) -> PromptCache:
        return self._cache

    def clear_cache(self) -> None:
        self._cache.clear()

    # ---- the Models API's pace -------------------------------------------------------

    def hold_models(self) -> None:
        """From now on ``GET /v1/models*`` is asked (in ``traffic``) but not answered
        until :meth:`release_models` (or the server stops): a slow Models API."""
        with self._cond:
            self._models_held = True

    def release_models(self) -> None:
        with self._cond:
            self._models_held = False
            self._cond.notify_all()

    @property
    def traffic(self) -> list[str]:
        with self._lock:
            return list(self._traffic)

    def wait_for_traffic(self, entry: str, timeout: float = 5.0) -> bool:
        """Wait until ``entry`` (e.g. ``"asked /v1/models/claude-test"``) has happened."""
        with self._cond:
            return self._cond.wait_for(lambda: entry in self._traffic, timeout)

    # ---- observation ----------------------------------------------------------------

    @property
    def requests(self) -> list[Any]:
        """Parsed JSON bodies of every POST /v1/messages, in order (None if unparsable)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        with self._lock:
            return [dict(h) for h in self._request_headers]

    @property
    def disconnects(self) -> list[tuple[int, float]]:
        with self._lock:
            return list(self._disconnects)

    @property
    def rejections(self) -> list[str]:
        with self._lock:
            return list(self._rejections)

    @property
    def errors(self) -> list[str]:
        """Tracebacks of unexpected exceptions in handler threads (should stay empty)."""
        with self._lock:
            return list(self._errors)

    @property
    def usage(self) -> list[UsageRecord]:
        """What each answered request was told about its usage, in order."""
        with self._lock:
            return list(self._usage)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self._requests) >= n, timeout)

    def wait_for_disconnect(self, timeout: float = 5.0, count: int = 1) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self._disconnects) >= count, timeout)

    def wait_for_usage(self, n: int, *, completed: bool = True, timeout: float = 5.0) -> bool:
        """Wait until ``n`` usage records exist (and, by default, are completed)."""
        def ready() -> bool:
            return len(self._usage) >= n and (not completed or all(
                u.completed for u in self._usage[:n]))
        with self._cond:
            return self._cond.wait_for(ready, timeout)

    # ---- internal (handler threads) -------------------------------------------------

    def _register(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.add(conn)
            self._threads.add(threading.current_thread())

    def _unregister(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.discard(conn)
            self._threads.discard(threading.current_thread())

    def _record_error(self, text: str) -> None:
        with self._lock:
            self._errors.append(text)

    def _model_lookup(self, path: str) -> None:
        """A Models API request arrived: say so, and wait while lookups are held."""
        with self._cond:
            self._traffic.append(f"asked {path}")
            self._cond.notify_all()
            self._cond.wait_for(lambda: not self._models_held or self._stopping.is_set())
            self._traffic.append(f"answered {path}")
            self._cond.notify_all()

    def _record_request(self, body: Any, headers: dict[str, str]) -> int:
        with self._cond:
            self._traffic.append("messages")
            self._requests.append(body)
            self._request_headers.append(headers)
            self._cond.notify_all()
            return len(self._requests) - 1

    def _record_rejection(self, msg: str) -> None:
        with self._cond:
            self._rejections.append(msg)
            self._cond.notify_all()

    def _record_disconnect(self, idx: int) -> None:
        with self._cond:
            self._disconnects.append((idx, time.monotonic()))
            self._cond.notify_all()

    def _record_usage(self, record: UsageRecord) -> int:
        with self._cond:
            self._usage.append(record)
            self._cond.notify_all()
            return len(self._usage) - 1

    def _update_usage(self, index: int | None, **changes: Any) -> None:
        if index is None:
            return
        with self._cond:
            self._usage[index] = replace(self._usage[index], **changes)
            self._cond.notify_all()

    def _next_reply(self, body: dict) -> Reply:
        with self._lock:
            item = self._queue.popleft() if self._queue else None
        if item is None:
            return self.default_reply.copy()
        if isinstance(item, Reply):
            return item
        reply = item(body)  # a callable(request_body) -> Reply
        if not isinstance(reply, Reply):
            raise TypeError(f"reply factory returned {type(reply).__name__}, expected Reply")
        return reply
