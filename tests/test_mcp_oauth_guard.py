"""A client secret or private key the user gave goes only to the token endpoint of the
authorization server it was registered with: never to the MCP server's own origin
(where the SDK falls back to ``<origin>/token`` when it refreshes before discovery,
as after a restart), never to another authorization server. In process, through the
real SDK flow, against a hostile MCP server that records every request it gets."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx2
import pytest

from agent_tui.mcp.oauth import TokenFile, background_provider, token_path
from agent_tui.settings.mcp_servers import OAuthOptions, ServerConfig, Transport
from tests.mcp_support import AS, MCP, protected

CONFIG = ServerConfig(name="tickets", transport=Transport.HTTP, source=Path("test"), url=f"{MCP}/mcp",
                      oauth=OAuthOptions(client_id="robot"))


def _credentials(request: httpx2.Request) -> dict[str, str]:
    """What of a client's own credentials a request carries."""
    form = dict(parse_qsl(request.content.decode(errors="replace"))) if request.method == "POST" else {}
    found = {k: v for k, v in form.items() if k in ("client_secret", "client_assertion", "refresh_token")}
    auth = request.headers.get("authorization", "")
    if auth.startswith("Basic "):
        found["basic"] = base64.b64decode(auth.removeprefix("Basic ")).decode()
    return found


def _metadata(issuer: str, grants: tuple[str, ...] = ("authorization_code", "refresh_token")) -> dict[str, Any]:
    return {"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token",
            "registration_endpoint": f"{issuer}/register", "response_types_supported": ["code"],
            "grant_types_supported": list(grants), "token_endpoint_auth_methods_supported": ["client_secret_basic"]}


