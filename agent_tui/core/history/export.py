"""The conversation as Markdown (``/export``): what was said, and each tool call folded.

Built from the journal's records as the conversation stands (after a rewind of the
conversation, what it cut is left out, as in the transcript of a resumed session):
the user's messages and steers, the model's text, each tool call as a folded
``<details>`` block (what it was asked, how it ended, what it returned), thinking
folded too, the user's ``!`` commands with their output, and turns that did not
complete. Code fences are longer than any run of backticks inside them, so nothing
in a call's output can close them.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from typing import Any

from agent_tui.core.history.history import effective_records
from agent_tui.core.journal.records import (
    AssistantMessageRecord,
    SessionStarted,
    SteerRecord,
    ToolResultRecord,
    TurnEndedRecord,
    UserCommandRecord,
    UserMessageRecord,
)
from agent_tui.protocol import SteerDelivery, SteerStatus, TurnStatus

_TICKS = re.compile(r"`+")


def fenced(text: str, lang: str = "") -> str:
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"


def _folded(summary: str, body: str) -> str:
    return f"<details><summary>{_escape(summary)}</summary>\n\n{body}\n\n</details>"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _call_summary(name: str, args: dict[str, Any]) -> str:
    for key in ("command", "path", "file_path", "pattern", "url", "description"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            first = value.strip().splitlines()[0]
            return f"{name}: {first[:120]}"
    return name


def conversation_markdown(records: Iterable[Any], *, session_id: str = "",
                          now: float | None = None) -> str:
    """The Markdown of the conversation ``records`` hold."""
    records = list(records)
    workspace = next((r.workspace for r in records if isinstance(r, SessionStarted)), "")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(time.time() if now is None else now))
    parts = [f"# Conversation {session_id}".rstrip(),
             f"Workspace: `{workspace}` · exported {when}" if workspace else f"Exported {when}"]
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for record in effective_records(records):
        if isinstance(record, UserMessageRecord):
            images = "".join(f"\n\n*(image: {image.label})*" for image in record.images)
            parts.append(f"## You\n\n{record.text}{images}")
        elif (isinstance(record, SteerRecord) and record.state is SteerStatus.APPLIED
              and record.delivery is SteerDelivery.INJECTED):
            parts.append(f"## You (while it worked)\n\n{record.text}")
        elif isinstance(record, AssistantMessageRecord):
            parts += _assistant(record, calls)
        elif isinstance(record, ToolResultRecord):
            name, args = calls.get(record.tool_use_id, (record.name, {}))
            ending = str(record.state).replace("_", " ")
            facts = [f for f in (record.signal, f"exit {record.exit_code}"
                                 if record.exit_code is not None else "") if f]
            summary = f"{_call_summary(name, args)} ({ending}{', ' + ', '.join(facts) if facts else ''})"
            body = [fenced(json.dumps(args, indent=2, ensure_ascii=False), "json")] if args else []
            body.append(fenced(record.content or "(no output)"))
            parts.append(_folded(summary, "\n\n".join(body)))
        elif isinstance(record, UserCommandRecord):
            ended = f" ({record.ended})" if record.ended else ""
            parts.append(f"## You ran\n\n{fenced(record.command, 'sh')}\n\n"
                         + _folded(f"output{ended}", fenced(record.output or "(no output)")))
        elif isinstance(record, TurnEndedRecord) and record.status is not TurnStatus.COMPLETED:
            detail = f": {record.detail}" if record.detail else ""
            parts.append(f"*(the turn {record.status}{detail})*")
    return "\n\n".join(parts) + "\n"


def _assistant(record: AssistantMessageRecord, calls: dict[str, tuple[str, dict[str, Any]]]) -> list[str]:
    out: list[str] = []
    text = []
    for block in record.blocks:
        kind = block.get("type")
        if kind == "text" and str(block.get("text", "")).strip():
            text.append(str(block["text"]))
        elif kind == "thinking" and str(block.get("thinking", "")).strip():
            out.append(_folded("thinking", str(block["thinking"])))
        elif kind == "tool_use":
            calls[str(block.get("id"))] = (str(block.get("name", "?")), block.get("input") or {})
    if text:
        out.insert(0, "## Assistant\n\n" + "\n\n".join(text))
    return out


def final_answer(records: Iterable[Any]) -> str:
    """The text of the last answer that had some."""
    for record in reversed(list(records)):
        if isinstance(record, AssistantMessageRecord):
            texts = [b["text"] for b in record.blocks
                     if b.get("type") == "text" and b["text"].strip()]
            if texts:
                return "\n".join(texts)
    return ""
