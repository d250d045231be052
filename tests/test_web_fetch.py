"""web_fetch against a real HTTP server on 127.0.0.1 (loopback allowed for the test),
through httpx, the address checks, the caps and the cancel scope."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agent_tui.cancel import CancelScope
from agent_tui.protocol import Interrupt, UserMessage, Verdict
from agent_tui.core.calls.tool import InvalidInput, ToolContext, ToolResult
from agent_tui.permissions import PermissionRules, Permissions
from agent_tui.protocol import PermissionMode
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.settings import load_settings
from agent_tui.tools.web import tool as web_tool
from agent_tui.tools.web.addresses import _public
from agent_tui.tools.web.tool import WebFetchTool
from tests.fake_api import Reply
from tests.harness import start_session

PAGE = """<!doctype html>
<html><head><title>The Page</title><style>body { color: red }</style>
<script>document.write("never shown")</script></head>
<body><h1>Getting started</h1>
<p>Read the <a href="/docs/install">install guide</a> or <b>skip</b> it.</p>
<ul><li>one</li><li>two</li></ul>
<pre><code>pip install thing
</code></pre>
<noscript>enable scripts</noscript></body></html>"""


class _Site(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.server.paths.append(self.path)
        route = getattr(self, "route_" + self.path.strip("/").split("?")[0].replace("-", "_"), None)
        if route is None:
            self._send(404, "text/html", b"<h1>Not here</h1>")
            return
        route()

    def _send(self, status: int, kind: str, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def route_page(self) -> None:
        self._send(200, "text/html; charset=utf-8", PAGE.encode())

    def route_notes(self) -> None:
        self._send(200, "text/plain; charset=utf-8", "plain notes\nsecond line\n".encode())

    def route_big(self) -> None:
        self._send(200, "text/plain", b"x" * 300_000)

    def route_image(self) -> None:
        self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 100)

    def route_moved(self) -> None:
        self._send(301, "text/html", b"", Location="/page")

    def route_elsewhere(self) -> None:
        port = self.server.server_address[1]
        self._send(302, "text/html", b"", Location=f"http://localhost:{port}/page")

    def route_loop(self) -> None:
        self._send(302, "text/html", b"", Location="/loop")

    def route_slow(self) -> None:
        """Headers, then a trickle of body that would take a minute."""
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(60 * 1000))
        self.end_headers()
        try:
            for _ in range(60 * 10):
                self.wfile.write(b"y" * 100)
                self.wfile.flush()
                self.server.sent += 100
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            self.server.disconnected.set()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Site)
        self.paths: list[str] = []
        self.sent = 0
        self.disconnected = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def site() -> Iterator[_Server]:
    server = _Server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def ctx(tmp_path: Path, scope: CancelScope | None = None) -> ToolContext:
    return ToolContext(scope=scope or CancelScope(), workspace=tmp_path, tool_use_id="t",
                       operation_id="op")


async def fetch(tmp_path: Path, url: str, **tool_opts) -> ToolResult:
    tool = WebFetchTool(allow_private=tool_opts.pop("allow_private", True), **tool_opts)
    return await tool.run(tool.parse({"url": url}), ctx(tmp_path))


@pytest.mark.asyncio
async def test_html_comes_back_as_markdown_with_absolute_links(site, tmp_path) -> None:
    result = await fetch(tmp_path, f"{site.url}/page")
    assert result.outcome == "succeeded", result.content
    head, _, body = result.content.partition("\n\n")
    assert head.startswith(f"{site.url}/page: 200 OK, text/html, ")
    assert body.startswith("# The Page\n\n# Getting started\n\n")
    assert f"[install guide]({site.url}/docs/install)" in body
    assert "**skip**" in body and "- one\n- two" in body
    assert "```\npip install thing\n```" in body
    for hidden in ("never shown", "color: red", "enable scripts"):
        assert hidden not in body


@pytest.mark.asyncio
async def test_plain_text_is_returned_as_it_is(site, tmp_path) -> None:
    result = await fetch(tmp_path, f"{site.url}/notes")
    assert result.content.endswith("\n\nplain notes\nsecond line\n")


@pytest.mark.asyncio
async def test_download_and_text_caps_are_said(site, tmp_path, monkeypatch) -> None:
    cut = await fetch(tmp_path, f"{site.url}/big", max_bytes=20_000)
    assert cut.outcome == "succeeded"
    assert "19.5 KiB (cut short)" in cut.content.splitlines()[0]
    assert cut.content.endswith("x\n[The download stopped at 19.5 KiB: the page goes on.]")
    monkeypatch.setattr(web_tool, "MAX_CHARS", 1_000)
    long = await fetch(tmp_path, f"{site.url}/big")
    assert long.content.endswith("[Cut at 1,000 of 300,000 characters.]")


@pytest.mark.asyncio
async def test_loopback_is_refused_unless_allowed(site, tmp_path) -> None:
    result = await fetch(tmp_path, f"{site.url}/page", allow_private=False)
    assert result.outcome == "failed"
    assert "127.0.0.1 resolves to 127.0.0.1, a loopback or private address: refused" in result.content
    assert '"webFetch": {"allowPrivate": true}' in result.content
    assert site.paths == []  # nothing was sent
    named = await fetch(tmp_path, f"http://localhost:{site.server_address[1]}/page",
                        allow_private=False)
    assert named.outcome == "failed" and "loopback or private" in named.content


def test_private_link_local_and_mapped_addresses_are_not_public() -> None:
    for address in ("10.1.2.3", "192.168.0.1", "172.16.5.4", "169.254.169.254", "127.0.0.1",
                    "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1",
                    "224.0.0.1"):
        assert not _public(address), address
    for address in ("93.184.215.14", "2606:4700::6810:85e5"):
        assert _public(address), address


def test_only_http_and_https_urls_parse() -> None:
    tool = WebFetchTool()
    for url in ("file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "example.com",
                "http://user:pw@example.com/"):
        with pytest.raises(InvalidInput):
            tool.parse({"url": url})
    assert tool.parse({"url": " https://example.com/a "}).url == "https://example.com/a"


@pytest.mark.asyncio
async def test_same_host_redirects_are_followed_and_other_hosts_reported(site, tmp_path) -> None:
    moved = await fetch(tmp_path, f"{site.url}/moved")
    assert moved.outcome == "succeeded"
    assert moved.content.startswith(f"{site.url}/page: 200 OK")
    assert "(redirected from 1 earlier URL(s))" in moved.content.splitlines()[0]
    port = site.server_address[1]
    away = await fetch(tmp_path, f"{site.url}/elsewhere")
    assert away.content.splitlines() == [
        f"{site.url}/elsewhere redirects (302) to another host: http://localhost:{port}/page",
        "It was not followed. Fetch that URL with web_fetch if you need it.",
    ]
    assert site.paths.count("/page") == 1  # only through the same-host redirect
    loop = await fetch(tmp_path, f"{site.url}/loop")
    assert loop.outcome == "failed" and "more than 5 redirects" in loop.content


@pytest.mark.asyncio
async def test_binary_is_described_and_errors_fail_with_their_status(site, tmp_path) -> None:
    image = await fetch(tmp_path, f"{site.url}/image")
    assert image.content.splitlines()[-1] == "Binary content: not shown."
    missing = await fetch(tmp_path, f"{site.url}/missing")
    assert missing.outcome == "failed"
    assert missing.content.startswith(f"{site.url}/missing: 404 Not Found")
    assert "Not here" in missing.content


@pytest.mark.asyncio
async def test_the_time_cap_stops_a_slow_download(site, tmp_path) -> None:
    scope = CancelScope()
    tool = WebFetchTool(allow_private=True, timeout_s=0.4)
    result = await tool.run(tool.parse({"url": f"{site.url}/slow"}), ctx(tmp_path, scope))
    assert result.outcome == "failed"
    assert result.content.startswith(f"Fetching {site.url}/slow took longer than 0.4 s")
    assert not scope.cancelled  # the call's own cap: the turn goes on
    assert await asyncio.to_thread(site.disconnected.wait, 3)


@pytest.mark.asyncio
async def test_esc_mid_download_ends_the_turn_and_closes_the_connection(site, fake_api, tmp_path) -> None:
    fake_api.enqueue(Reply.tool_use("web_fetch", {"url": f"{site.url}/slow"}, id="toolu_web"))
    run = start_session(AnthropicProvider(api_key="k", base_url=fake_api.url),
                        [WebFetchTool(allow_private=True)], tmp_path)
    run.submit(UserMessage(text="read it"))
    await run.rec.wait_for(lambda: site.sent >= 300)  # the body is coming in
    run.submit(Interrupt())
    await run.rec.wait_type("turn_ended")
    assert site.sent < 60 * 1000  # the turn did not wait for the download (a minute)
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    final = run.rec.final_tool("web_fetch")
    assert final.state == "cancelled_while_running"
    assert "was interrupted" in final.result and "had arrived" in final.result
    assert await asyncio.to_thread(site.disconnected.wait, 3), "the server never saw the close"
    await run.close()


# -- permission per domain ---------------------------------------------------------------


def check(policy: Permissions, url: str):
    tool = WebFetchTool()
    return policy.check(tool, tool.parse({"url": url}))


def test_ask_mode_asks_per_domain_and_remembers_it_for_the_session(tmp_path) -> None:
    policy = Permissions(tmp_path, PermissionMode.ASK)
    first = check(policy, "https://docs.example.com/a")
    assert first.verdict is Verdict.ASK
    assert first.reason == "WebFetch fetches from docs.example.com"
    tool = WebFetchTool()
    policy.remember(tool, tool.parse({"url": "https://docs.example.com/a"}))
    assert [r.text for r in policy.session_rules] == ["WebFetch(domain:docs.example.com)"]
    assert check(policy, "https://DOCS.example.com/other?q=1").verdict is Verdict.ALLOW
    assert check(policy, "https://example.com/").verdict is Verdict.ASK


def test_settings_rules_allow_and_deny_domains_and_auto_allows(tmp_path) -> None:
    rules = PermissionRules(allow=["web_fetch(domain:*.python.org)", "web_fetch(domain:pypi.org)"],
                            deny=["web_fetch(domain:evil.example)"])
    policy = Permissions(tmp_path, PermissionMode.ASK, rules)
    assert check(policy, "https://docs.python.org/3/").verdict is Verdict.ALLOW
    assert check(policy, "https://pypi.org/project/x").verdict is Verdict.ALLOW
    assert check(policy, "https://python.org/").verdict is Verdict.ASK  # *. needs a subdomain
    assert check(policy, "https://evil.example/").verdict is Verdict.DENY
    auto = Permissions(tmp_path, PermissionMode.AUTO, rules)
    assert check(auto, "https://anything.example.net/").verdict is Verdict.ALLOW
    assert check(auto, "https://evil.example/").verdict is Verdict.DENY
    edits = Permissions(tmp_path, PermissionMode.ACCEPT_EDITS)
    assert check(edits, "https://example.com/").verdict is Verdict.ASK
    printing = Permissions(tmp_path, PermissionMode.ASK, non_interactive=True)
    assert check(printing, "https://example.com/").verdict is Verdict.DENY


def test_allow_private_comes_from_user_settings_only(tmp_path) -> None:
    user, project = tmp_path / "user", tmp_path / "ws"
    (project / ".agent-tui").mkdir(parents=True)
    user.mkdir()
    (project / ".agent-tui" / "settings.json").write_text(
        json.dumps({"webFetch": {"allowPrivate": True}}))
    loaded = load_settings(project, user_dir=user, trusted=True)
    assert loaded.web_fetch_allow_private is False
    assert any("webFetch.allowPrivate is only taken from your user settings" in p
               for p in loaded.problems)
    (user / "settings.json").write_text(json.dumps({"webFetch": {"allowPrivate": True}}))
    assert load_settings(project, user_dir=user, trusted=True).web_fetch_allow_private is True
    (user / "settings.json").write_text(json.dumps({"webFetch": {"allowPrivat": True}}))
    typo = load_settings(project, user_dir=user, trusted=True)
    assert any('did you mean "allowPrivate"' in p for p in typo.problems)
