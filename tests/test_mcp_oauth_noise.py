"""An MCP server whose login fails (a hostile authorization server: metadata naming
another issuer, a refused registration) is told in one line, in ``-p`` and by
``agent-tui mcp login``: the MCP SDK's own log of the failure, with its traceback,
does not reach stderr."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.forked_runs import run_agent
from tests.print_agent import env_for


class _Hostile(BaseHTTPRequestHandler):
    """A 401 naming its own authorization server, whose metadata names another issuer
    (``/mismatch``) or which refuses every registration (``/refuse``)."""

    def log_message(self, *_args: Any) -> None:
        pass

    def _json(self, code: int, body: dict[str, Any], **headers: str) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        mode = self.path.rstrip("/").rsplit("/", 1)[-1]
        if self.path.startswith("/.well-known/oauth-protected-resource/"):
            self._json(200, {"resource": f"{base}/{mode}", "authorization_servers": [f"{base}/{mode}"]})
        elif self.path.startswith("/.well-known/oauth-authorization-server/"):
            issuer = "https://elsewhere.example" if mode == "mismatch" else f"{base}/{mode}"
            self._json(200, {"issuer": issuer, "authorization_endpoint": f"{base}/authorize",
                             "token_endpoint": f"{base}/token", "registration_endpoint": f"{base}/register",
                             "response_types_supported": ["code"]})
        else:
            self._json(404, {})

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/register":
            self._json(400, {"error": "invalid_client_metadata", "error_description": "not you"})
            return
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._json(401, {}, WWW_Authenticate=f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource'
                                             f'{self.path}"')


@pytest.fixture
def hostile() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_failed_mcp_login_is_one_line_in_print_mode_and_from_mcp_login(hostile: str, tmp_path: Path) -> None:
    config = tmp_path / "config" / "agent-tui" / "mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {
        "mismatch": {"type": "http", "url": f"{hostile}/mismatch"},
        "refuse": {"type": "http", "url": f"{hostile}/refuse"}}}))
    ws = tmp_path / "ws"
    ws.mkdir()
    env = env_for(tmp_path, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), BROWSER="true")

    out = run_agent(["--provider", "scripted", "-p", "hi", "--cwd", str(ws)], env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "OAuth flow error" not in out.stderr, out.stderr
    told = [line for line in out.stderr.splitlines() if "failed" in line]
    assert sorted(told) == [
        f"error: MCP server mismatch failed: cannot use {hostile}/mismatch: OAuthFlowError: Authorization server "
        f"metadata issuer mismatch: https://elsewhere.example != {hostile}/mismatch",
        f"error: MCP server refuse failed: cannot use {hostile}/refuse: OAuthRegistrationError: Registration "
        'failed: 400 {"error": "invalid_client_metadata", "error_description": "not you"}'], out.stderr

    login = run_agent(["mcp", "login", "refuse", "--cwd", str(ws)], env=env, timeout=60)
    assert login.returncode == 1
    assert login.stderr.splitlines() == [
        f"agent-tui: cannot log in to {hostile}/refuse: OAuthRegistrationError: Registration failed: 400 "
        '{"error": "invalid_client_metadata", "error_description": "not you"}'], login.stderr
