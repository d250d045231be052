"""The kit's MCP server (stdio): one tool, ``shout``."""

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("kit-echo")


@mcp.tool()
def shout(text: str) -> str:
    """Says the text back, louder."""
    return f"kit says {text.upper()}"


if __name__ == "__main__":
    mcp.run()
