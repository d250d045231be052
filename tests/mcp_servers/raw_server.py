"""A minimal hand-written MCP server over stdio, for answers the SDK never sends.

Usage: raw_server.py MODE
  malformed   tools/call is answered with a result that is not a CallToolResult
  late        a call waits; on notifications/cancelled it answers with a real result
  confirm     a call waits; on notifications/cancelled it answers with error -32800
  tasks       also lists a tool that can only run as an MCP task (taskSupport: required)
"""

from __future__ import annotations

import json
import sys

MODE = sys.argv[1]
TOOL = {
    "name": "work",
    "description": "Does work.",
    "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
}


def send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


pending: object = None
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "0"},
        }})
    elif method == "tools/list":
        tools = [TOOL]
        if MODE == "tasks":
            tools.append({**TOOL, "name": "research", "execution": {"taskSupport": "required"}})
            tools.append({**TOOL, "name": "either", "execution": {"taskSupport": "optional"}})
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": tools}})
    elif method == "tools/call":
        if MODE == "malformed":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": "not a list"}})
        else:
            pending = msg["id"]
    elif method == "notifications/cancelled" and pending is not None:
        if msg["params"].get("requestId") == pending:
            if MODE == "late":
                send({"jsonrpc": "2.0", "id": pending, "result": {
                    "content": [{"type": "text", "text": "finished anyway"}], "isError": False}})
            elif MODE == "confirm":
                send({"jsonrpc": "2.0", "id": pending,
                      "error": {"code": -32800, "message": "Request cancelled"}})
            pending = None
    elif "id" in msg and method is not None:
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
