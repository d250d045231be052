"""An MCP server that is its own OAuth 2.1 authorization server (the official SDK's
server-side auth: discovery metadata, dynamic client registration, PKCE, refresh),
over streamable HTTP on 127.0.0.1.

Usage: oauth_server.py RECORD_FILE PORT [--ttl SECONDS] [--refuse] [--sse]

(``--sse``: the legacy SSE transport at ``/sse`` instead of streamable HTTP at ``/mcp``;
``--client ID REDIRECT_URI``: a client registered by hand, and no dynamic registration.)

- ``/authorize`` grants at once (no login page) and redirects to the client's
  redirect URI with a code; with ``--refuse`` it redirects with
  ``error=access_denied`` instead;
- access tokens live ``--ttl`` seconds (default 3600) and are checked on every MCP
  request (an expired one gets 401); refresh tokens rotate;
- RECORD_FILE gets a JSON line per registration, authorization, token grant and
  tool call (with the token the call came with).
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

RECORD = sys.argv[1]
PORT = int(sys.argv[2])
TTL = int(sys.argv[sys.argv.index("--ttl") + 1]) if "--ttl" in sys.argv else 3600
REFUSE = "--refuse" in sys.argv
SSE = "--sse" in sys.argv
CLIENT = sys.argv[sys.argv.index("--client") + 1: sys.argv.index("--client") + 3] if "--client" in sys.argv else None
SECRET = sys.argv[sys.argv.index("--secret") + 1] if "--secret" in sys.argv else None  # of CLIENT
STEP_UP = sys.argv[sys.argv.index("--step-up") + 1] if "--step-up" in sys.argv else None  # the tool admin's scope
BASE = f"http://127.0.0.1:{PORT}"


def record(event: str, **extra: object) -> None:
    with open(RECORD, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"event": event, "t": time.time(), **extra}, default=str) + "\n")


class Provider:
    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        if CLIENT:
            self.clients[CLIENT[0]] = OAuthClientInformationFull(
                client_id=CLIENT[0], redirect_uris=[CLIENT[1]], client_secret=SECRET,
                token_endpoint_auth_method="client_secret_basic" if SECRET else "none",
                grant_types=["authorization_code", "refresh_token"], response_types=["code"])
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        if STEP_UP:  # the client may ask for it later
            client_info.scope = " ".join(filter(None, [client_info.scope, STEP_UP]))
        self.clients[client_info.client_id or ""] = client_info
        record("register", client_id=client_info.client_id,
               redirect_uris=[str(u) for u in client_info.redirect_uris or []])

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        record("authorize", client_id=client.client_id, redirect_uri=str(params.redirect_uri),
               code_challenge=params.code_challenge, scopes=params.scopes)
        if REFUSE:
            return construct_redirect_uri(str(params.redirect_uri), error="access_denied",
                                          error_description="the user said no", state=params.state)
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300,
            client_id=client.client_id or "", code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + TTL, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes,
                                             resource=resource)
        return OAuthToken(access_token=access, expires_in=TTL, refresh_token=refresh,
                          scope=" ".join(scopes) or None)

    async def exchange_authorization_code(self, client, authorization_code: AuthorizationCode) -> OAuthToken:
        del self.codes[authorization_code.code]
        token = self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)
        record("token", grant="authorization_code", access=token.access_token)
        return token

    async def load_refresh_token(self, client, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        if self.refresh.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token already used")
        token = self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)
        record("token", grant="refresh_token", access=token.access_token)
        return token

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            if found is not None:
                record("expired", access=token)
            return None
        return found

    async def revoke_token(self, token) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


PROVIDER = Provider()
mcp = MCPServer(
    "oauth-server",
    auth_server_provider=PROVIDER,
    auth=AuthSettings(
        issuer_url=BASE, resource_server_url=f"{BASE}/{'sse' if SSE else 'mcp'}", validate_token_resource=False,
        client_registration_options=ClientRegistrationOptions(enabled=not CLIENT),
    ),
)


@mcp.tool()
async def whoami(ctx: Context) -> str:
    """The token this call came with."""
    request = ctx.request_context.request
    auth = request.headers.get("authorization", "") if request is not None else ""
    token = auth.removeprefix("Bearer ")
    record("call", access=token)
    return f"token {token[:6]}"


async def admin() -> str:
    """Wants the --step-up scope (a 403 insufficient_scope before it runs)."""
    record("admin")
    return "admin done"


def step_up(app: Any) -> Any:
    """A call of ``admin`` with a token without the STEP_UP scope is refused (403)."""
    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        try:
            request = json.loads(body)
        except ValueError:
            request = {}
        if isinstance(request, dict) and (request.get("params") or {}).get("name") == "admin":
            token = dict(scope["headers"]).get(b"authorization", b"").decode().removeprefix("Bearer ")
            found = PROVIDER.access.get(token)
            if found is not None and STEP_UP not in found.scopes:
                record("forbidden", scopes=found.scopes)
                challenge = (f'Bearer error="insufficient_scope", scope="{STEP_UP}", '
                             f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"')
                await send({"type": "http.response.start", "status": 403,
                            "headers": [(b"www-authenticate", challenge.encode()), (b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": b'{"error": "insufficient_scope"}'})
                return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return guarded


if __name__ == "__main__":
    if STEP_UP:
        mcp.tool()(admin)
        import uvicorn

        uvicorn.run(step_up(mcp.streamable_http_app()), host="127.0.0.1", port=PORT, log_level="warning")
    elif SSE:
        mcp.run("sse", host="127.0.0.1", port=PORT)
    else:
        mcp.run("streamable-http", host="127.0.0.1", port=PORT)
