"""An MCP server (official SDK, stdio) with resources and prompts that can change.

Usage: catalog_server.py

- resources ``notes://today`` (text), ``notes://pixel`` (a PNG) and ``notes://data``
  (binary, not an image);
- prompts ``review`` (arguments ``file``, required, and ``focus``, optional) and
  ``hello`` (none);
- the tool ``change`` adds the resource ``notes://later`` and the prompt ``later``,
  removes the prompt ``hello``, and says both lists changed.
"""

from __future__ import annotations

import base64

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources.types import TextResource

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

mcp = MCPServer("catalog-server")


@mcp.resource("notes://today", name="today", description="today's notes", mime_type="text/plain")
def today() -> str:
    return "buy milk\ncall Ada"


@mcp.resource("notes://pixel", name="pixel", mime_type="image/png")
def pixel() -> bytes:
    return PIXEL


@mcp.resource("notes://data", name="data", mime_type="application/octet-stream")
def data() -> bytes:
    return bytes(300)


@mcp.prompt(description="review one file")
def review(file: str, focus: str = "everything") -> str:
    return f"Please review {file}, looking at {focus}."


@mcp.prompt(description="say hello")
def hello() -> str:
    return "Hello there."


@mcp.tool()
async def change(ctx: Context) -> str:
    """Add a resource and a prompt, remove the prompt hello, and tell the client."""
    mcp.add_resource(TextResource(uri="notes://later", name="later", text="added later"))

    def later() -> str:
        return "a prompt added later"

    mcp.add_prompt(Prompt.from_function(later, name="later", description="added at run time"))
    mcp.remove_prompt("hello")
    session = ctx.request_context.session
    await session.send_resource_list_changed()
    await session.send_prompt_list_changed()
    return "changed"


if __name__ == "__main__":
    mcp.run()
