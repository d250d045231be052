"""What the user types and points at: the keys, the menus at the cursor, the
files and MCP resources a message mentions, and the draft in the user's editor."""
