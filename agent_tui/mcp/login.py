"""Logging in to an HTTP MCP server: the authorization URL opened in a browser (or
shown when there is none), the redirect caught on a loopback port, the code
exchanged for tokens (the SDK's provider does discovery, registration, PKCE and the
exchange; :mod:`.oauth` keeps what it gets).

The redirect URI is ``http://127.0.0.1:PORT/callback``, registered with the server
once; a later login listens on the same port (when it is taken, the client is
registered again with another). A refused login (the authorization server
redirects with ``error=...``) ends with :class:`~.oauth.LoginRefused` naming the
server's error and description.
"""

from __future__ import annotations

import asyncio
import inspect
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.auth import AuthorizationCodeResult

from agent_tui.settings.mcp_servers import ServerConfig
from agent_tui.mcp_catalog.browser import LOGIN_TIMEOUT_S, OpenUrl
from agent_tui.mcp_catalog.errors import short
from agent_tui.mcp.auth.cross_app import check_issuer
from agent_tui.mcp.auth.guard import CredentialRefused
from agent_tui.mcp.oauth import (
    LoginRefused,
    TokenFile,
    loopback_uri,
    make_provider,
    registered_port,
    signing_algorithm,
    token_path,
    uses_oauth,
)

_PAGE = ("<!doctype html><title>agent-tui</title><p>{text}</p>"
         "<p>You can close this tab and go back to agent-tui.</p>")


class Callback:
    """The loopback listener the authorization server redirects the browser to."""

    def __init__(self, port: int, host_name: str = "127.0.0.1") -> None:
        self.port = port
        self.host_name = host_name  # as the redirect URI names it ("localhost" when set by hand)
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self._server: asyncio.Server | None = None

    @property
    def redirect_uri(self) -> str:
        return loopback_uri(self.port).replace("127.0.0.1", self.host_name, 1)

    async def __aenter__(self) -> Callback:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def wait(self) -> AuthorizationCodeResult:
        assert self._result is not None
        return await asyncio.wait_for(asyncio.shield(self._result), LOGIN_TIMEOUT_S)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            parts = line.split()
            url = urlparse(parts[1]) if len(parts) >= 2 else None
            if url is None or url.path != "/callback":
                await _answer(writer, 404, "Not found.")
                return
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            try:  # the browser gets its page before the login goes on (and closes this listener)
                await _answer(writer, 400 if "error" in query else 200,
                              "The login was refused." if "error" in query else "Logged in.")
            finally:
                self._settle(query)
        except (OSError, TimeoutError, UnicodeError):
            pass
        finally:
            writer.close()

    def _settle(self, query: dict[str, str]) -> None:
        if self._result is None or self._result.done():
            return
        if "error" in query:
            why = query["error"] + (f" ({query['error_description']})" if query.get("error_description") else "")
            self._result.set_exception(LoginRefused(f"the authorization server refused the login: {why}"))
        elif "code" in query:
            self._result.set_result(AuthorizationCodeResult(
                code=query["code"], state=query.get("state"), iss=query.get("iss")))
        else:
            self._result.set_exception(LoginRefused("the redirect carried neither a code nor an error"))


async def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = _PAGE.format(text=text).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    await writer.drain()


async def login(config: ServerConfig, auth_dir: Path, open_url: OpenUrl, *, workspace: Path) -> None:
    """Log in to ``config``'s server now (a fresh login: stored tokens are dropped);
    raise LoginRefused (the server said no) or ValueError (what else went wrong)."""
    from agent_tui.mcp.transports import connect

    if not uses_oauth(config):
        raise ValueError(f"MCP server {config.name} is not an HTTP server that logs in "
                         "(stdio, or its headers carry an Authorization)")
    store = TokenFile(token_path(auth_dir, config))
    store.forget()
    fixed = config.oauth.callback_port if config.oauth is not None else None
    if fixed:  # oauth.callbackPort: the redirect URI registered by hand names it
        try:
            callback = await Callback(fixed, "localhost").__aenter__()
        except OSError as exc:
            raise ValueError(f"cannot listen on port {fixed} (oauth.callbackPort): {exc.strerror or exc}") from None
    else:
        try:
            callback = await Callback(registered_port(store)).__aenter__()
        except OSError:  # the registered port is taken: register again with another
            store.forget(client=True)
            callback = await Callback(0).__aenter__()

    async def redirect(url: str) -> None:
        shown = open_url(url)
        if inspect.isawaitable(shown):
            await shown

    try:
        provider = make_provider(config, store, callback.redirect_uri, redirect, callback.wait)
        async with AsyncExitStack() as stack:
            session, _ = await connect(stack, config, workspace=workspace, tag="login", errlog=None,
                                       auth=provider)
            assert isinstance(session, ClientSession)
            await _gated(session, await session.initialize(), store)
    except BaseException as exc:  # noqa: BLE001 - worded, the cause first
        raise _worded(exc, config) from None
    finally:
        await callback.__aexit__(None, None, None)
    if not store.has_tokens():
        raise ValueError(f"MCP server {config.name} did not ask for a login (no token was needed)")


