"""OAuth 2.1 for HTTP MCP servers, against tests/mcp_servers/oauth_server.py (the
official SDK's server-side auth: an authorization server and an MCP server in one
process on 127.0.0.1). The test plays the browser: it follows the authorization URL
with an HTTP client, which the server redirects to our loopback port."""

from __future__ import annotations

import asyncio
import json
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_tui.protocol import ToolState
from agent_tui.mcp import ServerConfig, ServerState
from agent_tui.settings.mcp_servers import Transport
from agent_tui.mcp.oauth import LoginRefused, token_path
from tests.forked_runs import popen_agent, run_agent
from tests.mcp_support import free_port, call
from tests.mcp_support import answered, browser, events, oauth_server, web


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    yield from oauth_server(tmp_path, "--ttl", "2")


@pytest.mark.asyncio
async def test_a_login_then_calls_then_refresh_when_the_token_expires(make_manager: Any, server: Any,
                                                                      tmp_path: Path) -> None:
    url, record = server
    manager, tools = await make_manager(web(url))
    [status] = manager.status()
    assert status.state is ServerState.NEEDS_LOGIN, status
    assert status.error == "needs a login: /mcp, or agent-tui mcp login web"
    assert events(record, "authorize") == []  # the background never opens a browser

    seen: list[str] = []
    answers: list[Any] = []
    await manager.login("web", browser(seen, answers))
    [opened] = seen
    assert "code_challenge_method=S256" in opened and "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in opened
    assert await answered(answers) and answers[0][0] == 200 and "Logged in." in answers[0][1]
    [registered] = events(record, "register")
    assert registered["redirect_uris"][0].startswith("http://127.0.0.1:")
    await manager.wait_started(15.0)
    assert manager.status()[0].state is ServerState.READY

    first, _ = await call(tools, "mcp__web__whoami", {})
    assert first.outcome is ToolState.SUCCEEDED, first.content
    saved = token_path(manager.auth_dir, web(url))
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert stat.S_IMODE(saved.parent.stat().st_mode) == 0o700
    stored = json.loads(saved.read_text())
    assert stored["tokens"]["access_token"] == events(record, "token")[0]["access"]
    assert "expires_at" in stored["tokens"] and stored["client"]["client_id"] == registered["client_id"]

    await asyncio.sleep(2.2)  # the token (2 s) expires mid-session
    second, _ = await call(tools, "mcp__web__whoami", {})
    assert second.outcome is ToolState.SUCCEEDED, second.content
    grants = [t["grant"] for t in events(record, "token")]
    assert grants == ["authorization_code", "refresh_token"]
    calls = events(record, "call")
    assert calls[-1]["access"] == events(record, "token")[1]["access"] != calls[0]["access"]
    assert len(events(record, "authorize")) == 1  # refreshed, not logged in again
    assert json.loads(saved.read_text())["tokens"]["access_token"] == calls[-1]["access"]


@pytest.mark.asyncio
async def test_a_stored_token_is_used_and_refreshed_by_the_next_session(make_manager: Any, server: Any) -> None:
    url, record = server
    manager, _ = await make_manager(web(url))
    await manager.login("web", browser([], []))
    await manager.shutdown()
    await asyncio.sleep(2.2)  # expired while no session ran

    again, tools = await make_manager(web(url))
    assert again.status()[0].state is ServerState.READY, again.status()
    result, _ = await call(tools, "mcp__web__whoami", {})
    assert result.outcome is ToolState.SUCCEEDED
    assert [t["grant"] for t in events(record, "token")] == ["authorization_code", "refresh_token"]
    assert len(events(record, "register")) == 1 and len(events(record, "authorize")) == 1


@pytest.mark.asyncio
async def test_a_refused_login_says_why_and_keeps_needing_one(make_manager: Any, tmp_path: Path) -> None:
    for url, record in oauth_server(tmp_path, "--refuse"):
        manager, _ = await make_manager(web(url))
        answers: list[Any] = []
        with pytest.raises(LoginRefused, match=r"refused the login: access_denied \(the user said no\)"):
            await manager.login("web", browser([], answers))
        assert await answered(answers) and answers[0][0] == 400
        assert manager.status()[0].state is ServerState.NEEDS_LOGIN
        assert events(record, "token") == []
        assert not json.loads(token_path(manager.auth_dir, web(url)).read_text()).get("tokens")


# ----------------------------------------------------------------------------- the command line


