"""One web page fetched with httpx, within its caps.

- The body is read up to ``max_bytes`` (after decompression); past that the
  connection is closed and the body marked cut short.
- Redirects on the same host are followed, at most ``max_redirects``, each hop checked
  like the first (:mod:`.addresses`). A redirect to another host is not followed:
  the result names it, and fetching it is a new call with its own permission.
- Every await may be interrupted: the caller runs this under its cancel scope
  (``scope.linked()``), and leaving the stream's block closes the connection.
- No proxy from the environment is used: the address checks must see the address
  that is connected to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urljoin

import httpx2

from agent_tui.permissions.policy import url_host
from agent_tui.tools.web.addresses import RefusedURL, check_url, resolve

REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "agent-tui/0.1 (web_fetch)"
ACCEPT = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.5"


@dataclass
class Progress:
    """What has arrived so far (read by the caller when it is interrupted)."""

    url: str
    received: int = 0


@dataclass
class Fetched:
    url: str  # the URL finally fetched
    status: int
    reason: str
    content_type: str
    charset: str | None
    body: bytes
    truncated: bool  # the body passed max_bytes and was cut there
    redirects: list[str] = field(default_factory=list)  # the URLs redirected to, in order
    other_host: str | None = None  # a redirect to another host, not followed


class FetchError(Exception):
    """The fetch failed (refused URL, connection, too many redirects); worded for the model."""


def _same_host(a: str, b: str) -> bool:
    def strip(host: str) -> str:
        return host[4:] if host.startswith("www.") else host

    return strip(a) == strip(b)


async def fetch(
    url: str,
    *,
    allow_private: bool,
    max_bytes: int,
    max_redirects: int,
    progress: Progress,
    connect_timeout_s: float = 10.0,
    read_timeout_s: float = 30.0,
) -> Fetched:
    first_host = url_host(url) or ""
    current = url.strip()
    redirects: list[str] = []
    timeout = httpx2.Timeout(read_timeout_s, connect=connect_timeout_s)
    async with httpx2.AsyncClient(
        trust_env=False, follow_redirects=False, timeout=timeout,
        headers={"User-Agent": USER_AGENT, "Accept": ACCEPT},
    ) as client:
        while True:
            progress.url = current
            try:
                target = await resolve(current, allow_private=allow_private)
            except RefusedURL as exc:
                raise FetchError(str(exc)) from None
            request_url = httpx2.URL(current)
            extensions = {"sni_hostname": request_url.raw_host.decode("ascii")}
            pinned = request_url.copy_with(host=target.address)
            headers = {"Host": request_url.netloc.decode("ascii")}
            try:
                async with client.stream(
                    "GET", pinned, headers=headers, extensions=extensions
                ) as response:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECT_CODES and location:
                        nxt = urljoin(current, location)
                        try:
                            check_url(nxt)
                        except RefusedURL as exc:
                            raise FetchError(f"{current} redirects to a URL that is refused: {exc}") from None
                        redirects.append(nxt)
                        if not _same_host(url_host(nxt) or "", first_host):
                            return _ended(response, current, b"", False, redirects, other_host=nxt)
                        if len(redirects) > max_redirects:
                            raise FetchError(f"more than {max_redirects} redirects, last to {nxt}")
                        current = nxt
                        continue
                    body, truncated = await _read(response, max_bytes, progress)
                    return _ended(response, current, body, truncated, redirects)
            except httpx2.HTTPError as exc:
                raise FetchError(f"fetching {current} failed: {_why(exc)}") from None


async def _read(response: httpx2.Response, max_bytes: int, progress: Progress) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    async for chunk in response.aiter_bytes():
        room = max_bytes - progress.received
        if len(chunk) > room:
            chunks.append(chunk[:room])
            progress.received = max_bytes
            return b"".join(chunks), True  # leaving the stream's block closes the connection
        chunks.append(chunk)
        progress.received += len(chunk)
    return b"".join(chunks), False


def _ended(
    response: httpx2.Response, url: str, body: bytes, truncated: bool, redirects: list[str],
    other_host: str | None = None,
) -> Fetched:
    content_type = response.headers.get("content-type", "")
    return Fetched(
        url=url, status=response.status_code, reason=response.reason_phrase,
        content_type=content_type.split(";", 1)[0].strip().lower(),
        charset=response.charset_encoding, body=body, truncated=truncated,
        redirects=redirects, other_host=other_host,
    )


def _why(exc: httpx2.HTTPError) -> str:
    if isinstance(exc, httpx2.TimeoutException):
        return "no answer in time"
    return str(exc) or type(exc).__name__
