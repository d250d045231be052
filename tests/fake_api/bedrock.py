"""A fake of Claude on Amazon Bedrock's runtime API (``bedrock-runtime``).

The SDK's ``AsyncAnthropicBedrock`` talks to it unchanged (``ANTHROPIC_BEDROCK_BASE_URL``
= ``srv.url``), signing with the AWS credentials a test gives it.

Routes, as Bedrock has them:

* ``POST /model/{model id}/invoke-with-response-stream``: the reply as an AWS event
  stream (``application/vnd.amazon.eventstream``): one ``chunk`` event per Messages
  stream event, its payload ``{"bytes": base64(event JSON), "p": padding}``;
  ``message_stop`` carries ``amazon-bedrock-invocationMetrics``. A scripted error in the
  middle of the stream is an ``exception`` message (``throttlingException``, ...).
* ``POST /model/{model id}/invoke``: the whole message as JSON.

Every request must carry a SigV4 signature that checks out with the secret of its
access key (:func:`tests.fake_api.aws_wire.sigv4_problem`: region, service ``bedrock``,
the body's hash, the date within five minutes, the session token of temporary keys),
or ``Authorization: Bearer KEY`` with one of ``api_keys`` (Bedrock API keys); else
403 as Bedrock answers (``InvalidSignatureException``, ``UnrecognizedClientException``,
``MissingAuthenticationTokenException``), in Bedrock's error shape: ``{"message": ...}``
and the type in ``x-amzn-ErrorType``. The body is the Messages API's without ``model``
and ``stream`` (extraneous keys are a 400 ``ValidationException``) and with
``"anthropic_version": "bedrock-2023-05-31"``. The model id must be one of ``models``
(Bedrock id -> the catalogue id whose rules apply); another is a 400.

``signed`` records, per Messages request, the access key that signed it (or
``"bearer"``); ``invoked`` the model ids of the paths.
"""

from __future__ import annotations

import base64
import json
import secrets
from typing import Any
from urllib.parse import unquote, urlsplit

from . import endpoints
from .aws_wire import event_frame, sigv4_problem
from .http_handler import ClientGone, Handler
from .ids import rand_id
from .server import FakeAnthropicServer
from .sse import dumps

BEDROCK_VERSION = "bedrock-2023-05-31"
SERVICE = "bedrock"
_TYPES = {400: "ValidationException", 403: "AccessDeniedException",
          404: "ResourceNotFoundException", 408: "ModelTimeoutException",
          413: "ValidationException", 429: "ThrottlingException",
          503: "ServiceUnavailableException", 529: "ServiceUnavailableException"}
# An Anthropic stream error as the exception Bedrock sends in its place.
_STREAM_EXCEPTIONS = {"overloaded_error": "serviceUnavailableException",
                      "rate_limit_error": "throttlingException",
                      "api_error": "internalServerException"}


