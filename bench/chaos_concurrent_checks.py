"""The invariants of a concurrent-resume trial (``chaos_concurrent``).

- **No journal holds two processes' records**: every journal numbers its records
  1, 2, 3... without a gap or a repeat, and after each ``agent_process`` record only
  that agent's messages follow (each message names its agent); no agent opens two
  journals, none opens one twice.
- **A fork is a copy, then its own**: a fork's records before its (last)
  ``session_forked`` record are exactly its source's first ones, up to ``source_seq``
  (a source may be a fork itself: ``--continue`` takes the latest session); the pid it names
  is the agent that had the source open then (the last to open it, or one opening it
  just then), never the forking agent.
- **Said once, and only when true**: an agent that forked said so in exactly one
  ``session_forked`` notice naming that pid; an agent that did not fork said nothing
  of it. One asked for ``--resume ID`` forked that session, if any.
- **Nothing completed is lost**: every turn an agent saw complete is in its journal,
  its message and its ``turn_ended`` (completed), in the part that agent wrote; its
  messages there are the ones it sent, in order.
- **Locks go with their process**: once every agent has ended, no session is locked
  (a command a killed agent left running holds nothing), and the last agent's resume
  continues the session itself, no fork, and completes.
- the strict fake API rejected no request (every model view was valid).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import (
    AgentProcessRecord,
    SessionForkedRecord,
    TurnEndedRecord,
    UserMessageRecord,
)
from agent_tui.core.journal.session_lock import SessionHeld, SessionLock


LAST = "D"  # the agent that resumes the session once all the others have ended
TAG = re.compile(r"\bmsg ([A-D]\d)\b")


def locks_free(root: Path) -> list[str]:
    failures = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        try:
            SessionLock.acquire(folder).release()
        except SessionHeld as held:
            failures.append(f"{folder.name} is still locked (pid {held.pid}) once every agent ended")
    return failures


def _dump(records: list[Any]) -> list[dict[str, Any]]:
    return [r.model_dump() for r in records]


def check_trial(trial: Any, session_id: str, agents: list[Any],
                rejections: list[Any]) -> list[str]:
    failures: list[str] = []
    if rejections:
        failures.append(f"the fake API rejected {len(rejections)} request(s): {rejections[0]}")
    root = trial.home / "sessions"
    journals = {f.name: Journal.load(f / "journal.jsonl") for f in sorted(root.iterdir())
                if (f / "journal.jsonl").is_file()}
    names = {a.run.pid: a.name for a in agents}
    opened_in: dict[str, str] = {}  # agent name -> the journal it opened
    forked_by: dict[str, SessionForkedRecord] = {}  # agent name -> the fork it made
    for sid, journal in journals.items():
        records = journal.records
        if journal.damaged:
            failures.append(f"{sid}: damaged lines {[d.describe() for d in journal.damaged]}")
        if [r.seq for r in records] != list(range(1, len(records) + 1)):
            failures.append(f"{sid}: seqs {[r.seq for r in records]}: two writers, or a gap")
        forks = [r for r in records if isinstance(r, SessionForkedRecord)]
        cut = 0
        if sid == session_id and forks:
            failures.append(f"{sid}: the first session holds a session_forked record")
        if sid != session_id:
            if not forks:
                failures.append(f"{sid}: a second session without a session_forked record")
                continue
            fork = forks[-1]  # the earlier ones: its source was a fork too (--continue)
            cut = records.index(fork)
            failures += _check_copy(sid, records, cut, fork, journals, names)
        owner: str | None = None
        for record in records[cut:]:
            if isinstance(record, AgentProcessRecord):
                owner = names.get(record.pid)
                if owner is None:
                    failures.append(f"{sid}: agent_process of pid {record.pid}, no agent of ours")
                elif owner in opened_in:
                    failures.append(f"{sid}: agent {owner} opened {opened_in[owner]} and {sid}")
                else:
                    opened_in[owner] = sid
                    if cut and record is _first_opener(records, cut):
                        forked_by[owner] = records[cut]
            elif isinstance(record, UserMessageRecord):
                tag = TAG.search(record.text)
                if tag is None or tag.group(1)[0] != owner:
                    failures.append(f"{sid}: {record.text!r} in the part agent {owner} wrote")
    for agent in agents:
        failures += _check_agent(agent, session_id, journals, opened_in, forked_by)
    return failures


def _first_opener(records: list[Any], cut: int) -> Any:
    return next((r for r in records[cut:] if isinstance(r, AgentProcessRecord)), None)


def _check_copy(sid: str, records: list[Any], cut: int, fork: SessionForkedRecord,
                journals: dict[str, Journal], names: dict[int, str]) -> list[str]:
    source = journals.get(fork.source)
    if source is None:
        return [f"{sid}: forked from {fork.source}, which is not saved"]
    failures = []
    src = source.records
    if cut != fork.source_seq or _dump(records[:cut]) != _dump(src[:cut]):
        failures.append(f"{sid}: its first {cut} records are not {fork.source}'s first "
                        f"{fork.source_seq}")
    holder = names.get(fork.holder_pid) if fork.holder_pid is not None else None
    forker = _first_opener(records, cut)
    if holder is None:
        failures.append(f"{sid}: names holder pid {fork.holder_pid}, no agent of ours")
    elif forker is not None and fork.holder_pid == forker.pid:
        failures.append(f"{sid}: agent {holder} forked from itself")
    else:
        openers = [r.pid for r in src[:cut] if isinstance(r, AgentProcessRecord)]
        if fork.holder_pid in openers[:-1]:
            failures.append(f"{sid}: names agent {holder} as the holder, but another agent "
                            f"opened {fork.source} after it, before the copy")
    return failures


def _check_agent(agent: Any, session_id: str, journals: dict[str, Journal],
                 opened_in: dict[str, str], forked_by: dict[str, SessionForkedRecord]) -> list[str]:
    failures = []
    name = agent.name
    notices = [e for e in agent.run.events
               if e.get("type") == "notice" and e.get("code") == "session_forked"]
    completed = [e["turn_id"] for e in agent.run.events
                 if e.get("type") == "turn_ended" and e.get("status") == "completed"]
    sid = opened_in.get(name)
    if sid is None:
        if completed:
            failures.append(f"agent {name} completed {completed} but no journal has it")
        return failures
    fork = forked_by.get(name)
    if fork is not None:
        pid = f"pid {fork.holder_pid}"
        # A kill between the durable record and the notice's line on stdout leaves the
        # fork unsaid: nobody is left to tell. Said twice, or naming another pid, is wrong.
        unsaid_by_kill = not notices and agent.killed
        if not unsaid_by_kill and (len(notices) != 1 or pid not in notices[0].get("text", "")):
            failures.append(f"agent {name} forked {fork.source} (holder {pid}) and said: "
                            f"{[n.get('text') for n in notices]}")
        if "--resume" in agent.argv and fork.source != session_id:
            failures.append(f"agent {name} asked for {session_id} and forked {fork.source}")
        if name == LAST:
            failures.append(f"the last agent forked, from holder {pid}: a lock outlived its agent")
    elif notices:
        failures.append(f"agent {name} did not fork and said: {notices[0].get('text')}")
    records = journals[sid].records
    start = next(i for i, r in enumerate(records)
                 if isinstance(r, AgentProcessRecord) and r.pid == agent.run.pid)
    end = next((i for i, r in enumerate(records) if i > start
                and isinstance(r, AgentProcessRecord)), len(records))
    mine = records[start:end]
    texts = [r.text for r in mine if isinstance(r, UserMessageRecord)]
    if texts != agent.sent[: len(texts)]:
        failures.append(f"agent {name} sent {agent.sent}; its part of {sid} holds {texts}")
    ended = {r.turn_id for r in mine if isinstance(r, TurnEndedRecord)
             and r.status == "completed"}
    turns = {r.turn_id for r in mine if isinstance(r, UserMessageRecord)}
    lost = [t for t in completed if t not in ended or t not in turns]
    if lost:
        failures.append(f"agent {name} completed {lost}, which {sid} does not hold")
    if name == LAST and not completed:
        failures.append(f"the last agent's turn did not complete: {agent.run.events[-3:]}")
    return failures
