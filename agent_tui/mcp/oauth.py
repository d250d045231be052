"""OAuth 2.1 for HTTP MCP servers, through the MCP SDK's client auth
(``OAuthClientProvider``: discovery of the protected resource and the authorization
server, dynamic client registration, PKCE, the code exchange and refresh).

Each HTTP or SSE server without an ``Authorization`` header of its own gets a
provider. A server that answers 401 is then discovered and registered with, and
a stored token is sent and refreshed (before it expires, with a margin for the
clocks). What is kept lives in one owner-only file per server (``0600``, in an
``0700`` folder under the state folder): the registered client and the tokens, with
the time the access token expires, the scope a server asked for later (a ``403
insufficient_scope``: the next login asks for it too) and a pre-registered client's
secret or private key (set by the user, never by a settings file). A client with
one, at an authorization server that grants only ``client_credentials``, gets its
token with that grant, in the background (machine to machine).

A connection made in the background never opens a browser: when the server wants a
login and no token will do, its provider raises :class:`LoginNeeded` and the
server's state becomes ``needs_login``. A login is asked for by the user
(``agent-tui mcp login NAME``, ``/mcp``), see :mod:`.login`.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.oauth2 import OAuthContext
from mcp.client.auth.utils import is_valid_client_metadata_url, issuers_match, union_scopes
from mcp.shared.auth import (
    JWT_BEARER_GRANT_TYPE,
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)

from agent_tui.mcp.auth.cross_app import GrantRefused, IdentityProvider, exchange_for_grant
from agent_tui.mcp.auth.discovery import discover
from agent_tui.mcp.auth.guard import CredentialRefused, check_token_request, may_send_to
from agent_tui.mcp.auth.tokens import TokenFile, token_path
from agent_tui.settings.mcp_servers import ServerConfig, Transport

AUTH_DIR = "mcp-auth"
CLIENT_NAME = "agent-tui"
#: A token is refreshed this long before the server says it expires (at most a
#: quarter of its life), so that clock skew and a slow request do not meet a 401.
EXPIRY_MARGIN_S = 30.0
#: Claude Code's variable for a Client ID Metadata Document: the HTTPS URL that is the
#: client id where the authorization server takes one. Read from the environment
#: only (no settings file may name the client a login consents to).
CIMD_ENV = "MCP_OAUTH_CLIENT_METADATA_URL"


class LoginNeeded(Exception):
    """The server wants a login, and this connection may not ask the user for one."""


class LoginRefused(Exception):
    """The authorization server refused the login (its error, worded)."""


def _told_elsewhere(record: logging.LogRecord) -> bool:
    """The SDK logs every OAuth flow error with its traceback, and a refused refresh, as
    warnings or errors: to stderr where no handler is set (over the TUI, into ``-p``'s
    output). Each is told already, in one line (the login's error, the server's state
    and notice), so the record is demoted to debug (kept for a handler that wants it)."""
    if record.levelno > logging.DEBUG:
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
    return True


logging.getLogger("mcp.client.auth.oauth2").addFilter(_told_elsewhere)


def uses_oauth(config: ServerConfig) -> bool:
    """HTTP and SSE servers, unless their headers already carry credentials."""
    if config.transport in (Transport.STDIO, Transport.SDK):
        return False
    return not any(k.lower() == "authorization" for k in config.headers)


class _Context(OAuthContext):
    #: Whether the token endpoint at hand may get the client's credentials (set by the provider).
    may_refresh: Callable[[], bool]

    def can_refresh_token(self) -> bool:
        """No refresh that would send the user's secret or key where it does not belong
        (before discovery, with no metadata kept: a 401 leads to discovery instead)."""
        return super().can_refresh_token() and self.may_refresh()

    def update_token_expiry(self, token: OAuthToken) -> None:
        super().update_token_expiry(token)
        if self.token_expiry_time is not None and token.expires_in is not None:
            self.token_expiry_time -= min(EXPIRY_MARGIN_S, token.expires_in / 4)


class Provider(OAuthClientProvider):
    """The SDK's provider; a stored token keeps the time it expires (the SDK alone
    would take a token loaded from storage as valid until the server says 401, and
    then ask for a whole new login instead of refreshing)."""

    def __init__(self, server_url: str, metadata: OAuthClientMetadata, store: TokenFile,
                 scopes: str | None = None, **kwargs: Any) -> None:
        super().__init__(server_url, metadata, store, **kwargs)
        self.context.__class__ = _Context
        assert isinstance(self.context, _Context)
        self.context.may_refresh = self._may_refresh
        self.store = store
        self.scopes = scopes
        self._discovered = False  # whether discovery ran before a refresh (no metadata was kept)
        self.idp_transport: httpx2.AsyncBaseTransport | None = None  # the identity provider's (tests)

    async def _initialize(self) -> None:
        """Load the tokens with their expiry, and the authorization server's metadata they
        came from (when it is the one the client is bound to): a refresh goes to its token
        endpoint, not to one guessed from the MCP server's origin."""
        await super()._initialize()
        if self.context.current_tokens is not None:
            self.context.update_token_expiry(self.context.current_tokens)
        kept, info = self.store.server_metadata(), self.context.client_info
        if kept is not None and info is not None and info.issuer in (None, str(kept.issuer)):
            self.context.oauth_metadata = kept

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, after discovery when a token is to be refreshed and no
        authorization server's metadata was kept with it (see :mod:`.auth.discovery`)."""
        async with self.context.lock:
            if not self._initialized:
                await self._initialize()
            stale = (self.context.oauth_metadata is None and not self._discovered
                     and not self.context.is_token_valid() and OAuthContext.can_refresh_token(self.context))
        if stale:
            self._discovered = True
            found: list[OAuthMetadata] = []
            steps = discover(self.context.server_url, self._select_authorization_server,
                             self._validate_resource_match, found)
            try:
                outgoing = await steps.__anext__()
                while True:
                    outgoing = await steps.asend((yield outgoing))
            except StopAsyncIteration:
                pass
            info = self.context.client_info
            if found and info is not None and (info.issuer is None or issuers_match(info.issuer, str(found[0].issuer))):
                self.context.oauth_metadata = found[0]
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                outgoing = await flow.asend((yield outgoing))
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _may_refresh(self) -> bool:
        """A refresh goes to the token endpoint the authorization server's metadata names
        (found first when none was kept); to the SDK's ``<origin>/token`` only where
        discovery found none (a 2025-03-26 server), and never with a given secret or key."""
        if self.context.oauth_metadata is None and not self._discovered:
            return False
        return self._may_send(self._get_token_endpoint())

    def _select_authorization_server(self, advertised: list[str]) -> str:
        """The one the user named for the secret or key, where the resource lists it."""
        named = self.store.named_auth_server()
        return next((a for a in advertised if named is not None and issuers_match(a, named)), advertised[0])

    def _expected_issuer(self) -> str:
        """The authorization server in use; with one the user named (``--auth-server``), any
        other is refused before anything is sent to it (no registration, no login there)."""
        expected = super()._expected_issuer()
        named = self.store.named_auth_server()
        if named is not None and not issuers_match(expected, named):
            raise CredentialRefused(
                f"the MCP server names the authorization server {expected}, not {named}, the one its client "
                "secret or key was given for (mcp login --auth-server): refused")
        return expected

    def _given(self) -> bool:
        """Whether the client authenticates with a secret or key the user gave."""
        info = self.context.client_info
        if info is None or not info.client_id:
            return False
        secret = self.store.client_secret(info.client_id)
        return bool(secret and secret == info.client_secret) or self._key() is not None

    def _may_send(self, url: str) -> bool:
        return not self._given() or may_send_to(url, self.context.oauth_metadata, self.store.secret_issuer())

    def _guarded(self, request: httpx2.Request) -> httpx2.Request:
        if self._given():
            check_token_request(request, self.context.oauth_metadata, self.store.secret_issuer())
        return request

    async def _refresh_token(self) -> httpx2.Request:
        return self._guarded(await super()._refresh_token())

    async def _exchange_token_authorization_code(self, auth_code: str, code_verifier: str) -> httpx2.Request:
        return self._guarded(await super()._exchange_token_authorization_code(auth_code, code_verifier))

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        if self.context.oauth_metadata is not None:
            self.store.keep_server_metadata(self.context.oauth_metadata)

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        refreshed = await super()._handle_refresh_response(response)
        if refreshed and self.context.oauth_metadata is not None:  # found by discovery first: kept now
            self.store.keep_server_metadata(self.context.oauth_metadata)
        return refreshed

    async def _perform_authorization(self) -> httpx2.Request:
        """Ask for the configured scopes, those a server asked for later (kept: a
        login in the background only records them) and those it asks for now."""
        meta = self.context.client_metadata
        meta.scope = union_scopes(union_scopes(self.scopes, self.store.wanted_scope()), meta.scope)
        self.store.want_scope(meta.scope)
        await self._secret_method()
        if self._cross_app() is not None:
            return await self._identity_grant()
        if self._machine_to_machine():
            return await self._client_credentials()
        return await super()._perform_authorization()

    def _key(self) -> str | None:
        info = self.context.client_info
        return self.store.client_key(info.client_id) if info is not None and info.client_id else None

    def _machine_to_machine(self) -> bool:
        """A client with a secret or a key, at an authorization server that grants only
        ``client_credentials`` (no user, no browser: headless use)."""
        info, meta = self.context.client_info, self.context.oauth_metadata
        grants = (meta.grant_types_supported or []) if meta is not None else []
        return bool(info is not None and (info.client_secret or self._key()) and "client_credentials" in grants
                    and "authorization_code" not in grants)

    def _cross_app(self) -> IdentityProvider | None:
        """The user's identity provider, for a client with its secret at an authorization
        server that takes the ``jwt-bearer`` grant and is the one the secret is bound to."""
        info, meta = self.context.client_info, self.context.oauth_metadata
        if info is None or not info.client_id or not info.client_secret or meta is None or not self._given():
            return None
        given = self.store.identity_provider(info.client_id)
        if given is None or JWT_BEARER_GRANT_TYPE not in (meta.grant_types_supported or []):
            return None
        return IdentityProvider(**given) if self._may_send(self._get_token_endpoint()) else None

    async def _identity_grant(self) -> httpx2.Request:
        """SEP-990: the ID-JAG from the identity provider, presented with the ``jwt-bearer`` grant."""
        idp, meta = self._cross_app(), self.context.oauth_metadata
        assert idp is not None and meta is not None
        resource, scope = self.context.get_resource_url(), self.context.client_metadata.scope
        try:
            grant = await exchange_for_grant(idp, str(meta.issuer), resource, scope, self.idp_transport)
        except (GrantRefused, httpx2.HTTPError, ValueError) as exc:
            raise LoginRefused(str(exc)) from None
        data = {"grant_type": JWT_BEARER_GRANT_TYPE, "assertion": grant, "resource": resource,
                **({"scope": scope} if scope else {})}
        data, headers = self.context.prepare_token_auth(data, {"Content-Type": "application/x-www-form-urlencoded"})
        return self._guarded(httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers))

    async def _client_credentials(self) -> httpx2.Request:
        data: dict[str, str] = {"grant_type": "client_credentials"}
        data, headers = self.context.prepare_token_auth(data, {"Content-Type": "application/x-www-form-urlencoded"})
        key, meta, info = self._key(), self.context.oauth_metadata, self.context.client_info
        if key is not None and meta is not None and info is not None:  # RFC 7523: a signed assertion
            from mcp.client.auth.extensions.client_credentials import SignedJWTParameters

            sign = SignedJWTParameters(issuer=info.client_id or "", subject=info.client_id or "",
                                       signing_key=key, signing_algorithm=signing_algorithm(key))
            data["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            data["client_assertion"] = await sign.create_assertion_provider()(str(meta.issuer))
        if self.context.should_include_resource_param(self.context.protocol_version):
            data["resource"] = self.context.get_resource_url()
        if self.context.client_metadata.scope:
            data["scope"] = self.context.client_metadata.scope
        return self._guarded(httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers))

    async def _secret_method(self) -> None:
        """A client with a secret authenticates as the authorization server says it
        may (``client_secret_basic``, RFC 8414's default, else ``client_secret_post``),
        and is bound to that server, as is one with a key: a server that later names
        another one gets neither (the SDK drops credentials bound to another issuer and
        registers; :mod:`.auth.guard` checks each token request)."""
        info, meta = self.context.client_info, self.context.oauth_metadata
        if info is None or meta is None or not (info.client_secret or self._key()):
            return
        update: dict[str, Any] = {}
        if info.issuer is None:
            update["issuer"] = str(meta.issuer)
            self.store.bind_secret(str(meta.issuer))
        methods = meta.token_endpoint_auth_methods_supported or []
        if info.client_secret and methods and info.token_endpoint_auth_method not in methods:
            update["token_endpoint_auth_method"] = (
                "client_secret_post" if "client_secret_basic" not in methods else "client_secret_basic")
        if update:
            self.context.client_info = info.model_copy(update=update)
            await self.store.set_client_info(self.context.client_info)


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
    keyed = store.client_key(config.oauth.client_id) is not None
    secret = store.client_secret(config.oauth.client_id)
    issuer = store.secret_issuer() if secret or keyed else None
    held = data.get("client") or {}
    if (held.get("client_id"), held.get("client_secret")) == (config.oauth.client_id, secret) and (
            not secret or held.get("issuer") == issuer) and keyed == (held.get("token_endpoint_auth_method")
                                                                    == "private_key_jwt"):
        return
    data.pop("tokens", None)
    data["client"] = OAuthClientInformationFull(
        client_id=config.oauth.client_id, client_secret=secret, issuer=issuer, redirect_uris=[redirect_uri],
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="private_key_jwt" if keyed else "client_secret_basic" if secret else "none",
    ).model_dump(mode="json", exclude_none=True)
    store._write(data)


