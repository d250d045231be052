#!/bin/bash
# The team's command log: every command the agent runs, one a line.
jq -r '.tool_input.command' >> "$CLAUDE_PROJECT_DIR/.claude/command-log.txt"
