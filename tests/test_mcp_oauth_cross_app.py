"""Cross-app access (SEP-990) through the real SDK flow, in process: the user's ID token
goes only to their identity provider's token endpoint (as its own metadata names it),
the grant it gives is asked for the authorization server the client's secret is bound
to and presented there with the ``jwt-bearer`` grant; a server that names another
authorization server gets nothing, and an identity provider whose metadata names
another issuer gets no ID token. (The conformance suite's
``auth/cross-app-access-complete-flow`` runs the same over HTTP.)"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx2
import pytest

from agent_tui.mcp.login import keep_client_secret, keep_identity_provider
from agent_tui.mcp.oauth import TokenFile, background_provider, token_path
from agent_tui.settings.mcp_servers import OAuthOptions, ServerConfig, Transport
from tests.mcp_support import AS, MCP, protected

IDP = "https://idp.example"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CONFIG = ServerConfig(name="wiki", transport=Transport.HTTP, source=Path("test"), url=f"{MCP}/mcp",
                      oauth=OAuthOptions(client_id="wiki-client"))


def _world(seen: list[tuple[str, str, dict[str, str]]], *, names: str = AS,
           idp_issuer: str = IDP) -> httpx2.MockTransport:
    def handle(request: httpx2.Request) -> httpx2.Response:
        host, path = request.url.host, request.url.path
        form = dict(parse_qsl(request.content.decode())) if request.method == "POST" else {}
        auth = request.headers.get("authorization", "")
        if auth.startswith("Basic "):
            form["basic"] = base64.b64decode(auth[6:]).decode()
        seen.append((host, path, form))
        if path.startswith("/.well-known/oauth-protected-resource"):
            return httpx2.Response(200, json={"resource": f"{MCP}/mcp", "authorization_servers": [names]})
        if path.startswith("/.well-known/") and host == "idp.example":
            return httpx2.Response(200, json={"issuer": idp_issuer, "token_endpoint": f"{IDP}/token",
                                              "authorization_endpoint": f"{IDP}/authorize",
                                              "response_types_supported": ["code"]})
        if path.startswith("/.well-known/oauth-authorization-server"):
            return httpx2.Response(200, json={
                "issuer": f"https://{host}", "authorization_endpoint": f"https://{host}/authorize",
                "token_endpoint": f"https://{host}/token", "response_types_supported": ["code"],
                "grant_types_supported": [JWT_BEARER], "token_endpoint_auth_methods_supported": ["client_secret_basic"]})
        if (host, path) == ("idp.example", "/token"):
            return httpx2.Response(200, json={"access_token": f"id-jag-for-{form.get('audience')}",
                                              "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                                              "token_type": "N_A"})
        if path == "/token":
            return httpx2.Response(200, json={"access_token": "granted", "token_type": "Bearer", "expires_in": 3600})
        if path == "/mcp":
            return protected(names == AS and request.headers.get("authorization") == "Bearer granted")
        return httpx2.Response(404)

    return httpx2.MockTransport(handle)


async def _connect(auth_dir: Path, transport: httpx2.MockTransport) -> httpx2.Response | Exception:
    provider = background_provider(CONFIG, auth_dir, lambda _s: None)
    provider.idp_transport = transport
    async with httpx2.AsyncClient(transport=transport, auth=provider) as client:
        try:
            return await client.post(CONFIG.url or "", json={})
        except Exception as exc:  # noqa: BLE001 - the outcome is what the test reads
            return exc


def _kept(auth_dir: Path) -> None:
    keep_client_secret(CONFIG, auth_dir, "wiki-secret")
    keep_identity_provider(CONFIG, auth_dir, IDP, "agent-tui-at-idp", "the-id-token")


def _holding(seen: list[tuple[str, str, dict[str, str]]], value: str) -> list[tuple[str, str]]:
    return [(host, path) for host, path, form in seen if any(value in v for v in form.values())]


@pytest.mark.asyncio
async def test_the_id_token_becomes_a_grant_at_the_identity_provider_and_a_token_at_the_bound_server(
        tmp_path: Path) -> None:
    _kept(tmp_path)
    seen: list[tuple[str, str, dict[str, str]]] = []
    answer = await _connect(tmp_path, _world(seen))
    assert isinstance(answer, httpx2.Response) and answer.status_code == 200, answer
    assert _holding(seen, "the-id-token") == [("idp.example", "/token")]
    [exchange] = [form for host, path, form in seen if (host, path) == ("idp.example", "/token")]
    assert exchange["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert exchange["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
    assert exchange["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token"
    assert (exchange["audience"], exchange["resource"], exchange["client_id"]) == (
        "https://as.example", f"{MCP}/mcp", "agent-tui-at-idp")
    [grant] = [form for host, path, form in seen if (host, path) == ("as.example", "/token")]
    assert grant["grant_type"] == JWT_BEARER and grant["assertion"] == "id-jag-for-https://as.example"
    assert grant["basic"] == "wiki-client:wiki-secret"
    assert _holding(seen, "wiki-secret") == [("as.example", "/token")]
    assert TokenFile(token_path(tmp_path, CONFIG)).secret_issuer() == "https://as.example"


@pytest.mark.asyncio
async def test_a_server_naming_another_authorization_server_gets_no_grant_and_no_secret(tmp_path: Path) -> None:
    _kept(tmp_path)
    await _connect(tmp_path, _world([]))  # bound to as.example
    seen: list[tuple[str, str, dict[str, str]]] = []
    answer = await _connect(tmp_path, _world(seen, names=MCP))
    assert not isinstance(answer, httpx2.Response) or answer.status_code != 200
    assert _holding(seen, "the-id-token") == [] and _holding(seen, "wiki-secret") == []
    assert not [s for s in seen if s[0] == "idp.example"]


@pytest.mark.asyncio
async def test_an_identity_provider_whose_metadata_names_another_issuer_gets_no_id_token(tmp_path: Path) -> None:
    _kept(tmp_path)
    seen: list[tuple[str, str, dict[str, str]]] = []
    answer = await _connect(tmp_path, _world(seen, idp_issuer="https://evil.example"))
    assert isinstance(answer, Exception) and "issuer" in str(answer), answer
    assert _holding(seen, "the-id-token") == [] and _holding(seen, "wiki-secret") == []


def test_an_identity_provider_is_an_https_issuer_for_a_pre_registered_client(tmp_path: Path) -> None:
    for issuer in ("http://idp.example", "ftp://idp.example", "https://idp.example?x=1", "idp.example"):
        with pytest.raises(ValueError, match="must be an https:// issuer URL"):
            keep_identity_provider(CONFIG, tmp_path, issuer, "id", "token")
    keep_identity_provider(CONFIG, tmp_path, "http://127.0.0.1:9", "id", "token")  # the loopback may be plain
    bare = CONFIG.model_copy(update={"oauth": None})
    with pytest.raises(ValueError, match="has no pre-registered client"):
        keep_identity_provider(bare, tmp_path, IDP, "id", "token")
    kept: dict[str, Any] = TokenFile(token_path(tmp_path, CONFIG))._read()["idp"]
    assert kept == {"for_client": "wiki-client", "issuer": "http://127.0.0.1:9", "client_id": "id", "id_token": "token"}


def test_mcp_login_takes_the_identity_provider_from_the_command_line_and_checks_it(tmp_path: Path) -> None:
    import json
    import subprocess

    from tests.forked_runs import popen_agent
    from tests.print_agent import env_for

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"wiki": {
        "type": "http", "url": "http://127.0.0.1:9/mcp", "oauth": {"clientId": "wiki-client"}}}}))
    env = env_for(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"), MCP_IDP_ID_TOKEN="the-id-token")
    proc = popen_agent(["mcp", "login", "wiki", "--idp", "http://idp.example", "--idp-client-id", "x", "--cwd",
                        str(ws)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "the identity provider must be an https:// issuer URL" in err, err
    assert not list((tmp_path / "home").rglob("mcp-auth/wiki-*.json"))  # nothing kept
