"""Which URLs ``web_fetch`` may open, and which address it connects to.

Only ``http`` and ``https``. The host is resolved here, every address it resolves to
is checked, and the connection goes to the address that was checked (the request
names the host in its ``Host`` header and TLS name), so a name that resolves to a
public address when checked cannot lead to a private one when connected (DNS
rebinding). Loopback, private, link-local, shared, reserved and multicast addresses
are refused unless the user allowed them (settings ``webFetch.allowPrivate``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from agent_tui.permissions.policy import url_host


class RefusedURL(ValueError):
    """A URL web_fetch will not open; the message says why, for the model."""


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str  # lower case, no brackets
    port: int
    address: str  # the checked address to connect to


def check_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL; :class:`RefusedURL` otherwise."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise RefusedURL(f"{url!r} is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise RefusedURL(f"only http and https URLs can be fetched, not {scheme or 'this'}: {url}")
    host = url_host(url)
    if not host:
        raise RefusedURL(f"{url} names no host")
    if parts.username or parts.password:
        raise RefusedURL("URLs with a user name or password are not fetched")
    return scheme, host, port or (443 if scheme == "https" else 80)


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


async def resolve(url: str, *, allow_private: bool) -> Target:
    """The address to connect to for ``url``, checked; :class:`RefusedURL` if refused."""
    scheme, host, port = check_url(url)
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise RefusedURL(f"cannot resolve {host}: {exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise RefusedURL(f"cannot resolve {host}: no address")
    if not allow_private:
        private = [a for a in addresses if not _public(a)]
        if private:
            raise RefusedURL(
                f"{host} resolves to {', '.join(private)}, a loopback or private address: "
                "refused (the user can allow such addresses with the setting "
                '"webFetch": {"allowPrivate": true})'
            )
    return Target(url=url.strip(), scheme=scheme, host=host, port=port, address=addresses[0])
