"""The checks of an interrupt trial (``chaos_interrupts``) on its events, journal and
the requests the strict fake API received.

Every queued steer was applied or returned; each call that succeeded by itself kept
its real output, in its record and in the next request; every thinking block a
request sent is one the journal holds complete with its signature, and thinking cut
before its signature is in no request, in any form. ``esc_landed_after`` says where
the Esc came (after which kind of event), for the run's summary.
"""

from __future__ import annotations

from typing import Any

from agent_tui.core.history.history import THINKING_TYPES
from agent_tui.core.journal.records import AssistantMessageRecord, ToolResultRecord
from bench.chaos_requests import sent_results, text_of
from bench.host import Stamped


def esc_landed_after(events: Stamped, t_esc: float | None) -> str:
    """The kind of the last event before Esc (``thinking_delta``: mid-thinking)."""
    if t_esc is None:
        return ""
    before = [e.type for t, e in events.events if t <= t_esc]
    return before[-1] if before else "nothing"


def thinking_failures(records: list[Any], requests: list[Any]) -> list[str]:
    """Every thinking block sent is one the journal holds complete, with its signature;
    thinking cut before its signature is never sent, in any form."""
    kept = [b for r in records if isinstance(r, AssistantMessageRecord) for b in r.blocks
            if b.get("type") in THINKING_TYPES]
    cut = [b.get("thinking", "") for r in records if isinstance(r, AssistantMessageRecord)
           for b in r.incomplete_thinking]
    failures = []
    for n, request in enumerate(r for r in requests if r):
        for message in request.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") not in THINKING_TYPES:
                    continue
                if block.get("type") == "thinking" and not block.get("signature"):
                    failures.append(f"request {n} sends thinking without a signature")
                elif not any(_same(block, k) for k in kept):
                    failures.append(f"request {n} sends a thinking block the journal does "
                                    f"not hold complete: {str(block)[:120]}")
        said = str(request.get("messages"))
        failures += [f"request {n} sends thinking cut before its signature: {text[:60]!r}"
                     for text in cut if len(text) >= 12 and text in said]
    return failures


def _same(sent: dict, kept: dict) -> bool:
    keys = ("type", "thinking", "signature", "data")
    return all(sent.get(k) == kept.get(k) for k in keys)


def steer_failures(events: Stamped) -> list[str]:
    states: dict[str, list[str]] = {}
    for _, e in events.of("steer_state"):
        states.setdefault(e.id, []).append(str(e.state))
    return [f"steer {sid} was neither applied nor returned: {seq}"
            for sid, seq in states.items() if not ({"applied", "returned"} & set(seq))]


def result_failures(expect: dict[str, str], records: list[Any], request: dict) -> list[str]:
    """Each call that succeeded by itself: its real output (``expect``, by tool_use id)
    is in its record and reaches the model."""
    failures = []
    sent = sent_results(request)
    for record in records:
        if not isinstance(record, ToolResultRecord) or record.state != "succeeded":
            continue
        want = expect.get(record.tool_use_id)
        if want is None:
            continue
        if want not in record.content:
            failures.append(f"{record.name} {record.tool_use_id} succeeded without its output "
                            f"{want!r}: {record.content[:200]!r}")
        block = sent.get(record.tool_use_id)
        if block is None:
            failures.append(f"{record.tool_use_id} succeeded but its result is not in the "
                            "next request")
            continue
        text = text_of(block)
        if want not in text or block.get("is_error"):
            failures.append(f"{record.tool_use_id} succeeded but the model is told "
                            f"{text[:200]!r} (is_error={block.get('is_error')})")
    return failures
