"""A real MCP server (official SDK) for tests/test_mcp.py.

Usage: sdk_server.py RECORD_FILE [--http PORT | --sse PORT] [--hang-start] [--escapee MARKER]

Every tool appends JSON lines to RECORD_FILE: what it saw (request id, the caller's
``_meta``) and how it ended (done, cancelled, ignored the cancel).

``--escapee MARKER`` starts, before serving, a child that does all it can to outlive
the server: it clears its environment (``env -i``, so no tag), detaches at once
(``setsid -f``, a new session and a double fork), ignores SIGTERM and closes its
descriptors. Its argv[0] is ``MARKER-esc``.
"""

from __future__ import annotations

import json
import os
import sys
import time

if "--hang-start" in sys.argv:  # before the slow imports: say so at once, then never answer
    print("hanging at start", file=sys.stderr, flush=True)
    time.sleep(3600)

import base64

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

# A 1x1 PNG.
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

RECORD = sys.argv[1]
mcp = MCPServer("test-server")


def record(event: str, ctx: Context, **extra: object) -> None:
    meta = ctx.request_context.meta
    meta_dict = meta if isinstance(meta, dict) else (meta.model_dump() if meta is not None else None)
    line = {"event": event, "request_id": ctx.request_id, "meta": meta_dict, "pid": os.getpid(), **extra}
    with open(RECORD, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, default=str) + "\n")


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def echo(text: str, ctx: Context) -> str:
    """Return the text."""
    record("echo", ctx, text=text)
    return f"echo: {text}"


@mcp.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Sleep, observing cancellation."""
    record("start", ctx)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        record("cancelled", ctx)
        raise
    record("done", ctx)
    return f"slept {seconds}"


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def peek(seconds: float, ctx: Context) -> str:
    """Look at something slowly (read-only), observing cancellation."""
    record("start", ctx)
    await anyio.sleep(seconds)
    return f"peeked {seconds}"


@mcp.tool()
async def stubborn(seconds: float, ctx: Context) -> str:
    """Sleep and ignore cancellation (blocks in a thread)."""
    record("start", ctx)
    await anyio.to_thread.run_sync(time.sleep, seconds, abandon_on_cancel=False)
    record("done", ctx)
    return f"stubborn slept {seconds}"


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def picture(ctx: Context) -> list:
    """An image, an embedded text resource and an embedded binary one."""
    record("picture", ctx)
    return [
        TextContent(type="text", text="a picture:"),
        ImageContent(type="image", data=PIXEL, mime_type="image/png"),
        EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="file:///notes.txt", mime_type="text/plain", text="embedded notes")),
        EmbeddedResource(type="resource", resource=BlobResourceContents(
            uri="file:///data.bin", mime_type="application/octet-stream",
            blob=base64.b64encode(bytes(300)).decode())),
    ]


@mcp.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Offer one more tool from now on, and tell the client (tools/list_changed)."""

    async def extra(text: str) -> str:
        return f"{name}: {text}"

    mcp.add_tool(extra, name=name, description="a tool added at run time")
    await ctx.request_context.session.send_tool_list_changed()
    return f"added {name}"


@mcp.tool()
async def crash(ctx: Context) -> str:
    """Exit the whole server mid-call."""
    record("start", ctx)
    await anyio.sleep(0.1)
    print("crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


async def header(name: str, ctx: Context) -> str:
    """The value of one HTTP header of the request (offered over SSE only)."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    return f"{name}: {headers.get(name) if headers is not None else None}"


def start_escapee(marker: str) -> None:
    import subprocess

    inner = f"trap '' TERM; exec 0<&- 1>&- 2>&-; exec -a {marker}-esc sleep 1000"
    subprocess.run(["env", "-i", "/usr/bin/setsid", "-f", "/bin/bash", "-c", inner],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)


if __name__ == "__main__":
    if "--escapee" in sys.argv:
        start_escapee(sys.argv[sys.argv.index("--escapee") + 1])
    if "--sse" in sys.argv:
        mcp.add_tool(header, annotations=ToolAnnotations(readOnlyHint=True))
        port = int(sys.argv[sys.argv.index("--sse") + 1])
        mcp.run("sse", host="127.0.0.1", port=port)
    elif "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        mcp.run("streamable-http", host="127.0.0.1", port=port)
    else:
        mcp.run()