def _project(tmp_path: Path, url: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": {"type": "http", "url": url}}}))
    return ws


def _login(tmp_path: Path, ws: Path, browser_cmd: str | None) -> subprocess.Popen:
    """``agent-tui mcp login web``; no ``browser_cmd``: no browser at all (none on the PATH)."""
    from tests.print_agent import env_for

    if browser_cmd is None:
        empty = tmp_path / "empty-bin"
        empty.mkdir(exist_ok=True)
        env = env_for(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"), PATH=str(empty))
        for var in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"):
            env.pop(var, None)
    else:
        env = env_for(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"), BROWSER=browser_cmd)
    return popen_agent(["mcp", "login", "web", "--cwd", str(ws)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_mcp_login_opens_the_browser_and_keeps_the_tokens_owner_only(server: Any, tmp_path: Path) -> None:
    url, record = server
    ws = _project(tmp_path, url)
    follow = tmp_path / "browser.py"  # a browser: follows the URL and its redirects
    follow.write_text("import sys, urllib.request\nurllib.request.urlopen(sys.argv[1], timeout=10).read()\n")
    proc = _login(tmp_path, ws, f"{sys.executable} {follow} %s")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Opening your browser to log in; if it does not open, visit: http://127.0.0.1:" in out
    assert "Logged in to web." in out
    [saved] = (tmp_path / "home").rglob("mcp-auth/web-*.json")
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert json.loads(saved.read_text())["tokens"]["access_token"] == events(record, "token")[0]["access"]


def test_mcp_login_without_a_browser_prints_the_url_and_a_refusal_is_clear(tmp_path: Path) -> None:
    for url, _record in oauth_server(tmp_path, "--refuse"):
        ws = _project(tmp_path, url)
        proc = _login(tmp_path, ws, None)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("To log in, open: http://127.0.0.1:"), line
        with pytest.raises(urllib.error.HTTPError):  # the redirect lands on our port: 400
            urllib.request.urlopen(line.split(": ", 1)[1].strip(), timeout=10)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 1
        assert "cannot log in to web: the authorization server refused the login: access_denied " \
               "(the user said no)" in err


def test_mcp_login_of_an_unknown_server_names_those_configured(tmp_path: Path) -> None:
    from tests.print_agent import env_for

    ws = _project(tmp_path, "http://127.0.0.1:9/mcp")
    out = run_agent(["mcp", "login", "nope", "--cwd", str(ws)],
                         env=env_for(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config")), timeout=60)
    assert out.returncode == 1 and "no MCP server named 'nope' (configured: web)" in out.stderr


@pytest.mark.asyncio
async def test_an_sse_server_logs_in_the_same_way(make_manager: Any, tmp_path: Path) -> None:
    for url, record in oauth_server(tmp_path, "--sse"):
        old = ServerConfig(name="old", transport=Transport.SSE, source=Path("test"),
                           url=url.removesuffix("/mcp") + "/sse")
        manager, tools = await make_manager(old)
        assert manager.status()[0].state is ServerState.NEEDS_LOGIN, manager.status()
        await manager.login("old", browser([], []))
        await manager.wait_started(15.0)
        assert manager.status()[0].state is ServerState.READY, manager.status()
        result, _ = await call(tools, "mcp__old__whoami", {})
        assert result.outcome is ToolState.SUCCEEDED, result.content
        assert events(record, "call")[-1]["access"] == events(record, "token")[0]["access"]


@pytest.mark.asyncio
async def test_a_client_registered_by_hand_and_a_fixed_callback_port(make_manager: Any, tmp_path: Path) -> None:
    from agent_tui.mcp import load_config

    port = free_port()
    redirect = f"http://localhost:{port}/callback"
    for url, record in oauth_server(tmp_path, "--client", "hand-made", redirect):
        ws = tmp_path / "ws"
        ws.mkdir()
        (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": {
            "type": "http", "url": url, "oauth": {"clientId": "hand-made", "callbackPort": port},
            "headersHelper": "get-headers.sh"}}}))
        config = load_config(ws, user_config_dir=tmp_path / "none", environ={})
        assert [str(p) for p in config.problems] == [
            f"{ws / '.mcp.json'} (server 'web'): not supported by agent-tui, ignored: headersHelper"]
        [server] = config.servers
        manager, tools = await make_manager(server)
        assert manager.status()[0].state is ServerState.NEEDS_LOGIN
        seen: list[str] = []
        await manager.login("web", browser(seen, []))
        assert "client_id=hand-made" in seen[0] and f"redirect_uri=http%3A%2F%2Flocalhost%3A{port}" in seen[0]
        await manager.wait_started(15.0)
        result, _ = await call(tools, "mcp__web__whoami", {})
        assert result.outcome is ToolState.SUCCEEDED, result.content
        assert events(record, "register") == []  # nothing registered dynamically


def test_bad_oauth_options_are_named(tmp_path: Path) -> None:
    from agent_tui.mcp import load_config

    ws = tmp_path
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "a": {"type": "http", "url": "http://127.0.0.1:9/mcp", "oauth": {"callbackPort": "80"}},
        "b": {"type": "http", "url": "http://127.0.0.1:9/mcp", "oauth": {"authServerMetadataUrl": "https://x"}},
    }}))
    config = load_config(ws, user_config_dir=ws / "none", environ={})
    problems = {p.server: p.message for p in config.problems}
    assert config.servers == []
    assert "callbackPort" in problems["a"] and "port number" in problems["a"]
    assert "not supported by agent-tui: authServerMetadataUrl" in problems["b"]