def signing_algorithm(pem: str) -> str:
    """The JWS algorithm of a private key (ES256/384/512 by curve, RS256, EdDSA);
    raise ValueError for what is not such a key."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not an unencrypted PEM private key ({exc})") from None
    if isinstance(key, ec.EllipticCurvePrivateKey):
        algs = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
        if key.curve.name in algs:
            return algs[key.curve.name]
    elif isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    elif isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise ValueError("the key must be an EC (P-256, P-384, P-521), RSA or Ed25519 private key")


def metadata_url() -> str | None:
    """The Client ID Metadata Document URL of ``MCP_OAUTH_CLIENT_METADATA_URL`` (None
    when unset); a bad one is refused rather than falling back to registration."""
    url = os.environ.get(CIMD_ENV, "").strip()
    if not url:
        return None
    if not is_valid_client_metadata_url(url):
        raise ValueError(f"{CIMD_ENV} must be an https:// URL with a path, got {url!r}")
    return url


def make_provider(
    config: ServerConfig, store: TokenFile, redirect_uri: str,
    redirect_handler: Callable[[str], Awaitable[None]],
    callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
) -> Provider:
    assert config.url is not None
    _pre_registered(config, store, redirect_uri)
    scopes = config.oauth.scopes if config.oauth is not None else None
    return Provider(config.url, client_metadata(redirect_uri, scopes), store=store, scopes=scopes,
                    redirect_handler=redirect_handler, callback_handler=callback_handler,
                    client_metadata_url=metadata_url())


def background_provider(config: ServerConfig, auth_dir: Path, on_needed: Callable[[str | None], None]) -> Provider:
    """The provider of a connection made in the background: it sends and refreshes
    the stored token; when only a new login would do, it raises LoginNeeded (the
    scope it would have asked for is kept for that login, and handed to ``on_needed``)."""

    async def no_browser(_url: str) -> None:
        on_needed(provider.context.client_metadata.scope)
        raise LoginNeeded(f"MCP server {config.name} needs a login: /mcp, or agent-tui mcp login {config.name}")

    async def no_callback() -> AuthorizationCodeResult:
        raise LoginNeeded("no login in the background")

    store = TokenFile(token_path(auth_dir, config))
    provider = make_provider(config, store, redirect_uri_for(config, store), no_browser, no_callback)
    return provider


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
    "metadata_url",
    "registered_port",
    "signing_algorithm",
    "token_path",
    "uses_oauth",
]
