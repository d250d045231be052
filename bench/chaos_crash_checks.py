"""The invariants of a crash trial (``chaos_crash``), checked on what is on disk.

After the kill: the journal loads (only a torn last line may be set aside); the
shadow repository passes ``git fsck``; every token in the effects file belongs to a
call whose intent was journalled first, and none appears twice.

After ``--continue``: the server rejected nothing and the first request is valid
(thinking blocks of the tool loop sent back signed and unmodified); a compaction
whose record was saved stands, its summary in place of what it replaced, and one
cut short left the conversation as it was; the resume asks for no summary again;
each call with a final record that no summary replaced is told to the model
exactly as recorded (a command that succeeded, with the token it printed); a call
with an intent and no result reads ``unknown`` with its operation id; steers still
queued are offered back; the resume itself repeated no side effect; it said
nothing at error level; the records it wrote load back; every rewind point it
listed is in the shadow repository, and the workspace after its rewind is byte for
byte the checkpoint's snapshot; the message after the rewind completes, its request
holding the compaction's summary exactly when the rewind left the compaction standing.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_tui.checkpoints import meta as checkpoint_meta
from agent_tui.core.compaction.compaction import SUMMARY_ASK
from agent_tui.core.history.history import SUMMARY_HEADER, result_wording
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import (
    CompactionRecord,
    SteerRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserMessageRecord,
)
from agent_tui.protocol import SteerStatus, ToolState
from bench.chaos_requests import sent_results, text_of, texts_of

TOKEN = re.compile(r"E-(toolu_[A-Za-z0-9]+)")


class PowerCut:
    """What a power cut could take: each journal's bytes written since its last fsync.

    Told every crash point the agent passes (the agent waits meanwhile, so a file's size
    is stable): a ``journal.fsync`` point marks the size that becomes durable once the
    agent goes on past it. ``cut`` then drops a random part of each journal's unsynced
    tail, as a power cut may (whatever was fsynced stays).
    """

    def __init__(self, trial: Any) -> None:
        self.trial = trial
        self.durable: dict[str, int] = {}
        self._syncing: dict[str, int] = {}

    def _path(self, name: str) -> Path | None:
        session = self.trial.session_dir()
        if session is None:
            return None
        return session / name if name == "journal.jsonl" else session / "agents" / name

    def seen(self, point: str) -> None:
        kind, _, rest = point.partition(":")
        if not kind.startswith("journal."):
            return
        name = rest.rpartition(":")[2]
        if name in self._syncing:  # the agent went on: that fsync is done
            self.durable[name] = self._syncing.pop(name)
        path = self._path(name)
        if kind == "journal.fsync" and path is not None:
            self._syncing[name] = path.stat().st_size

    def cut(self, seed: int) -> str:
        rng = random.Random(seed)
        session = self.trial.session_dir()
        if session is None:
            return ""
        cuts = []
        for path in [session / "journal.jsonl", *sorted((session / "agents").glob("*.jsonl"))]:
            if not path.is_file():
                continue
            size, durable = path.stat().st_size, self.durable.get(path.name, 0)
            if size > durable:
                keep = rng.randint(durable, size)
                os.truncate(path, keep)
                cuts.append(f"{path.name} lost {size - keep} of {size - durable} unsynced bytes")
        return "; ".join(cuts)


def git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": os.environ.get("PATH", ""), "GIT_DIR": str(git_dir),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", *args], env=env, capture_output=True, timeout=60)


@dataclass
class Crashed:
    """What the kill left on disk."""

    trial: Any
    killed_at: str | None
    torn: str
    session: Path | None = None
    journal: Journal | None = None
    sub_journals: list[Journal] = field(default_factory=list)
    effects: str = ""
    load_error: str = ""

    @classmethod
    def read(cls, trial: Any, killed_at: str | None, torn: str) -> Crashed:
        crashed = cls(trial, killed_at, torn, session=trial.session_dir())
        if trial.effects.exists():
            crashed.effects = trial.effects.read_text()
        if crashed.session is None or not (crashed.session / "journal.jsonl").is_file():
            return crashed
        try:
            crashed.journal = Journal.load(crashed.session / "journal.jsonl")
            crashed.sub_journals = [Journal.load(p) for p in
                                    sorted((crashed.session / "agents").glob("*.jsonl"))]
        except Exception as exc:
            crashed.load_error = f"the journal does not load: {exc!r}"
        return crashed

    @property
    def shadow(self) -> Path | None:
        if self.session is None:
            return None
        path = self.session / "checkpoints" / "shadow.git"
        return path if (path / "HEAD").exists() else None

    def records(self) -> list[Any]:
        return self.journal.records if self.journal is not None else []

    def conversation(self) -> bool:
        """Whether a user message was saved (else there is nothing to resume)."""
        return any(isinstance(r, UserMessageRecord) for r in self.records())

    def compaction(self) -> CompactionRecord | None:
        """The newest compaction saved (the session has no ``/clear``)."""
        return next((r for r in reversed(self.records()) if isinstance(r, CompactionRecord)),
                    None)


def _fsck(shadow: Path | None, when: str) -> list[str]:
    if shadow is None:
        return []
    done = git(shadow, "fsck", "--no-progress", "--no-dangling")
    if done.returncode != 0:
        return [f"git fsck {when}: {done.stderr.decode(errors='replace')[-500:]}"]
    return []


def _damage(journal: Journal, when: str) -> list[str]:
    """Only the last line may be set aside, and only when it was cut short."""
    return [f"journal {when}: {d.describe()} set aside" for d in journal.damaged if not d.torn]


def check_after_crash(c: Crashed) -> list[str]:
    failures = []
    if c.load_error:
        return [c.load_error]
    if c.journal is not None:
        failures += _damage(c.journal, "after the kill")
        for sub in c.sub_journals:
            failures += _damage(sub, f"{sub.path.name} after the kill")
    failures += _fsck(c.shadow, "after the kill")
    intents = {r.tool_use_id for j in [c.journal, *c.sub_journals] if j is not None
               for r in j.records if isinstance(r, ToolIntentRecord)}
    seen: dict[str, int] = {}
    for token in TOKEN.findall(c.effects):
        seen[token] = seen.get(token, 0) + 1
    for token, count in seen.items():
        if count > 1:
            failures.append(f"side effect of {token} happened {count} times")
        if token not in intents:
            failures.append(f"side effect of {token} happened without its intent on disk")
    return failures


def _compaction_failures(c: Crashed, requests: list[Any]) -> list[str]:
    """A saved compaction stands after the resume; one cut short changed nothing; the
    resume does not compact again by itself."""
    failures = []
    first, record = requests[0], c.compaction()
    said = "\n".join(texts_of(first))
    if record is not None:
        head = first["messages"][0]
        if record.summary not in json.dumps(head.get("content")):
            failures.append("a compaction was saved, but its summary does not open the "
                            "first request")
        replaced = {r.tool_use_id for r in c.records() if isinstance(r, ToolResultRecord)
                    and r.seq < record.kept_from_seq}
        back = sorted(replaced & set(sent_results(first)))
        if back:
            failures.append(f"results the summary replaced are sent again: {back}")
    elif SUMMARY_HEADER in said:
        failures.append("no compaction was saved, yet a summary is in the first request")
    again = [i for i, r in enumerate(requests) if r and any(
        SUMMARY_ASK in t for t in texts_of(r))]
    if again:
        failures.append(f"the resume asked for a summary again (requests {again})")
    return failures


def _result_failures(c: Crashed, request: dict[str, Any]) -> list[str]:
    failures = []
    sent = sent_results(request)
    compaction = c.compaction()
    # What a saved summary stands for is told by the summary, not record by record.
    cut = compaction.kept_from_seq if compaction is not None else 0
    records = [r for r in c.records() if r.seq >= cut]
    results = {r.tool_use_id: r for r in records if isinstance(r, ToolResultRecord)}
    for tid, record in results.items():
        block = sent.get(tid)
        if block is None:
            failures.append(f"{record.name} {tid} has a final record but no tool_result is sent")
            continue
        text, is_error = result_wording(record)
        if text_of(block) != (text or "(no output)") or bool(block.get("is_error")) != is_error:
            failures.append(f"{record.name} {tid} ({record.state}) is told "
                            f"{text_of(block)[:160]!r}, recorded {text[:160]!r}")
        if (record.name == "bash" and record.state is ToolState.SUCCEEDED
                and f"E-{tid}" not in record.content):
            failures.append(f"bash {tid} succeeded without printing its token: "
                            f"{record.content[:160]!r}")
    for intent in (r for r in records if isinstance(r, ToolIntentRecord)):
        if intent.tool_use_id in results:
            continue
        text = text_of(sent.get(intent.tool_use_id, {}))
        if not text.startswith("Result unknown") or intent.operation_id not in text:
            failures.append(f"{intent.name} {intent.tool_use_id} was running: told {text[:160]!r}, "
                            f"not unknown with operation id {intent.operation_id}")
    return failures


def _steer_failures(c: Crashed, resume: Any) -> list[str]:
    last: dict[str, SteerRecord] = {}
    for record in c.records():
        if isinstance(record, SteerRecord):
            last[record.id] = record
    offered = {e["id"] for e in resume.of("steer_state") if e.get("state") == "returned"}
    return [f"steer {sid} was queued at the kill and is not offered back"
            for sid, record in last.items()
            if record.state is SteerStatus.QUEUED and sid not in offered]


def _workspace_files(root: Path) -> dict[str, bytes]:
    files = {}
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            files[path.relative_to(root).as_posix()] = (
                os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    return files


def _tree_files(shadow: Path, tree: str) -> dict[str, bytes]:
    listing = git(shadow, "ls-tree", "-r", "-z", "--full-tree", tree)
    files = {}
    for entry in listing.stdout.split(b"\0"):
        if entry:
            head, _, path = entry.partition(b"\t")
            sha = head.split()[2].decode()
            files[os.fsdecode(path)] = git(shadow, "cat-file", "blob", sha).stdout
    return files


def _rewind_failures(c: Crashed, resume: Any) -> list[str]:
    listed = resume.of("rewind_points")
    if not listed:
        return ["the resume listed no rewind points"]
    points = listed[0].get("points") or []
    shadow = c.shadow or (c.session / "checkpoints" / "shadow.git" if c.session else None)
    records = {r.id: r for r in checkpoint_meta.load(c.session / "checkpoints" / "checkpoints.json")[0].records}
    failures = []
    for point in points:
        record = records.get(point["checkpoint_id"])
        if record is None:
            failures.append(f"rewind point {point['checkpoint_id']} has no checkpoint record")
        elif record.tree and shadow is not None:
            done = git(shadow, "rev-parse", "--verify", "--quiet", f"{record.commit}^{{tree}}")
            if done.stdout.decode().strip() != record.tree:
                failures.append(f"rewind point {record.id}: its snapshot is not in the shadow")
    rewound = resume.of("rewound")
    if not points:
        return failures
    if not rewound:
        notices = [e.get("text") for e in resume.of("notice")]
        return failures + [f"the rewind did not happen: {notices[-3:]}"]
    event = rewound[0]
    if event.get("errors"):
        failures.append(f"the rewind to {event['checkpoint_id']} failed on: {event['errors']}")
    record = records.get(event["checkpoint_id"])
    if event.get("restore") != "conversation" and record is not None and record.tree and shadow:
        want = _tree_files(shadow, record.tree)
        have = _workspace_files(c.trial.workspace)
        if want != have:
            differ = sorted(p for p in set(want) | set(have) if want.get(p) != have.get(p))
            failures.append(f"after the rewind to {record.id} the workspace differs from its "
                            f"snapshot in {differ}")
    return failures


def _after_rewind_failures(c: Crashed, resume: Any, requests: list[Any],
                           records: list[Any]) -> list[str]:
    """The message after the rewind completes, and its request holds the conversation
    the rewind left: the compaction's summary exactly when the compaction still
    stands (a conversation rewound to before it takes it away)."""
    rewound = resume.of("rewound")
    if not rewound:
        return []
    ended = resume.of("turn_ended")
    if len(ended) < 2 or ended[-1].get("status") != "completed":
        return [f"the message after the rewind did not complete: {ended[1:]}"]
    compaction, event = c.compaction(), rewound[0]
    stands = compaction is not None
    if stands and event.get("restore") != "code":
        start = next((r.seq for r in records if isinstance(r, UserMessageRecord)
                      and r.turn_id == event["checkpoint_id"]), None)
        stands = start is not None and start > compaction.seq
    has = SUMMARY_HEADER in "\n".join(texts_of(requests[-1]))
    if has != stands:
        return [f"after the rewind ({event.get('restore')} to {event['checkpoint_id']}) the "
                f"request {'holds' if has else 'lacks'} the compaction's summary"]
    return []


def _expected(text: str) -> bool:
    """Warnings a crash may rightly cause: lines set aside, processes left running."""
    return "set aside" in text or "from an earlier run of this session" in text


def check_resume(c: Crashed, resume: Any, requests: list[Any], rejections: list[str]) -> list[str]:
    from tests.fake_api import validate_messages

    failures = [f"the server rejected: {r}" for r in rejections]
    if not requests or requests[0] is None:
        return failures + ["the resume sent no request"]
    problem = validate_messages(requests[0])
    if problem:
        failures.append(f"the first request is invalid: {problem}")
    ended = resume.of("turn_ended")
    if not ended or ended[0].get("status") != "completed":
        failures.append(f"the resumed turn did not complete: {ended[:1]}")
    failures += _compaction_failures(c, requests)
    failures += _result_failures(c, requests[0])
    failures += _steer_failures(c, resume)
    for notice in resume.of("notice"):
        if notice.get("level") != "info" and not _expected(notice.get("text", "")):
            failures.append(f"the resume said ({notice.get('level')}): "
                            f"{notice.get('text', '')[:300]}")
    if c.journal is not None and c.journal.damaged:
        if not any("set aside" in n.get("text", "") for n in resume.of("notice")):
            failures.append("lines were set aside without a notice")
    effects = c.trial.effects.read_text() if c.trial.effects.exists() else ""
    if effects != c.effects:
        failures.append(f"the resume ran side effects: {effects[len(c.effects):][:200]!r}")
    failures += _rewind_failures(c, resume)
    after = Journal.load(c.session / "journal.jsonl")
    failures += _after_rewind_failures(c, resume, requests, after.records)
    if after.damaged:
        failures.append(f"after the resume the journal has damaged lines: "
                        f"{[d.describe() for d in after.damaged]}")
    if len(after.records) <= len(c.records()):
        failures.append("the resume's records are not in the journal")
    failures += _fsck(c.shadow, "after the resume")
    return failures
