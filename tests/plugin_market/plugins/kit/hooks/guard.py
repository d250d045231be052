"""The kit's PreToolUse hook: a command with "rm " in it is blocked (exit 2)."""

import json
import sys

call = json.load(sys.stdin)
if "rm " in call.get("tool_input", {}).get("command", ""):
    print("kit guard: rm is not allowed", file=sys.stderr)
    sys.exit(2)
