"""The OAuth paths beyond a plain login, against tests/mcp_servers/oauth_server.py:
a call refused for want of scope (403 ``insufficient_scope``: step-up), a
pre-registered confidential client (its secret given to ``agent-tui mcp login
--client-secret``, never read from a settings file), and a Client ID Metadata
Document URL (``MCP_OAUTH_CLIENT_METADATA_URL``, from the environment only)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_tui.mcp import ServerState
from agent_tui.mcp.oauth import CIMD_ENV, TokenFile, token_path
from agent_tui.protocol import ToolState
from tests.forked_runs import popen_agent
from tests.mcp_support import call, free_port, oauth_server
from tests.mcp_support import browser, events, web


@pytest.mark.asyncio
async def test_a_call_that_wants_more_scope_asks_for_a_login_that_asks_for_it(make_manager: Any,
                                                                               tmp_path: Path) -> None:
    for url, record in oauth_server(tmp_path, "--step-up", "admin"):
        manager, tools = await make_manager(web(url))
        await manager.login("web", browser([], []))
        await manager.wait_started(15.0)
        plain, _ = await call(tools, "mcp__web__whoami", {})
        assert plain.outcome is ToolState.SUCCEEDED, plain.content

        refused, _ = await call(tools, "mcp__web__admin", {})
        assert refused.outcome is ToolState.FAILED
        assert refused.content == (
            "MCP server 'web' wants a new login before it runs admin, which did not run: needs a new "
            "login (the server asks for admin): /mcp, or agent-tui mcp login web")
        [status] = manager.status()
        assert status.state is ServerState.NEEDS_LOGIN
        assert len(events(record, "authorize")) == 1  # the background opened no browser
        assert events(record, "admin") == [] and len(events(record, "forbidden")) == 1
        assert TokenFile(token_path(manager.auth_dir, web(url))).wanted_scope() == "admin"

        seen: list[str] = []
        await manager.login("web", browser(seen, []))
        await manager.wait_started(15.0)
        assert "scope=admin" in seen[0]
        assert events(record, "authorize")[-1]["scopes"] == ["admin"]
        done, _ = await call(tools, "mcp__web__admin", {})
        assert done.outcome is ToolState.SUCCEEDED, done.content
        assert len(events(record, "admin")) == 1


def _secret_login(tmp_path: Path, url: str, port: int) -> Callable[..., tuple[int, str, str]]:
    """``agent-tui mcp login web --client-secret [MORE]`` for a project whose ``web`` is a
    pre-registered confidential client of ``url`` (the secret in the environment, a browser
    that follows the URL)."""
    from tests.print_agent import env_for

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": {
        "type": "http", "url": url, "oauth": {"clientId": "confidential", "callbackPort": port}}}}))
    follow = tmp_path / "browser.py"
    follow.write_text("import sys, urllib.request\nurllib.request.urlopen(sys.argv[1], timeout=10).read()\n")
    env = env_for(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"),
                  BROWSER=f"{sys.executable} {follow} %s", MCP_CLIENT_SECRET="s3cret")

    def login(*more: str) -> tuple[int, str, str]:
        proc = popen_agent(["mcp", "login", "web", "--client-secret", *more, "--cwd", str(ws)], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=60)
        return proc.returncode, out, err

    return login


def test_a_client_secret_is_given_to_the_login_and_kept_owner_only(tmp_path: Path) -> None:
    port = free_port()
    for url, record in oauth_server(tmp_path, "--client", "confidential", f"http://localhost:{port}/callback",
                                    "--secret", "s3cret"):
        code, out, err = _secret_login(tmp_path, url, port)()
        assert code == 0, err
        assert "Logged in to web." in out
        [saved] = (tmp_path / "home").rglob("mcp-auth/web-*.json")
        assert stat.S_IMODE(saved.stat().st_mode) == 0o600
        kept = json.loads(saved.read_text())
        # bound to the authorization server it was first sent to
        assert kept["secret"] == {"client_id": "confidential", "client_secret": "s3cret", "issuer": url.removesuffix("/mcp")}
        assert kept["tokens"]["access_token"] == events(record, "token")[0]["access"]
        assert "s3cret" not in (tmp_path / "ws" / ".mcp.json").read_text()
        assert (f"goes only to the authorization server {url.removesuffix('/mcp')}, the first one it was used with "
                "(to name it yourself: agent-tui mcp login web --client-secret --auth-server URL)") in out


def test_mcp_login_auth_server_names_the_only_server_the_secret_goes_to(tmp_path: Path) -> None:
    port = free_port()
    for url, record in oauth_server(tmp_path, "--client", "confidential", f"http://localhost:{port}/callback",
                                    "--secret", "s3cret"):
        login = _secret_login(tmp_path, url, port)
        # the MCP server is its own authorization server: not the one named, so refused, in one line
        code, _, err = login("--auth-server", "https://as.example")
        assert code == 1 and err.strip() == (
            "agent-tui: cannot log in to web: the MCP server names the authorization server "
            f"{url.removesuffix('/mcp')}, not https://as.example, the one its client secret or key was given for "
            "(mcp login --auth-server): refused"), err
        assert events(record, "token") == [] and events(record, "authorize") == []
        code, _, err = login("--auth-server", "http://example.com")
        assert code == 1 and "the authorization server must be an https:// issuer URL" in err, err

        code, out, err = login("--auth-server", url.removesuffix("/mcp"))
        assert code == 0, err
        assert f"goes only to the authorization server {url.removesuffix('/mcp')} (--auth-server)." in out
        [saved] = (tmp_path / "home").rglob("mcp-auth/web-*.json")
        kept = json.loads(saved.read_text())
        assert kept["auth_server"] == kept["secret"]["issuer"] == url.removesuffix("/mcp")
        assert len(events(record, "token")) == 1


@pytest.mark.asyncio
async def test_without_its_secret_a_confidential_client_is_refused(make_manager: Any, tmp_path: Path) -> None:
    from agent_tui.mcp.login import keep_client_secret
    from agent_tui.settings.mcp_servers import OAuthOptions

    port = free_port()
    for url, record in oauth_server(tmp_path, "--client", "confidential", f"http://localhost:{port}/callback",
                                    "--secret", "s3cret"):
        config = web(url).model_copy(update={"oauth": OAuthOptions(client_id="confidential", callback_port=port)})
        manager, tools = await make_manager(config)
        with pytest.raises(ValueError, match="invalid_client|unauthorized"):
            await manager.login("web", browser([], []))
        assert events(record, "token") == []
        with pytest.raises(ValueError, match="no pre-registered client"):
            keep_client_secret(web(url), manager.auth_dir, "s3cret")
        keep_client_secret(config, manager.auth_dir, "s3cret")
        await manager.login("web", browser([], []))
        await manager.wait_started(15.0)
        result, _ = await call(tools, "mcp__web__whoami", {})
        assert result.outcome is ToolState.SUCCEEDED, result.content


def test_a_project_file_cannot_plant_a_client_secret(tmp_path: Path) -> None:
    from agent_tui.mcp import load_config

    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": {
        "type": "http", "url": "http://127.0.0.1:9/mcp",
        "oauth": {"clientId": "theirs", "clientSecret": "theirs-too"}}}}))
    config = load_config(tmp_path, user_config_dir=tmp_path / "none", environ={})
    assert config.servers == []  # the whole entry is skipped, not half used
    [problem] = config.problems
    assert "oauth.clientSecret" in problem.message and "--client-secret" in problem.message


@pytest.mark.asyncio
async def test_a_metadata_document_url_comes_from_the_environment_and_a_bad_one_is_refused(
        make_manager: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CIMD_ENV, "http://example.com/client.json")
    for url, record in oauth_server(tmp_path):
        manager, _ = await make_manager(web(url))
        [status] = manager.status()
        assert status.state is ServerState.FAILED
        assert f"{CIMD_ENV} must be an https:// URL with a path" in (status.error or "")
        with pytest.raises(ValueError, match=f"{CIMD_ENV} must be an https:// URL"):
            await manager.login("web", browser([], []))
        # A good one is used only where the authorization server says it takes one: this
        # one does not, so the client registers itself as before.
        monkeypatch.setenv(CIMD_ENV, "https://example.com/client.json")
        await manager.login("web", browser([], []))
        assert len(events(record, "register")) == 1
        assert events(record, "authorize")[0]["client_id"] == events(record, "register")[0]["client_id"]


def _machine_server(seen: list[dict[str, Any]], issuer: str = "https://mcp.example",
                    methods: tuple[str, ...] = ("client_secret_basic",)) -> Any:
    """An authorization server (``issuer``) that grants only ``client_credentials``
    (client_secret_basic), and its resource: in process, through the real SDK flow."""
    import base64

    import httpx2

    base = "https://mcp.example"

    def handle(request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if path == "/.well-known/oauth-protected-resource/mcp":
            return httpx2.Response(200, json={"resource": f"{base}/mcp", "authorization_servers": [issuer]})
        if path == "/.well-known/oauth-authorization-server":
            return httpx2.Response(200, json={
                "issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token",
                "response_types_supported": ["code"], "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": list(methods)})
        if path == "/token":
            from urllib.parse import parse_qsl

            form = dict(parse_qsl(request.content.decode()))
            seen.append({"host": request.url.host, "form": form, "basic": base64.b64decode(
                request.headers.get("authorization", "Basic ").removeprefix("Basic ")).decode()})
            return httpx2.Response(200, json={"access_token": "machine", "token_type": "Bearer", "expires_in": 3600})
        if path == "/mcp":
            if request.headers.get("authorization") == "Bearer machine" and issuer == base:
                return httpx2.Response(200, json={"ok": True})
            return httpx2.Response(401, headers={"WWW-Authenticate": (
                f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"')})
        return httpx2.Response(404)

    return httpx2.MockTransport(handle)


@pytest.mark.asyncio
async def test_a_client_with_a_secret_gets_a_machine_token_where_only_that_grant_is_offered(tmp_path: Path) -> None:
    import httpx2

    from agent_tui.mcp.oauth import background_provider
    from agent_tui.settings.mcp_servers import OAuthOptions, ServerConfig, Transport

    config = ServerConfig(name="m2m", transport=Transport.HTTP, source=Path("test"), url="https://mcp.example/mcp",
                          oauth=OAuthOptions(client_id="robot"))
    needed: list[str | None] = []
    seen: list[dict[str, Any]] = []
    # Without a secret it is a login the background may not ask for.
    async with httpx2.AsyncClient(transport=_machine_server(seen),
                                  auth=background_provider(config, tmp_path, needed.append)) as client:
        with pytest.raises(Exception, match="needs a login"):
            await client.post(config.url or "", json={})
    assert needed == [None] and seen == []
    TokenFile(token_path(tmp_path, config)).set_client_secret("robot", "beep")
    async with httpx2.AsyncClient(transport=_machine_server(seen),
                                  auth=background_provider(config, tmp_path, needed.append)) as client:
        answer = await client.post(config.url or "", json={})
    assert answer.status_code == 200 and needed == [None]  # no login, no browser
    [token_request] = seen
    assert token_request["form"]["grant_type"] == "client_credentials"
    assert token_request["basic"] == "robot:beep"
    assert TokenFile(token_path(tmp_path, config))._read()["tokens"]["access_token"] == "machine"

    # The server now names another authorization server: the secret does not go there.
    async with httpx2.AsyncClient(transport=_machine_server(seen, "https://elsewhere.example"),
                                  auth=background_provider(config, tmp_path, needed.append)) as client:
        with pytest.raises(Exception):
            await client.post(config.url or "", json={})
    assert [r["host"] for r in seen] == ["mcp.example"]  # it registers there instead (and fails)
    assert TokenFile(token_path(tmp_path, config)).secret_issuer() == "https://mcp.example"


@pytest.mark.asyncio
async def test_a_client_key_signs_the_machine_token_request(tmp_path: Path) -> None:
    import httpx2
    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from agent_tui.mcp.login import keep_client_key
    from agent_tui.mcp.oauth import background_provider
    from agent_tui.settings.mcp_servers import OAuthOptions, ServerConfig, Transport

    config = ServerConfig(name="m2m", transport=Transport.HTTP, source=Path("test"), url="https://mcp.example/mcp",
                          oauth=OAuthOptions(client_id="robot"))
    with pytest.raises(ValueError, match="not an unencrypted PEM private key"):
        keep_client_key(config, tmp_path, "-----BEGIN NOTHING-----")
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    keep_client_key(config, tmp_path, pem)
    seen: list[dict[str, Any]] = []
    async with httpx2.AsyncClient(transport=_machine_server(seen, methods=("private_key_jwt",)),
                                  auth=background_provider(config, tmp_path, lambda _scope: None)) as client:
        answer = await client.post(config.url or "", json={})
    assert answer.status_code == 200
    [token_request] = seen
    form = token_request["form"]
    assert form["grant_type"] == "client_credentials" and "client_secret" not in form
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    claims = jwt.decode(form["client_assertion"], key.public_key(), algorithms=["ES256"],
                        audience="https://mcp.example")
    assert claims["iss"] == claims["sub"] == "robot"
    kept = json.loads(token_path(tmp_path, config).read_text())
    assert stat.S_IMODE(token_path(tmp_path, config).stat().st_mode) == 0o600 and kept["key"]["pem"] == pem
