"""What MCP servers offer, as the tools and the front ends read it alike: a server's
state and status, its prompts as commands and resources as mentions, how a failure
is worded, the browser a login opens, and the port a front end reaches the session's
servers through (the servers themselves run in :mod:`agent_tui.mcp`).

Light on purpose: no MCP SDK at import (a session with no server, and the TUI's first
frame, never load it).
"""
