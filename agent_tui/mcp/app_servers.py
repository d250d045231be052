"""MCP servers that live in the app driving agent-tui (the Agent SDK's in-process
servers, ``"type": "sdk"``): no process, no HTTP; each JSON-RPC message goes through
the app's own channel (``sdk_protocol``'s ``mcp_message``), registered here by name.

:func:`app_streams` gives the MCP client the same pair of streams a stdio server's
transport gives: each message the client writes is handed to the link on its own task
(a slow ``tools/call`` does not hold up its ``notifications/cancelled``), and the
link's answer to a request comes back on the read stream. A link that fails answers
the request with a JSON-RPC error; a server nobody registered does not connect.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

#: Sends one JSON-RPC message to the app's server; its answer (None for a notification).
Link = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
_links: dict[str, Link] = {}


def register(name: str, link: Link) -> None:
    _links[name] = link


@asynccontextmanager
async def app_streams(name: str) -> AsyncIterator[tuple[Any, Any]]:
    link = _links.get(name)
    if link is None:
        raise ConnectionError(f"no app serves the MCP server {name!r} (\"type\": \"sdk\" is for "
                              "an Agent SDK app's own servers)")
    to_client, read = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write, from_client = anyio.create_memory_object_stream[SessionMessage](16)

    async def deliver(message: dict[str, Any]) -> None:
        try:
            answer = await link(message)
        except Exception as exc:
            answer = {"jsonrpc": "2.0", "id": message.get("id"),
                      "error": {"code": -32603, "message": str(exc) or type(exc).__name__}}
        if "id" not in message or "method" not in message or not isinstance(answer, dict):
            return  # a notification (or a response): nothing comes back
        try:
            await to_client.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(
                {**answer, "id": message["id"]})))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the client has gone

    async def pump() -> None:
        async with from_client, anyio.create_task_group() as group:
            async for sent in from_client:
                group.start_soon(deliver, sent.message.model_dump(
                    by_alias=True, mode="json", exclude_unset=True))

    async with anyio.create_task_group() as group:
        group.start_soon(pump)
        try:
            yield read, write
        finally:
            group.cancel_scope.cancel()
            to_client.close()
            write.close()
