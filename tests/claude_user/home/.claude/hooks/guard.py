#!/usr/bin/env python3
"""PreToolUse guard: no `rm -rf`, no `.env` files. Every call it sees is logged."""
import json
import os
import sys
from pathlib import Path

call = json.load(sys.stdin)
log = Path.home() / ".claude" / "guard-log.jsonl"
with log.open("a") as out:
    out.write(json.dumps({**call, "CLAUDE_PROJECT_DIR": os.environ.get("CLAUDE_PROJECT_DIR")}) + "\n")

tool, given = call.get("tool_name"), call.get("tool_input", {})
if tool == "Bash" and "rm -rf" in given.get("command", ""):
    print("Blocked by guard.py: rm -rf is not allowed; remove files one by one.", file=sys.stderr)
    sys.exit(2)
if tool in ("Read", "Edit", "Write") and os.path.basename(given.get("file_path", "")) == ".env":
    print(f"Blocked by guard.py: {given['file_path']} holds secrets; ask the user.", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
