"""The ``web_fetch`` tool: one web page, as Markdown, asked for per domain.

Not read-only for the permission policy: in ``ask`` mode each domain is asked for
(allow once, for the session, or always with a settings rule
``web_fetch(domain:example.com)``); ``auto`` allows it. It changes no file, so no
workspace snapshot is taken around it, and several calls may run at once. The fetch
runs under the call's cancel scope with a time cap (:mod:`.fetch` for the caps,
:mod:`.addresses` for which addresses are refused, :mod:`.convert` for the text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_tui.cancel import Cancelled, CancelReason
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult
from agent_tui.protocol.tool_names import ResultShown, RuleSubject
from agent_tui.tools.web.addresses import RefusedURL, check_url
from agent_tui.tools.web.convert import BodyKind, body_kind, decode, html_to_markdown
from agent_tui.units import format_bytes

if TYPE_CHECKING:
    from agent_tui.tools.web.fetch import Fetched, Progress

MAX_BYTES = 5 * 1024 * 1024  # downloaded, after decompression
MAX_CHARS = 50_000  # of text given to the model
TIMEOUT_S = 30.0  # the whole fetch, redirects included
MAX_REDIRECTS = 5
ERROR_BODY_CHARS = 2_000  # of an error page's text


class WebFetchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="The full http(s) URL, e.g. https://docs.python.org/3/library/re.html")
    prompt: str | None = Field(
        default=None,
        description="What you are looking for on the page (shown to the user with the call)",
    )

    @field_validator("url")
    @classmethod
    def _http_only(cls, value: str) -> str:
        try:
            check_url(value)
        except RefusedURL as exc:
            raise ValueError(str(exc)) from None
        return value.strip()


class WebFetchTool(Tool[WebFetchInput]):
    name = "web_fetch"
    claude_name = "WebFetch"
    plans = True
    prompt_title = "Fetch"
    acp_kind = "fetch"
    rule_subject = RuleSubject.DOMAIN
    result_shown = ResultShown.HEADLINE
    description = (
        "Fetch a web page (http or https) and get it back as Markdown: documentation, an "
        "issue, a changelog, an API reference. Use it when the answer is on a page you "
        "know the URL of; do not guess URLs. The user is asked once per domain unless they "
        "allowed it.\n"
        f"- Pages are cut at {MAX_CHARS:,} characters and downloads at "
        f"{format_bytes(MAX_BYTES)}; the result says when. Binary files (images, PDFs, "
        "archives) are described, not shown.\n"
        "- Redirects on the same host are followed; a redirect to another host is "
        "reported with its URL: fetch that URL in a new call if you still need it.\n"
        "- Local and private network addresses (localhost, 10.x, 192.168.x ...) are "
        "refused unless the user allowed them. Nothing is sent but a plain GET: no "
        "cookies, no credentials.\n"
        "- For files in the workspace use read_file; for a git repository, clone it with "
        "bash."
    )
    Input = WebFetchInput
    read_only = False  # the permission policy asks per domain
    reports_own_writes = True  # it writes no file: no workspace snapshot around it
    concurrent = True  # fetches are independent of each other

    def __init__(self, *, allow_private: bool = False, timeout_s: float = TIMEOUT_S,
                 max_bytes: int = MAX_BYTES) -> None:
        self.allow_private = allow_private
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes

    def summary(self, args: WebFetchInput) -> str:
        text = f"web_fetch {args.url}"
        return text + (f" ({args.prompt})" if args.prompt else "")

    def rewind_caveat(self, raw_input: dict[str, Any]) -> str | None:
        return None  # a GET changes nothing here; nothing to undo

    async def run(self, args: WebFetchInput, ctx: ToolContext) -> ToolResult:
        # httpx is loaded on the first fetch, not when the tool set is built
        from agent_tui.tools.web.fetch import FetchError, Progress, fetch

        progress = Progress(url=args.url)
        own = ctx.scope.child("web_fetch")  # the time cap must not cancel the turn
        own.cancel_after(self.timeout_s)
        try:
            async with own.linked():  # every await below is a cancel point
                fetched = await fetch(
                    args.url, allow_private=self.allow_private, max_bytes=self.max_bytes,
                    max_redirects=MAX_REDIRECTS, progress=progress,
                )
        except Cancelled as exc:
            return self._stopped(exc.reason, progress)
        except FetchError as exc:
            return ToolResult.error(str(exc))
        finally:
            own.detach()
        return self._result(fetched)

    def _stopped(self, reason: CancelReason, progress: Progress) -> ToolResult:
        got = f"{format_bytes(progress.received)} had arrived"
        if reason is CancelReason.TIMEOUT:
            return ToolResult.error(
                f"Fetching {progress.url} took longer than {self.timeout_s:g} s and was "
                f"stopped ({got}). Try again later, or another page."
            )
        return ToolResult(
            outcome=ToolState.CANCELLED_WHILE_RUNNING, is_error=True, ended_by=reason,
            side_effects=SideEffects.NONE,
            content=f"The fetch of {progress.url} was interrupted ({got}); nothing is shown.",
        )

    def _result(self, page: Fetched) -> ToolResult:
        details = {"url": page.url, "status": page.status, "content_type": page.content_type,
                   "bytes": len(page.body), "truncated": page.truncated}
        if page.other_host is not None:
            result = ToolResult.ok(
                f"{page.url} redirects ({page.status}) to another host: {page.other_host}\n"
                "It was not followed. Fetch that URL with web_fetch if you need it."
            )
            result.details = details
            return result
        kind = body_kind(page.content_type, page.body)
        size = format_bytes(len(page.body)) + (" (cut short)" if page.truncated else "")
        head = f"{page.url}: {page.status} {page.reason}, {page.content_type or 'no type'}, {size}"
        if page.redirects:
            head += f" (redirected from {len(page.redirects)} earlier URL(s))"
        if kind is BodyKind.BINARY:
            text = f"{head}\nBinary content: not shown."
        else:
            body = decode(page.body, page.charset)
            text = html_to_markdown(body, page.url) if kind is BodyKind.HTML else body
            text = f"{head}\n\n{_capped(text, page.truncated, self.max_bytes)}"
        if page.status >= 400:
            return ToolResult.error(_cut(text, ERROR_BODY_CHARS))
        result = ToolResult.ok(text)
        result.details = details
        return result


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _capped(text: str, truncated: bool, max_bytes: int) -> str:
    notes = []
    if truncated:
        notes.append(f"[The download stopped at {format_bytes(max_bytes)}: the page goes on.]")
    if len(text) > MAX_CHARS:
        notes.append(f"[Cut at {MAX_CHARS:,} of {len(text):,} characters.]")
        text = text[:MAX_CHARS]
    return "\n".join([text, *notes]) if notes else text
