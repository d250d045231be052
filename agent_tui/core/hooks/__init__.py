"""Where the core runs the user's hooks: tool calls, prompts, stops, the session's start and end."""
