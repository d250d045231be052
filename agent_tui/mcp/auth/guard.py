"""Where a client's own credentials may go: a client secret or private key the user
gave (``agent-tui mcp login --client-secret`` / ``--client-key``) is sent only to the
token endpoint of the authorization server it is bound to (the one the user named with
``--auth-server``, else the first one it was sent to, as that server's RFC 8414
metadata names it). Never to an address guessed from
the MCP server's origin (the SDK's ``<origin>/token`` when no metadata is at hand),
never to another authorization server. The check stands right before a token request
leaves; it fails closed."""

from __future__ import annotations

from urllib.parse import parse_qsl

import httpx2
from mcp.client.auth.utils import issuers_match
from mcp.shared.auth import OAuthMetadata


class CredentialRefused(Exception):
    """A token request would carry the client's secret or key somewhere else."""


def carries_credential(request: httpx2.Request) -> bool:
    """Whether a token request authenticates the client (Basic, a posted secret, an assertion)."""
    if request.headers.get("authorization", "").lower().startswith("basic "):
        return True
    form = dict(parse_qsl(request.content.decode(errors="replace")))
    return bool(form.get("client_secret") or form.get("client_assertion"))


def may_send_to(url: str, metadata: OAuthMetadata | None, bound_issuer: str | None) -> bool:
    """Whether ``url`` is the token endpoint of the authorization server the credential is bound to."""
    return (metadata is not None and bound_issuer is not None and issuers_match(str(metadata.issuer), bound_issuer)
            and metadata.token_endpoint is not None and url == str(metadata.token_endpoint))


def check_token_request(request: httpx2.Request, metadata: OAuthMetadata | None, bound_issuer: str | None) -> None:
    """Raise :class:`CredentialRefused` when ``request`` carries a credential elsewhere."""
    if carries_credential(request) and not may_send_to(str(request.url), metadata, bound_issuer):
        where = f"{request.url.scheme}://{request.url.netloc.decode()}{request.url.path}"
        raise CredentialRefused(
            f"not sending the client secret or key to {where}: it goes only to the token endpoint of "
            f"{bound_issuer or 'the authorization server it was registered with'} (log in again: "
            "agent-tui mcp login)")


__all__ = ["CredentialRefused", "carries_credential", "check_token_request", "may_send_to"]
