"""OAuth for HTTP MCP servers, the parts below the SDK's provider: what a login
keeps, and where a client's own credentials may be sent."""
