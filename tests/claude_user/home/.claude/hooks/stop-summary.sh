#!/bin/bash
# Stop hook: note how long the conversation was and what was said last.
input=$(cat)
transcript=$(printf '%s' "$input" | jq -r '.transcript_path')
[ -f "$transcript" ] || { echo "no transcript at $transcript" >&2; exit 1; }
users=$(jq -s '[.[] | select(.type == "user")] | length' "$transcript")
last=$(jq -rs '[.[] | select(.type == "assistant") | .message.content[]? | select(.type == "text") | .text] | last' "$transcript")
printf 'user entries: %s\nlast words: %s\n' "$users" "$last" > "$HOME/.claude/last-session.txt"
exit 0
