"""Discovery before a refresh: the authorization server's metadata found (protected
resource metadata, then the server's own, its issuer checked) before a refresh token
goes anywhere, for a token file kept without it (from an older agent-tui). Without
it the SDK would refresh at ``<MCP server's origin>/token``, an address guessed from
the MCP server rather than named by its authorization server."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
import httpx2
from mcp.client.auth.oauth2 import _origin_issuer
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    handle_auth_metadata_response,
    handle_protected_resource_response,
    issuers_match,
)
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata


async def discover(server_url: str, select: Callable[[list[str]], str],
                   check: Callable[[ProtectedResourceMetadata], Awaitable[None]],
                   found: list[OAuthMetadata]) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
    """Yield the discovery requests for ``server_url`` (each answer sent back in); the
    metadata of the authorization server ``select`` picks from those the resource names
    (or of the server's origin, where it names none) is appended to ``found`` when its
    issuer is that server. ``check`` raises for protected resource metadata of another resource."""
    auth_server: str | None = None
    for url in build_protected_resource_metadata_discovery_urls(None, server_url):
        prm = await handle_protected_resource_response((yield create_oauth_metadata_request(url)))
        if prm is not None:
            await check(prm)
            auth_server = select([str(a) for a in prm.authorization_servers])
            break
    expected = auth_server or _origin_issuer(server_url)
    for url in build_oauth_authorization_server_metadata_discovery_urls(auth_server, server_url):
        ok, meta = await handle_auth_metadata_response((yield create_oauth_metadata_request(url)))
        if not ok:
            return
        if meta is not None:
            if issuers_match(str(meta.issuer), expected) and meta.token_endpoint is not None:
                found.append(meta)
            return


__all__ = ["discover"]
