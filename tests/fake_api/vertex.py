"""A fake of Claude on Google Vertex AI, with Google's OAuth token endpoint beside it.

The SDK's ``AsyncAnthropicVertex`` talks to it unchanged (``ANTHROPIC_VERTEX_BASE_URL``
= ``srv.base_url``), with credentials as a user has them: a service account key file
(:meth:`FakeVertexServer.write_service_account`, for ``GOOGLE_APPLICATION_CREDENTIALS``)
whose ``token_uri`` is this server's ``/token``.

Routes, as Vertex has them:

* ``POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:streamRawPredict``
  (the reply as Server-Sent Events) and ``...:rawPredict`` (one JSON message). The body
  is the Messages API's without ``model`` (it is in the path) and with
  ``"anthropic_version": "vertex-2023-10-16"``; either one wrong is a 400. The project
  must be the server's (else 403 ``PERMISSION_DENIED``), the model one of its ``models``
  (Vertex id -> the catalogue id whose rules apply; else 404 ``NOT_FOUND``), the region
  one of its ``regions`` (else 404). The ``Authorization: Bearer`` token must be one the
  token endpoint issued (else 401 ``UNAUTHENTICATED``, Google's error shape).
* ``POST /token``: the JWT-bearer grant of a service account. The assertion must be an
  RS256 JWT signed with the key of the file written, for Google's ``aud``, with the
  cloud-platform scope and not expired; then an access token is issued (else 400
  ``invalid_grant``). ``token_requests`` counts them; ``token_lifetime`` is the
  tokens' ``expires_in``.

``routes`` records ``(project, region, model, method)`` per Messages request; the
scripted replies (:class:`~tests.fake_api.Reply`) are the base server's.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from . import endpoints
from .http_handler import ClientGone, Handler
from .ids import rand_id
from .server import FakeAnthropicServer

VERTEX_VERSION = "vertex-2023-10-16"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
AUDIENCE = "https://oauth2.googleapis.com/token"  # what Google's token service wants in aud
UNAUTHENTICATED = ("Request had invalid authentication credentials. Expected OAuth 2 access "
                   "token, login cookie or other valid authentication credential.")
_ROUTE = re.compile(r"/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/"
                    r"([^/:]+):(streamRawPredict|rawPredict)")
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
           404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}


def _b64url(data: bytes) -> bytes:
    return base64.urlsafe_b64decode(data + b"=" * (-len(data) % 4))


class VertexHandler(Handler):
    server_version = "fake-vertex/1.0"

    def do_GET(self) -> None:  # noqa: N802 - no Models API on Vertex
        try:
            self._google_error(404, f"The requested URL {self.path} was not found.")
        except ClientGone:
            self.close_connection = True

    def do_POST(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        try:
            raw = self._read_body()
        except ClientGone:
            self.close_connection = True
            return
        try:
            if path == "/token":
                self._token(raw)
                return
            found = _ROUTE.fullmatch(path)
            if found is None:
                self._google_error(404, f"The requested URL {path} was not found.")
                return
            self._route = tuple(unquote(part) for part in found.groups())
            self._handle_messages(raw)
        except ClientGone:
            self.close_connection = True

    def _google_error(self, status: int, message: str) -> None:
        self._send_json(status, {"error": {"code": status, "message": message,
                                           "status": _STATUS.get(status, "INTERNAL")}})

    def _authorized(self, request_id: str, raw: bytes = b"") -> bool:
        fake: FakeVertexServer = self.server.fake
        bearer = self.headers.get("authorization") or ""
        token = bearer.removeprefix("Bearer ").strip() if bearer.startswith("Bearer ") else ""
        if not fake.token_is_valid(token):
            fake.refused_keys.append(token)
            self._google_error(401, UNAUTHENTICATED)
            return False
        project, region, model, method = self._route
        fake._record_route((project, region, model, method))
        resource = f"projects/{project}/locations/{region}/publishers/anthropic/models/{model}"
        if project != fake.project:
            self._google_error(403, f"Permission 'aiplatform.endpoints.predict' denied on "
                               f"resource '//aiplatform.googleapis.com/{resource}' (or it may "
                               "not exist).")
            return False
        if region not in fake.regions or model not in fake.vertex_models:
            self._google_error(404, f"Publisher Model `{resource}` not found.")
            return False
        return True

    def _header_error(self, parse_error: str | None) -> str | None:
        return parse_error  # Vertex wants no anthropic-version header: the body says it

    def _api_body(self, body: Any) -> Any:
        if not isinstance(body, dict):
            return endpoints.Rejection.bad("body: Input should be a valid dictionary")
        if "model" in body:
            return endpoints.Rejection.bad("model: Extra inputs are not permitted")
        version = body.get("anthropic_version")
        if version != VERTEX_VERSION:
            return endpoints.Rejection.bad(
                f"anthropic_version: Input should be '{VERTEX_VERSION}' (got {version!r})")
        _, _, model, method = self._route
        api = {k: v for k, v in body.items() if k != "anthropic_version"}
        api["model"] = self.server.fake.vertex_models[model]
        if method == "streamRawPredict":
            api["stream"] = True
        else:
            api.pop("stream", None)
        return api

    def _token(self, raw: bytes) -> None:
        fake: FakeVertexServer = self.server.fake
        form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
        problem = fake.check_assertion(form)
        if problem is not None:
            self._send_json(400, {"error": "invalid_grant", "error_description": problem})
            return
        token = fake.issue_token()
        self._send_json(200, {"access_token": token, "expires_in": fake.token_lifetime,
                              "token_type": "Bearer"},
                        {"request-id": rand_id("req_")})


class FakeVertexServer(FakeAnthropicServer):
    """Vertex's Claude endpoints on loopback (see the module docstring)."""

    handler_class = VertexHandler

    def __init__(self, *, project: str = "test-project", regions: tuple[str, ...] = ("us-east5",),
                 models: dict[str, str] | None = None, token_lifetime: int = 3599,
                 **options: Any) -> None:
        super().__init__(**options)
        self.project = project
        self.token_lifetime = token_lifetime  # seconds, the tokens' expires_in
        self.regions = regions
        self.vertex_models = models or {"claude-sonnet-4-5@20250929": "claude-sonnet-4-5"}
        # the default model's rules (Claude Sonnet 4.5: extended thinking, no effort)
        self.configure_model("claude-sonnet-4-5", thinking_types=frozenset({"enabled", "disabled"}),
                             effort_levels=())
        self._public_key: Any = None
        self._account: dict[str, str] = {}
        self._issued: set[str] = set()
        self.token_requests = 0
        self._routes: list[tuple[str, ...]] = []

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def routes(self) -> list[tuple[str, ...]]:
        with self._lock:
            return list(self._routes)

    def _record_route(self, route: tuple[str, ...]) -> None:
        with self._lock:
            self._routes.append(route)

    def write_service_account(self, path: Path) -> Path:
        """A service account key file for ``GOOGLE_APPLICATION_CREDENTIALS`` (a new RSA
        key each time; only the newest one's assertions are accepted)."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        account = {
            "type": "service_account", "project_id": self.project,
            "private_key_id": secrets.token_hex(20), "private_key": pem,
            "client_email": f"agent@{self.project}.iam.gserviceaccount.com",
            "client_id": str(secrets.randbelow(10**20)), "token_uri": f"{self.url}/token",
        }
        with self._lock:
            self._public_key = key.public_key()
            self._account = account
        path.write_text(json.dumps(account))
        return path

    def check_assertion(self, form: dict[str, str]) -> str | None:
        """Why the token request is refused (None: it is not)."""
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        with self._lock:
            self.token_requests += 1
            public_key, account = self._public_key, dict(self._account)
        if form.get("grant_type") != JWT_GRANT or "assertion" not in form:
            return "Invalid grant_type or missing assertion."
        try:
            head, claims, signature = form["assertion"].encode().split(b".")
            header = json.loads(_b64url(head))
            payload = json.loads(_b64url(claims))
            public_key.verify(_b64url(signature), head + b"." + claims, padding.PKCS1v15(),
                              hashes.SHA256())
        except (ValueError, AttributeError, InvalidSignature):
            return "Invalid JWT Signature."
        if header.get("alg") != "RS256" or header.get("kid") != account["private_key_id"]:
            return "Invalid JWT: unknown key."
        if payload.get("iss") != account["client_email"] or payload.get("aud") != AUDIENCE:
            return "Invalid JWT: iss or aud."
        if SCOPE not in str(payload.get("scope", "")).split():
            return "Invalid JWT: the scope is missing."
        if not payload.get("exp", 0) > time.time():
            return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."
        return None

    def issue_token(self) -> str:
        token = "ya29." + secrets.token_urlsafe(32)
        with self._lock:
            self._issued.add(token)
        return token

    def token_is_valid(self, token: str) -> bool:
        with self._lock:
            return bool(token) and token in self._issued

    def revoke_tokens(self) -> None:
        with self._lock:
            self._issued.clear()
