"""The conversation as Markdown (``/export``): what was said, and each tool call folded.

Built from the conversation's items (``items.py``: after a rewind of the
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
from typing import Any, assert_never

from agent_tui.core.history.items import (
    BackgroundResult,
    CallStarted,
    Compaction,
    HookContext,
    MemoryNote,
    ModeChanged,
    Reply,
    Rewind,
    Steer,
    Text,
    Thinking,
    ToolCall,
    ToolUse,
    TurnEnded,
    UnfinishedCall,
    UserCommand,
    UserTurn,
    conversation,
)
from agent_tui.protocol import TurnStatus

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
    past = conversation(records)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(time.time() if now is None else now))
    parts = [f"# Conversation {session_id}".rstrip(),
             f"Workspace: `{past.workspace}` · exported {when}" if past.workspace
             else f"Exported {when}"]
    for item in past.items:
        match item:
            case UserTurn():
                images = "".join(f"\n\n*(image: {image.label})*" for image in item.images)
                parts.append(f"## You\n\n{item.text}{images}")
            case Steer():
                parts.append(f"## You (while it worked)\n\n{item.text}")
            case Reply():
                parts += _reply(item)
            case ToolCall():
                parts.append(_tool_call(item))
            case UserCommand():
                ended = f" ({item.ended})" if item.ended else ""
                parts.append(f"## You ran\n\n{fenced(item.command, 'sh')}\n\n"
                             + _folded(f"output{ended}", fenced(item.output or "(no output)")))
            case TurnEnded():
                if item.status is not TurnStatus.COMPLETED:
                    detail = f": {item.detail}" if item.detail else ""
                    parts.append(f"*(the turn {item.status}{detail})*")
            case (UnfinishedCall() | BackgroundResult() | Rewind() | Compaction() | CallStarted()
                  | ModeChanged() | MemoryNote() | HookContext()):
                pass  # not part of the exported conversation
            case _:
                assert_never(item)
    return "\n\n".join(parts) + "\n"


def _tool_call(item: ToolCall) -> str:
    record = item.result
    ending = str(record.state).replace("_", " ")
    facts = [f for f in (record.signal, f"exit {record.exit_code}"
                         if record.exit_code is not None else "") if f]
    summary = f"{_call_summary(item.name, item.input)} ({ending}{', ' + ', '.join(facts) if facts else ''})"
    body = [fenced(json.dumps(item.input, indent=2, ensure_ascii=False), "json")] if item.input else []
    body.append(fenced(record.content or "(no output)"))
    return _folded(summary, "\n\n".join(body))


def _reply(item: Reply) -> list[str]:
    out: list[str] = []
    for part in item.parts:
        match part:
            case Thinking():
                out.append(_folded("thinking", part.text))
            case Text() | ToolUse():
                pass  # the text comes first, as one section; a call, when it ends
            case _:
                assert_never(part)
    if item.texts:
        out.insert(0, "## Assistant\n\n" + "\n\n".join(item.texts))
    return out


def final_answer(records: Iterable[Any]) -> str:
    """The text of the last answer that had some."""
    for item in reversed(conversation(records).items):
        if isinstance(item, Reply) and item.texts:
            return "\n".join(item.texts)
    return ""
