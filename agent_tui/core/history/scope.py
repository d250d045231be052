"""Which records the conversation is read from: rewinds applied, and for the model
view, ``/clear`` and the newest compaction too.

A rewind of the conversation cuts back to just before its checkpoint's user message;
the journal keeps what it cut (a branch). The model view starts after the last
``/clear`` and reads the newest compaction's summary in place of what it replaced.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from agent_tui.core.journal.journal import Records
from agent_tui.core.journal.records import (
    CompactionRecord,
    ConversationClearedRecord,
    Record,
    RewindRecord,
    ToolResultRecord,
    TurnEndedRecord,
    UserMessageRecord,
)
from agent_tui.protocol.states import RestoreWhat


def effective_records(records: Iterable[Record]) -> list[Record]:
    """The records the model view is built from: a rewind of the conversation cuts
    back to just before its checkpoint's user message (the journal keeps the rest)."""
    kept: list[Record] = []
    rest: Iterable[Record] = records
    if isinstance(records, Records) and records.at is not None:  # where its rewinds are
        if not records.at["rewind"]:
            return list(records)
        first = records.at["rewind"][0]
        kept, rest = list(records[:first]), records[first:]  # nothing before a rewind is cut
    for record in rest:
        if isinstance(record, RewindRecord) and record.restore is not RestoreWhat.CODE:
            for i in range(len(kept) - 1, -1, -1):
                candidate = kept[i]
                if (
                    isinstance(candidate, UserMessageRecord)
                    and candidate.turn_id == record.checkpoint_id
                ):
                    del kept[i:]
                    break
        kept.append(record)
    return kept


def model_records(records: Iterable[Record]) -> list[Record]:
    """The records the model view is built from: the effective records after the
    last ``/clear``, with the newest compaction's summary standing for what came
    before the part it kept."""
    at = records.at if isinstance(records, Records) else None  # the journal's positions
    kept = effective_records(records)
    if at is not None and not at["rewind"]:
        # Nothing was cut: the journal's positions hold in ``kept``.
        cleared = at["conversation_cleared"][-1] if at["conversation_cleared"] else -1
        compactions = [i for i in at["compaction"][-1:] if i > cleared]
        found = kept[compactions[0]] if compactions else None
        compaction = found if isinstance(found, CompactionRecord) else None
        kept = kept[cleared + 1 :]
    else:
        for i in range(len(kept) - 1, -1, -1):
            if isinstance(kept[i], ConversationClearedRecord):
                kept = kept[i + 1 :]
                break
        compaction = next(
            (r for r in reversed(kept) if isinstance(r, CompactionRecord)), None
        )
    if compaction is None:
        return kept
    # The records are in journal order (seq ascending): the kept part is found by
    # bisection, and only the records after the last user message before it are
    # looked at, so that a request late in a long session costs what an early one does.
    cut = bisect_left(kept, compaction.kept_from_seq, key=lambda r: r.seq)
    after = [r for r in kept[cut:] if r is not compaction]
    # What the kept part's first user message must still be told: how the turn
    # before it ended (the interrupted note needs its results and its end).
    last_user = next(
        (i for i in range(cut - 1, -1, -1) if isinstance(kept[i], UserMessageRecord)), -1
    )
    carried = [
        r for r in kept[last_user + 1 : cut] if isinstance(r, (ToolResultRecord, TurnEndedRecord))
    ]
    return [compaction, *carried, *after]