def _client_id(config: ServerConfig, what: str) -> str:
    if not uses_oauth(config):
        raise ValueError(f"MCP server {config.name} is not an HTTP server that logs in")
    if config.oauth is None or not config.oauth.client_id:
        raise ValueError(f'MCP server {config.name} has no pre-registered client ("oauth": {{"clientId": ...}} '
                         f"in its entry): a {what} belongs to one")
    return config.oauth.client_id


def keep_client_secret(config: ServerConfig, auth_dir: Path, secret: str) -> None:
    """Keep the secret of ``config``'s pre-registered client (``oauth.clientId``) in
    its owner-only file, for this server and URL only; raise ValueError when it has none."""
    client_id = _client_id(config, "client secret")
    secret = secret.strip()
    if not secret:
        raise ValueError("the client secret is empty")
    TokenFile(token_path(auth_dir, config)).set_client_secret(client_id, secret)


def keep_client_key(config: ServerConfig, auth_dir: Path, pem: str) -> None:
    """Keep the private key (PEM) ``config``'s pre-registered client signs its token
    requests with (``private_key_jwt``), as a secret is kept; raise ValueError for
    a server without such a client or what is not a usable key."""
    client_id = _client_id(config, "client key")
    signing_algorithm(pem)
    TokenFile(token_path(auth_dir, config)).set_client_key(client_id, pem)


def keep_identity_provider(config: ServerConfig, auth_dir: Path, issuer: str, idp_client_id: str,
                           id_token: str) -> None:
    """Keep the user's enterprise identity provider for ``config``'s pre-registered
    client (cross-app access, SEP-990): its issuer, agent-tui's client id there and the
    user's ID token; raise ValueError for a server without such a client or a bad value."""
    client_id = _client_id(config, "identity provider")
    if not idp_client_id.strip() or not id_token.strip():
        raise ValueError("the identity provider's client id and the ID token must not be empty")
    TokenFile(token_path(auth_dir, config)).set_identity_provider(
        client_id, check_issuer(issuer), idp_client_id.strip(), id_token.strip())


def keep_auth_server(config: ServerConfig, auth_dir: Path, url: str) -> str:
    """Bind the secret or key kept for ``config``'s pre-registered client to the
    authorization server ``url`` (https, http only on the loopback) from the start: no
    other gets it or is logged in at. Returns the issuer as kept; ValueError for a bad
    URL or when no secret or key is kept."""
    from mcp.shared.auth import OAuthMetadata
    from pydantic import AnyHttpUrl, TypeAdapter

    client_id = _client_id(config, "named authorization server")
    as_metadata = TypeAdapter(AnyHttpUrl, config=OAuthMetadata.model_config)  # rendered as metadata renders it
    issuer = str(as_metadata.validate_python(check_issuer(url, "the authorization server")))
    if issuer.count("/") == 3 and issuer.endswith("/"):  # a root issuer, as servers name it: no slash
        issuer = issuer[:-1]
    store = TokenFile(token_path(auth_dir, config))
    if store.client_secret(client_id) is None and store.client_key(client_id) is None:
        raise ValueError("--auth-server binds a client secret or key: give --client-secret or --client-key too")
    store.name_auth_server(issuer)
    return issuer


def bound_to(config: ServerConfig, auth_dir: Path) -> tuple[str, bool] | None:
    """The authorization server a kept secret or key is bound to, and whether the user named it."""
    if config.oauth is None or not config.oauth.client_id:
        return None
    store = TokenFile(token_path(auth_dir, config))
    client_id = config.oauth.client_id
    if store.client_secret(client_id) is None and store.client_key(client_id) is None:
        return None
    issuer = store.secret_issuer()
    return (issuer, store.named_auth_server() is not None) if issuer is not None else None


async def _gated(session: ClientSession, init: Any, store: TokenFile) -> None:
    """A server may let ``initialize`` through and want a login only for the methods
    after it: list what it offers, as a session does, until one of them asks."""
    caps = getattr(init, "capabilities", None)
    probes = [(getattr(caps, "tools", None), session.list_tools),
              (getattr(caps, "resources", None), session.list_resources),
              (getattr(caps, "prompts", None), session.list_prompts)]
    for offered, probe in probes:
        if store.has_tokens():
            return
        if offered is not None:
            try:
                await probe()
            except MCPError:
                pass  # the method's own error: not a login


def _worded(exc: BaseException, config: ServerConfig) -> BaseException:
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
        leaf = leaf.exceptions[0]
    if isinstance(leaf, (LoginRefused, asyncio.CancelledError, KeyboardInterrupt)):
        return leaf
    if isinstance(leaf, CredentialRefused):
        return LoginRefused(str(leaf))
    if isinstance(leaf, TimeoutError):
        return ValueError(f"no login came back within {LOGIN_TIMEOUT_S:g} s")
    return ValueError(f"cannot log in to {config.url}: {short(leaf)}")


__all__ = ["Callback", "bound_to", "keep_auth_server", "keep_client_key", "keep_client_secret", "keep_identity_provider", "login"]
