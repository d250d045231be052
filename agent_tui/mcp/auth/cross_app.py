"""Enterprise-managed authorization (SEP-990, cross-app access), the first leg: the
user's ID token from their enterprise identity provider is exchanged there (RFC 8693
token exchange) for an identity assertion authorization grant (an ID-JAG) meant for
one authorization server and one MCP server; the provider then presents that grant
with the RFC 7523 ``jwt-bearer`` grant, authenticated with the client's kept secret.

The identity provider is the user's: its issuer, the client id agent-tui has there and
the ID token are given to ``agent-tui mcp login NAME --idp ISSUER`` (never read from a
settings file) and kept in the server's owner-only token file. The ID token goes only
to the token endpoint the issuer's own metadata names (its issuer checked, RFC 8414
3.3), over HTTPS (plain HTTP only on the loopback).
"""

from __future__ import annotations

from urllib.parse import urlparse

import httpx2
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    handle_auth_metadata_response,
    validate_metadata_issuer,
)
from pydantic import BaseModel

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


class IdentityProvider(BaseModel):
    """What the user gave for a server's enterprise sign-in."""

    issuer: str
    client_id: str
    id_token: str


class GrantRefused(Exception):
    """The identity provider gave no grant (its error, worded)."""


def check_issuer(issuer: str, what: str = "the identity provider") -> str:
    """The issuer as given, when it is an https URL (http only on the loopback); else ValueError."""
    url = urlparse(issuer.strip())
    if not url.hostname or url.scheme not in ("https", "http") or (
            url.scheme == "http" and url.hostname not in _LOOPBACK) or url.query or url.fragment:
        raise ValueError(f"{what} must be an https:// issuer URL (http:// only on the loopback), got {issuer!r}")
    return issuer.strip()


async def _token_endpoint(client: httpx2.AsyncClient, issuer: str) -> str:
    """The token endpoint of ``issuer``'s own metadata (OpenID or OAuth), its issuer checked."""
    for url in build_oauth_authorization_server_metadata_discovery_urls(issuer, issuer):
        ok, meta = await handle_auth_metadata_response(await client.get(url))
        if not ok:
            break
        if meta is not None:
            validate_metadata_issuer(meta, issuer)
            if meta.token_endpoint is not None:
                return str(meta.token_endpoint)
    raise GrantRefused(f"the identity provider {issuer} has no metadata with a token endpoint")


async def exchange_for_grant(idp: IdentityProvider, audience: str, resource: str, scope: str | None,
                             transport: httpx2.AsyncBaseTransport | None = None) -> str:
    """The ID-JAG for ``audience`` (the authorization server) and ``resource`` (the MCP server)."""
    async with httpx2.AsyncClient(transport=transport, timeout=30.0, follow_redirects=False) as client:
        endpoint = await _token_endpoint(client, check_issuer(idp.issuer))
        form = {"grant_type": TOKEN_EXCHANGE, "subject_token": idp.id_token, "subject_token_type": ID_TOKEN_TYPE,
                "requested_token_type": ID_JAG_TYPE, "audience": audience, "resource": resource,
                "client_id": idp.client_id, **({"scope": scope} if scope else {})}
        answer = await client.post(endpoint, data=form)
    try:
        body = answer.json()
    except ValueError:
        body = {}
    grant = body.get("access_token") if isinstance(body, dict) else None
    if answer.status_code != 200 or body.get("issued_token_type") != ID_JAG_TYPE or not isinstance(grant, str):
        said = f"{body.get('error')} ({body.get('error_description') or ''})" if isinstance(body, dict) else ""
        raise GrantRefused(f"the identity provider {idp.issuer} gave no grant (HTTP {answer.status_code} {said}); "
                           "its ID token may have expired: give a new one to agent-tui mcp login --idp")
    return grant


__all__ = ["GrantRefused", "IdentityProvider", "check_issuer", "exchange_for_grant"]
