"""OAuth 2.1 for HTTP MCP servers, through the MCP SDK's client auth
(``OAuthClientProvider``: discovery of the protected resource and the authorization
server, dynamic client registration, PKCE, the code exchange and refresh).

Each HTTP or SSE server without an ``Authorization`` header of its own gets a
provider. A server that answers 401 is then discovered and registered with, and
a stored token is sent and refreshed (before it expires, with a margin for the
clocks). What is kept lives in one owner-only file per server (``0600``, in an
``0700`` folder under the state folder): the registered client and the tokens, with
the time the access token expires.

A connection made in the background never opens a browser: when the server wants a
login and no token will do, its provider raises :class:`LoginNeeded` and the
server's state becomes ``needs_login``. A login is asked for by the user
(``agent-tui mcp login NAME``, ``/mcp``), see :mod:`.login`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from agent_tui.atomic import write_atomic
from agent_tui.paths import private_dir
from agent_tui.settings.mcp_servers import ServerConfig, Transport

AUTH_DIR = "mcp-auth"
CLIENT_NAME = "agent-tui"
#: A token is refreshed this long before the server says it expires (at most a
#: quarter of its life), so that clock skew and a slow request do not meet a 401.
EXPIRY_MARGIN_S = 30.0


class LoginNeeded(Exception):
    """The server wants a login, and this connection may not ask the user for one."""


def _not_login_needed(record: logging.LogRecord) -> bool:
    """The SDK logs every OAuth flow error with its traceback (to stderr, where no
    handler is set: over the TUI); a login that is needed is a state, not an error."""
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, LoginNeeded)


logging.getLogger("mcp.client.auth.oauth2").addFilter(_not_login_needed)


class LoginRefused(Exception):
    """The authorization server refused the login (its error, worded)."""


def uses_oauth(config: ServerConfig) -> bool:
    """HTTP and SSE servers, unless their headers already carry credentials."""
    if config.transport in (Transport.STDIO, Transport.SDK):
        return False
    return not any(k.lower() == "authorization" for k in config.headers)


def token_path(auth_dir: Path, config: ServerConfig) -> Path:
    """The server's file: by name and URL, so a server given another URL starts afresh."""
    digest = hashlib.sha256((config.url or "").encode()).hexdigest()[:12]
    return auth_dir / f"{config.name}-{digest}.json"


class TokenFile:
    """The SDK's ``TokenStorage``: one owner-only JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        private_dir(self.path.parent)
        write_atomic(self.path.parent, self.path.name, json.dumps(data, indent=1).encode(), mode=0o600,
                     exact_mode=True)

    async def get_tokens(self) -> OAuthToken | None:
        raw = self._read().get("tokens")
        if not isinstance(raw, dict):
            return None
        expires_at = raw.pop("expires_at", None)
        try:
            token = OAuthToken.model_validate(raw)
        except ValueError:
            return None
        if isinstance(expires_at, (int, float)):
            token.expires_in = max(0, int(expires_at - time.time()))
        return token

    async def set_tokens(self, tokens: OAuthToken) -> None:
        data = self._read()
        raw = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            raw["expires_at"] = time.time() + tokens.expires_in
        data["tokens"] = raw
        self._write(data)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        raw = self._read().get("client")
        try:
            return OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        data = self._read()
        data["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._write(data)

    def forget(self, *, client: bool = False) -> None:
        """Drop the tokens (and the registered client too)."""
        data = self._read()
        if not data:
            return
        data.pop("tokens", None)
        if client:
            data.pop("client", None)
        self._write(data)

    def has_tokens(self) -> bool:
        return isinstance(self._read().get("tokens"), dict)


class _Context(OAuthContext):
    def update_token_expiry(self, token: OAuthToken) -> None:
        super().update_token_expiry(token)
        if self.token_expiry_time is not None and token.expires_in is not None:
            self.token_expiry_time -= min(EXPIRY_MARGIN_S, token.expires_in / 4)


class Provider(OAuthClientProvider):
    """The SDK's provider; a stored token keeps the time it expires (the SDK alone
    would take a token loaded from storage as valid until the server says 401, and
    then ask for a whole new login instead of refreshing)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.context.__class__ = _Context

    async def _initialize(self) -> None:
        await super()._initialize()
        if self.context.current_tokens is not None:
            self.context.update_token_expiry(self.context.current_tokens)


def client_metadata(redirect_uri: str, scopes: str | None = None) -> OAuthClientMetadata:
    return OAuthClientMetadata(
        client_name=CLIENT_NAME, redirect_uris=[redirect_uri],
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none", scope=scopes,
    )


def redirect_uri_for(config: ServerConfig, store: TokenFile) -> str:
    """``oauth.callbackPort``'s ``http://localhost:PORT/callback`` (as registered by
    hand with the server), else the loopback URI agent-tui registered."""
    if config.oauth is not None and config.oauth.callback_port:
        return f"http://localhost:{config.oauth.callback_port}/callback"
    return loopback_uri(registered_port(store))


def _pre_registered(config: ServerConfig, store: TokenFile, redirect_uri: str) -> None:
    """``oauth.clientId``: the client is registered by hand, so none is registered
    dynamically; the stored client is that one (tokens of another client dropped)."""
    if config.oauth is None or not config.oauth.client_id:
        return
    data = store._read()
    if (data.get("client") or {}).get("client_id") == config.oauth.client_id:
        return
    data.pop("tokens", None)
    data["client"] = OAuthClientInformationFull(
        client_id=config.oauth.client_id, redirect_uris=[redirect_uri],
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none",
    ).model_dump(mode="json", exclude_none=True)
    store._write(data)


def make_provider(
    config: ServerConfig, store: TokenFile, redirect_uri: str,
    redirect_handler: Callable[[str], Awaitable[None]],
    callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
) -> Provider:
    assert config.url is not None
    _pre_registered(config, store, redirect_uri)
    scopes = config.oauth.scopes if config.oauth is not None else None
    return Provider(config.url, client_metadata(redirect_uri, scopes), store,
                    redirect_handler=redirect_handler, callback_handler=callback_handler)


def background_provider(config: ServerConfig, auth_dir: Path, on_needed: Callable[[], None]) -> Provider:
    """The provider of a connection made in the background: it sends and refreshes
    the stored token; when only a new login would do, it raises LoginNeeded."""

    async def no_browser(_url: str) -> None:
        on_needed()
        raise LoginNeeded(f"MCP server {config.name} needs a login: /mcp, or agent-tui mcp login {config.name}")

    async def no_callback() -> AuthorizationCodeResult:
        raise LoginNeeded("no login in the background")

    store = TokenFile(token_path(auth_dir, config))
    return make_provider(config, store, redirect_uri_for(config, store), no_browser, no_callback)


def loopback_uri(port: int) -> str:
    return f"http://127.0.0.1:{port}/callback"


def registered_port(store: TokenFile) -> int:
    """The loopback port of the registered redirect URI (a free one when none is)."""
    raw = store._read().get("client")
    uris = raw.get("redirect_uris") if isinstance(raw, dict) else None
    if uris:
        try:
            from urllib.parse import urlparse

            port = urlparse(str(uris[0])).port
            if port:
                return port
        except ValueError:
            pass
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


__all__ = [
    "AUTH_DIR",
    "LoginNeeded",
    "LoginRefused",
    "Provider",
    "TokenFile",
    "background_provider",
    "client_metadata",
    "loopback_uri",
    "make_provider",
    "registered_port",
    "token_path",
    "uses_oauth",
]
