"""A stdio MCP server (official SDK) whose tools ask the user something (elicitation).

Usage: elicit_server.py RECORD_FILE

``signup`` asks a form (name, required; age, a whole number; colour, a choice) and
``open_page`` asks to open a URL. Each appends to RECORD_FILE what it asked
(``asked``) and what came back (``answered``: the action and the content), and returns
the same as text.
"""

from __future__ import annotations

import json
import sys
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

RECORD = sys.argv[1]
mcp = MCPServer("elicit-server")


class Signup(BaseModel):
    name: str = Field(description="Your name")
    age: int | None = Field(default=None, description="Your age", ge=0, le=150)
    colour: Literal["red", "green", "blue"] = Field(default="green", description="A colour")


def record(event: str, **extra: object) -> None:
    with open(RECORD, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"event": event, **extra}, default=str) + "\n")


@mcp.tool()
async def signup(ctx: Context) -> str:
    """Ask the user for a name, an age and a colour."""
    record("asked", mode="form")
    try:
        result = await ctx.elicit("Tell us about you", Signup)
    except BaseException as exc:  # the client cancelled the call under it
        record("ended", error=type(exc).__name__)
        raise
    data = result.data.model_dump() if result.action == "accept" and result.data is not None else None
    record("answered", action=result.action, content=data)
    return json.dumps({"action": result.action, "content": data})


@mcp.tool()
async def open_page(ctx: Context) -> str:
    """Ask the user to open a page."""
    record("asked", mode="url")
    result = await ctx.elicit_url("Log in to the widget shop", "https://example.com/login?x=1", "el-1")
    record("answered", action=result.action)
    return json.dumps({"action": result.action})


if __name__ == "__main__":
    mcp.run()