class BedrockHandler(Handler):
    server_version = "fake-bedrock/1.0"
    stream_content_type = "application/vnd.amazon.eventstream"

    def do_GET(self) -> None:  # noqa: N802 - bedrock-runtime has no Models API
        try:
            self._send_error(404, "not_found_error", "Not Found", None, {})
        except ClientGone:
            self.close_connection = True

    def do_POST(self) -> None:  # noqa: N802
        parts = urlsplit(self.path)
        try:
            raw = self._read_body()
        except ClientGone:
            self.close_connection = True
            return
        try:
            segments = parts.path.split("/")
            if (len(segments) != 4 or segments[1] != "model"
                    or segments[3] not in ("invoke", "invoke-with-response-stream")):
                self._send_error(404, "not_found_error", "Not Found", None, {})
                return
            self._model_id = unquote(segments[2])
            self._streaming = segments[3] == "invoke-with-response-stream"
            self._handle_messages(raw)
        except ClientGone:
            self.close_connection = True

    def _send_error(self, status: int, error_type: str, message: str, request_id: str | None,
                    headers: dict[str, str]) -> None:
        status = 503 if status == 529 else status
        kind = _TYPES.get(status, "InternalServerException")
        self._send_json(status, {"message": message}, {
            **{k: v for k, v in headers.items() if k != "request-id"},
            "x-amzn-RequestId": request_id or rand_id("req_"),
            "x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"})

    def _authorized(self, request_id: str, raw: bytes = b"") -> bool:
        fake: FakeBedrockServer = self.server.fake
        headers = {k.lower(): v for k, v in self.headers.items()}
        auth = headers.get("authorization", "")
        if auth.startswith("Bearer "):
            if auth.removeprefix("Bearer ").strip() in fake.api_keys:
                fake._record_signer("bearer")
                return True
            kind, message = "UnrecognizedClientException", "Invalid API Key format: Must start with pre-defined prefix"
        else:
            parts = urlsplit(self.path)
            problem = sigv4_problem(method=self.command, path=parts.path, query=parts.query,
                                    headers=headers, body=raw, secrets=fake.credentials,
                                    session_tokens=fake.session_tokens, region=fake.region,
                                    service=SERVICE)
            if problem is None:
                fake._record_signer(auth.split("Credential=", 1)[1].split("/", 1)[0])
                return True
            kind, message = problem.error_type, problem.message
        fake.refused_keys.append(kind)
        self._send_json(403, {"message": message}, {
            "x-amzn-RequestId": request_id,
            "x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/com.amazon.coral.service/"})
        return False

    def _header_error(self, parse_error: str | None) -> str | None:
        return parse_error  # the body names the version, not a header

    def _api_body(self, body: Any) -> Any:
        fake: FakeBedrockServer = self.server.fake
        fake._record_invoked(self._model_id)
        if self._model_id not in fake.bedrock_models:
            return endpoints.Rejection.bad("The provided model identifier is invalid.")
        if not isinstance(body, dict):
            return endpoints.Rejection.bad("Malformed input request: expected type: JSONObject")
        for key in ("model", "stream"):
            if key in body:
                return endpoints.Rejection.bad(
                    f"Malformed input request: #: extraneous key [{key}] is not permitted, "
                    "please reformat your input and try again.")
        if body.get("anthropic_version") != BEDROCK_VERSION:
            return endpoints.Rejection.bad(
                f"Malformed input request: #/anthropic_version: {body.get('anthropic_version')!r} "
                f"is not a valid enum value (expected {BEDROCK_VERSION})")
        api = {k: v for k, v in body.items() if k != "anthropic_version"}
        api["model"] = fake.bedrock_models[self._model_id]
        if self._streaming:
            api["stream"] = True
        self._metrics = {"inputTokenCount": 0, "outputTokenCount": 0}
        return api

    def _write_event(self, name: str, payload: dict) -> None:
        if name == "error":
            error = payload.get("error", {})
            kind = _STREAM_EXCEPTIONS.get(error.get("type"), "modelStreamErrorException")
            self._write_chunk(event_frame(
                {":exception-type": kind, ":content-type": "application/json",
                 ":message-type": "exception"},
                json.dumps({"message": error.get("message", "error")}).encode()))
            return
        usage = (payload.get("message") or {}).get("usage") or payload.get("usage") or {}
        if name == "message_start":
            self._metrics["inputTokenCount"] = usage.get("input_tokens", 0)
        if name == "message_delta":
            self._metrics["outputTokenCount"] = usage.get("output_tokens", 0)
        if name == "message_stop":
            payload = {**payload, "amazon-bedrock-invocationMetrics": {
                **self._metrics, "invocationLatency": 1, "firstByteLatency": 1}}
        chunk = {"bytes": base64.b64encode(dumps(payload).encode()).decode(),
                 "p": secrets.token_urlsafe(8)}
        self._write_chunk(event_frame(
            {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"},
            json.dumps(chunk).encode()))


class FakeBedrockServer(FakeAnthropicServer):
    """bedrock-runtime's Claude endpoints on loopback (see the module docstring)."""

    handler_class = BedrockHandler

    def __init__(self, *, region: str = "us-east-1", models: dict[str, str] | None = None,
                 credentials: dict[str, str] | None = None,
                 session_tokens: dict[str, str] | None = None,
                 api_keys: frozenset[str] = frozenset(), **options: Any) -> None:
        super().__init__(**options)
        self.region = region
        self.bedrock_models = models or {
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0": "claude-sonnet-4-5"}
        # the default model's rules (Claude Sonnet 4.5: extended thinking, no effort)
        self.configure_model("claude-sonnet-4-5", thinking_types=frozenset({"enabled", "disabled"}),
                             effort_levels=())
        self.credentials = credentials or {}
        self.session_tokens = session_tokens or {}
        self.api_keys = api_keys
        self._signed: list[str] = []
        self._invoked: list[str] = []

    @property
    def signed(self) -> list[str]:
        with self._lock:
            return list(self._signed)

    @property
    def invoked(self) -> list[str]:
        with self._lock:
            return list(self._invoked)

    def _record_signer(self, who: str) -> None:
        with self._lock:
            self._signed.append(who)

    def _record_invoked(self, model_id: str) -> None:
        with self._lock:
            self._invoked.append(model_id)
