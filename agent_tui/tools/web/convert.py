"""A fetched body as text for the model: HTML to Markdown, text as it is.

HTML goes through BeautifulSoup (the standard library's parser) and ``markdownify``:
scripts, styles and other things a reader never sees are dropped first, links and
images are made absolute (so the model can fetch them in turn), and the page's title
leads. Text types (plain, Markdown, JSON, XML, CSS, JavaScript) are decoded as they
are. Anything else is binary: described, never shown.
"""

from __future__ import annotations

import re
from enum import StrEnum
from urllib.parse import urljoin

_INVISIBLE = ("script", "style", "noscript", "template", "svg", "iframe", "object", "embed",
              "head")
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript",
               "application/x-javascript", "application/ecmascript", "application/toml",
               "application/yaml", "application/x-yaml", "application/x-sh")


class BodyKind(StrEnum):
    HTML = "html"
    TEXT = "text"
    BINARY = "binary"


def body_kind(content_type: str, head: bytes) -> BodyKind:
    """What a body is, by its declared type (or, without one, by its first bytes)."""
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime in ("text/html", "application/xhtml+xml"):
        return BodyKind.HTML
    if mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith(("+json", "+xml")):
        return BodyKind.TEXT
    if mime and mime != "application/octet-stream":
        return BodyKind.BINARY
    if b"\0" in head[:4096]:
        return BodyKind.BINARY
    start = head[:1024].lstrip().lower()
    return BodyKind.HTML if start.startswith((b"<!doctype html", b"<html")) else BodyKind.TEXT


def decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def html_to_markdown(html: str, base_url: str) -> str:
    # Imported here: BeautifulSoup and markdownify are only needed once a page came.
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(_INVISIBLE):
        tag.decompose()
    for name, attr in (("a", "href"), ("img", "src")):
        for node in soup.find_all(name):
            value = node.get(attr)
            if isinstance(value, str) and not value.startswith(("#", "data:", "javascript:")):
                node[attr] = urljoin(base_url, value)
    text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return f"# {title}\n\n{text}" if title and not text.startswith(f"# {title}") else text
