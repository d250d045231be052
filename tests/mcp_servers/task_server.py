"""A hand-written MCP server over stdio that runs tool calls as MCP tasks (protocol
2025-11-25's tasks utility), which the SDK's server does not offer.

Usage: task_server.py RECORD MODE POLL_MS
  tasks    declares tasks.requests.tools.call (and tasks.cancel)
  nocap    declares no tasks capability
  deaf     like tasks, but never answers tasks/cancel
  notify   like tasks, and sends notifications/tasks/status at each change
  late     like tasks, but a task asked to cancel finishes first (tasks/cancel: -32602)
  slow     like tasks, but the task is created 0.4 s after the call arrives (recorded
           as "creating"), whatever cancel notice comes meanwhile
  forget   like tasks, but a task's status message holds an escape sequence, and
           tasks/get answers that there is no such task

Tools: ``research`` (taskSupport required), ``either`` (optional), ``plain`` (none);
each works for ``seconds`` and answers "worked S s". A plain call of ``research`` is
answered -32601, as the spec says. Every message it gets is recorded in RECORD as a
JSON line with an ``event`` (the method) and the monotonic time ``t``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any

RECORD, MODE, POLL_MS = sys.argv[1], sys.argv[2], int(sys.argv[3])
SCHEMA = {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}
TOOLS = [
    {"name": "research", "description": "Researches.", "inputSchema": SCHEMA,
     "execution": {"taskSupport": "required"}},
    {"name": "either", "description": "Works either way.", "inputSchema": SCHEMA,
     "execution": {"taskSupport": "optional"}},
    {"name": "plain", "description": "Works plainly.", "inputSchema": SCHEMA},
]
TERMINAL = {"completed", "failed", "cancelled"}
lock = threading.Lock()
tasks: dict[str, dict[str, Any]] = {}
done: dict[str, threading.Event] = {}


def now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def send(obj: dict[str, Any]) -> None:
    with lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def record(event: str, **fields: Any) -> None:
    with lock, open(RECORD, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"event": event, "t": time.monotonic(), **fields}) + "\n")


def answer(msg_id: Any, result: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def error(msg_id: Any, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def outcome(seconds: float) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"worked {seconds:g} s"}], "isError": False}


def move(task_id: str, status: str, message: str) -> None:
    """A task's new status (never out of a terminal one), told when MODE is notify."""
    with lock:
        task = tasks[task_id]
        if task["status"] in TERMINAL:
            return
        task.update(status=status, statusMessage=message, lastUpdatedAt=now())
        view = dict(task)
    if status in TERMINAL:
        done[task_id].set()
    if MODE == "notify":
        send({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": view})


def work(task_id: str, seconds: float) -> None:
    record("start", task=task_id)
    time.sleep(seconds / 2)
    move(task_id, "working", "half way")
    time.sleep(seconds / 2)
    move(task_id, "completed", "done")


def give_result(msg_id: Any, task_id: str) -> None:
    done[task_id].wait()
    with lock:
        task = dict(tasks[task_id])
    record("tasks/result", task=task_id, status=task["status"])
    if task["status"] == "cancelled":
        error(msg_id, -32800, "the task was cancelled")
    else:
        answer(msg_id, {**outcome(task["seconds"]),
                        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": task_id}}})


def call(msg: dict[str, Any]) -> None:
    params = msg["params"]
    name, seconds = params["name"], float(params.get("arguments", {}).get("seconds", 0))
    as_task = "task" in params and MODE != "nocap"
    record("tools/call", name=name, task=params.get("task"))
    if name == "research" and not as_task:
        error(msg["id"], -32601, "research runs only as a task")
        return
    if not as_task:
        record("start")
        time.sleep(seconds)
        answer(msg["id"], outcome(seconds))
        return
    if MODE == "slow":
        record("creating")
        time.sleep(0.4)
    task_id = f"task-{len(tasks) + 1}"
    stamp = now()
    said = "started\x1b[2J" if MODE == "forget" else "started"
    task = {"taskId": task_id, "status": "working", "statusMessage": said, "createdAt": stamp,
            "lastUpdatedAt": stamp, "ttl": params["task"].get("ttl"), "pollInterval": POLL_MS,
            "seconds": seconds}
    with lock:
        tasks[task_id] = task
        done[task_id] = threading.Event()
    answer(msg["id"], {"task": {k: v for k, v in task.items() if k != "seconds"}})
    threading.Thread(target=work, args=(task_id, seconds), daemon=True).start()


def cancel(msg: dict[str, Any]) -> None:
    task_id = msg["params"]["taskId"]
    record("tasks/cancel", task=task_id)
    if MODE == "deaf":
        return
    if MODE == "late" and task_id in tasks:
        move(task_id, "completed", "finished before the cancel")
    if task_id not in tasks:
        error(msg["id"], -32602, "no such task")
        return
    if tasks[task_id]["status"] in TERMINAL:
        error(msg["id"], -32602, f"task {task_id} has already ended")
        return
    move(task_id, "cancelled", "cancelled at the client's request")
    answer(msg["id"], {k: v for k, v in tasks[task_id].items() if k != "seconds"})


capabilities: dict[str, Any] = {"tools": {}}
if MODE != "nocap":
    capabilities["tasks"] = {"cancel": {}, "requests": {"tools": {"call": {}}}}

for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        answer(msg["id"], {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": capabilities,
                           "serverInfo": {"name": "tasks", "version": "0"}})
    elif method == "tools/list":
        answer(msg["id"], {"tools": TOOLS})
    elif method == "tools/call":
        threading.Thread(target=call, args=(msg,), daemon=True).start()
    elif method == "tasks/get":
        task_id = msg["params"]["taskId"]
        record("tasks/get", task=task_id)
        if task_id in tasks and MODE != "forget":
            answer(msg["id"], {k: v for k, v in tasks[task_id].items() if k != "seconds"})
        else:
            error(msg["id"], -32602, "no such task")
    elif method == "tasks/result":
        threading.Thread(target=give_result, args=(msg["id"], msg["params"]["taskId"]), daemon=True).start()
    elif method == "tasks/cancel":
        cancel(msg)
    elif method is not None:
        record(method)
        if "id" in msg:
            answer(msg["id"], {})