def _world(seen: list[tuple[str, str, dict[str, str]]], *, names: str = AS) -> httpx2.MockTransport:
    """The authorization server ``as.example`` and a hostile MCP server ``mcp.example``
    whose protected resource metadata names ``names`` and which would take a token
    request at its own ``/token`` (and acts as an authorization server of its own)."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        host, path = request.url.host, request.url.path
        seen.append((host, path, _credentials(request)))
        if path.startswith("/.well-known/oauth-protected-resource"):
            return httpx2.Response(200, json={"resource": f"{MCP}/mcp", "authorization_servers": [names]})
        if path.startswith("/.well-known/oauth-authorization-server"):
            return httpx2.Response(200, json=_metadata(f"https://{host}"))
        if path == "/register":
            return httpx2.Response(201, json={"client_id": f"registered-at-{host}", "redirect_uris": ["http://x/cb"],
                                              "token_endpoint_auth_method": "none"})
        if path == "/token":
            return httpx2.Response(200, json={"access_token": f"from-{host}", "token_type": "Bearer",
                                              "expires_in": 3600, "refresh_token": "r2"})
        if path == "/mcp":
            return protected(names == AS and request.headers.get("authorization") == "Bearer from-as.example")
        return httpx2.Response(404)

    return httpx2.MockTransport(handle)


def _logged_in(auth_dir: Path, *, with_metadata: bool) -> TokenFile:
    """A confidential client logged in at as.example earlier, its access token expired
    (a later session); ``with_metadata``: as this version keeps it, else as one before."""
    store = TokenFile(token_path(auth_dir, CONFIG))
    store.set_client_secret("robot", "s3cret")
    store.bind_secret(AS)
    background_provider(CONFIG, auth_dir, lambda _s: None)  # the client record, as a login leaves it
    data = store._read()
    data["tokens"] = {"access_token": "old", "token_type": "Bearer", "refresh_token": "r1", "expires_at": time.time() - 60}
    if with_metadata:
        data["server"] = _metadata(AS)
    store._write(data)
    return store


async def _connect(auth_dir: Path, transport: httpx2.MockTransport) -> httpx2.Response | Exception:
    async with httpx2.AsyncClient(transport=transport, auth=background_provider(CONFIG, auth_dir, lambda _s: None)) as c:
        try:
            return await c.post(CONFIG.url or "", json={})
        except Exception as exc:  # noqa: BLE001 - the outcome is what the test reads
            return exc


def _secret_went_to(seen: list[tuple[str, str, dict[str, str]]]) -> list[tuple[str, str]]:
    return [(host, path) for host, path, creds in seen
            if "s3cret" in creds.get("basic", "") or creds.get("client_secret") == "s3cret"]


@pytest.mark.asyncio
async def test_a_refresh_after_a_restart_goes_to_the_authorization_server_not_the_mcp_servers_origin(
        tmp_path: Path) -> None:
    _logged_in(tmp_path, with_metadata=True)
    seen: list[tuple[str, str, dict[str, str]]] = []
    answer = await _connect(tmp_path, _world(seen))
    assert isinstance(answer, httpx2.Response) and answer.status_code == 200, answer
    assert _secret_went_to(seen) == [("as.example", "/token")]
    assert not [s for s in seen if s[0] == "mcp.example" and s[2]]  # no credential of any kind reached it
    assert TokenFile(token_path(tmp_path, CONFIG))._read()["tokens"]["access_token"] == "from-as.example"


@pytest.mark.asyncio
async def test_without_the_authorization_servers_address_a_kept_secret_is_not_sent_to_guess_it(
        tmp_path: Path) -> None:
    _logged_in(tmp_path, with_metadata=False)
    seen: list[tuple[str, str, dict[str, str]]] = []
    await _connect(tmp_path, _world(seen))
    assert not [s for s in seen if s[0] == "mcp.example" and s[2]], seen
    assert set(_secret_went_to(seen)) <= {("as.example", "/token")}


@pytest.mark.asyncio
async def test_a_server_that_names_itself_the_authorization_server_gets_no_secret(tmp_path: Path) -> None:
    for with_metadata in (True, False):
        auth_dir = tmp_path / str(with_metadata)
        _logged_in(auth_dir, with_metadata=with_metadata)
        seen: list[tuple[str, str, dict[str, str]]] = []
        answer = await _connect(auth_dir, _world(seen, names=MCP))
        assert not isinstance(answer, httpx2.Response) or answer.status_code != 200
        assert _secret_went_to(seen) in ([], [("as.example", "/token")]), seen
        assert not [s for s in seen if s[0] == "mcp.example" and ("basic" in s[2] or "client_secret" in s[2])]
        assert TokenFile(token_path(auth_dir, CONFIG)).secret_issuer() == AS


def test_a_signed_assertion_goes_only_to_the_bound_servers_token_endpoint() -> None:
    from mcp.shared.auth import OAuthMetadata

    from agent_tui.mcp.auth.guard import CredentialRefused, check_token_request

    meta = OAuthMetadata.model_validate(_metadata(AS))
    signed = {"grant_type": "client_credentials", "client_assertion": "eyJ..."}
    check_token_request(httpx2.Request("POST", f"{AS}/token", data=signed), meta, AS)
    check_token_request(httpx2.Request("POST", f"{MCP}/token", data={"grant_type": "refresh_token"}), None, None)
    for url, held, bound in ((f"{MCP}/token", meta, AS), (f"{AS}/token", None, AS), (f"{AS}/token", meta, MCP),
                             (f"{AS}/other", meta, AS)):
        with pytest.raises(CredentialRefused, match="not sending the client secret or key to"):
            check_token_request(httpx2.Request("POST", url, data=signed), held, bound)


def _named(auth_dir: Path, named: str) -> TokenFile:
    """The secret given with ``--auth-server named``, before any login."""
    from agent_tui.mcp.login import keep_auth_server, keep_client_secret

    keep_client_secret(CONFIG, auth_dir, "s3cret")
    keep_auth_server(CONFIG, auth_dir, named)
    return TokenFile(token_path(auth_dir, CONFIG))


@pytest.mark.asyncio
async def test_a_named_authorization_server_is_the_only_one_a_login_goes_to(tmp_path: Path) -> None:
    from agent_tui.mcp.auth.guard import CredentialRefused

    for names in (MCP, "https://other.example"):  # the hostile server itself, or a server it names
        auth_dir = tmp_path / names.removeprefix("https://")
        _named(auth_dir, "https://AS.example:443/")
        seen: list[tuple[str, str, dict[str, str]]] = []
        answer = await _connect(auth_dir, _world(seen, names=names))
        assert isinstance(answer, CredentialRefused), answer
        assert str(answer) == (f"the MCP server names the authorization server {names}, not https://as.example, the "
                               "one its client secret or key was given for (mcp login --auth-server): refused")
        # nothing went to the server it named: no metadata asked for, no registration, no token request
        assert {(host, path) for host, path, _ in seen} == {
            ("mcp.example", "/mcp"), ("mcp.example", "/.well-known/oauth-protected-resource/mcp")}, seen
        kept = TokenFile(token_path(auth_dir, CONFIG))._read()
        assert kept["auth_server"] == kept["secret"]["issuer"] == "https://as.example" and "tokens" not in kept


@pytest.mark.asyncio
async def test_a_named_authorization_server_is_chosen_among_those_listed(tmp_path: Path) -> None:
    store = _named(tmp_path, AS)
    seen: list[tuple[str, str, dict[str, str]]] = []
    world = _world(seen)

    def lists_two(request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if path.startswith("/.well-known/oauth-protected-resource"):
            seen.append((request.url.host, path, {}))
            return httpx2.Response(200, json={"resource": f"{MCP}/mcp", "authorization_servers": [
                "https://other.example", AS]})
        if path.startswith("/.well-known/oauth-authorization-server"):  # machine to machine: no browser
            seen.append((request.url.host, path, {}))
            return httpx2.Response(200, json=_metadata(f"https://{request.url.host}", ("client_credentials",)))
        return world.handler(request)  # type: ignore[no-any-return]

    answer = await _connect(tmp_path, httpx2.MockTransport(lists_two))
    assert isinstance(answer, httpx2.Response) and answer.status_code == 200, answer
    assert not [s for s in seen if s[0] == "other.example"], seen
    assert _secret_went_to(seen) == [("as.example", "/token")]
    assert store.secret_issuer() == AS


@pytest.mark.asyncio
async def test_a_public_clients_old_token_file_is_refreshed_after_discovery_not_at_the_mcp_servers_origin(
        tmp_path: Path) -> None:
    public = CONFIG.model_copy(update={"oauth": None})
    store = TokenFile(token_path(tmp_path, public))
    store._write({"client": {"client_id": "pub", "redirect_uris": ["http://127.0.0.1:1/callback"],
                             "token_endpoint_auth_method": "none"},
                  "tokens": {"access_token": "old", "token_type": "Bearer", "refresh_token": "r1",
                             "expires_at": time.time() - 60}})  # as an older agent-tui kept it: no "server"
    seen: list[tuple[str, str, dict[str, str]]] = []
    async with httpx2.AsyncClient(transport=_world(seen), auth=background_provider(public, tmp_path,
                                                                                   lambda _s: None)) as client:
        answer = await client.post(public.url or "", json={})
    assert answer.status_code == 200
    refreshes = [(host, path) for host, path, creds in seen if creds.get("refresh_token")]
    assert refreshes == [("as.example", "/token")], seen
    assert store._read()["server"]["issuer"] == AS  # kept now: the next refresh needs no discovery


def test_a_refused_credential_is_told_in_its_own_words() -> None:
    from agent_tui.mcp.auth.guard import CredentialRefused
    from agent_tui.mcp.errors import describe_startup

    told = describe_startup(CredentialRefused("not sending the client secret or key to\n https://x/token"), CONFIG)
    assert told == f"cannot use {MCP}/mcp: not sending the client secret or key to https://x/token"
