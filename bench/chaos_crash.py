"""Crash trials: a scripted session as a real agent process, SIGKILLed, then ``--continue``.

Each trial draws from its own seed:

- **the session**: the real agent in print mode (stream-json in and out) against the
  strict fake API, in a home and workspace of its own. Three user messages and a
  compaction: one streams thinking and text and runs ``write_file`` and a command,
  with a steer sent while the command runs; one hands work to a sub-agent, which
  runs a command of its own; then the stream-json ``compact`` op, whose summary
  streams; then one runs ``edit_file``, a command and ``read_file``. Every reply of
  a tool loop starts with signed thinking (some with redacted thinking), which the
  strict fake API wants back unmodified. Every command appends a token named after
  its tool call to an effects file outside the workspace.
- **the kill**: SIGKILL to the agent's process group, at a crash point (3 trials in
  4: a journal write or fsync, a git command of a checkpoint, an atomic file write,
  the compaction's summary request, drawn uniformly over the session's points) or
  at a random time over the session; and in 1 trial in 7, instead, within the
  compaction (mid-summary-stream, or at one of the journal writes that save it).
  At a journal fsync the line just written may also be cut short, as a power cut
  could leave it (it was not yet durable).
- **the resume**: ``--continue`` with a message, then the rewind points, then a
  rewind to one of them, then one more message; every invariant of
  ``chaos_crash_checks`` is checked.

Trials run in parallel (``bench.chaos --jobs``): each worker process has its own
fake API server and its own fork server (``chaos_agent``).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.chaos_outcome import Outcome
from bench.chaos_agent import AgentRun
from bench.procs import kill_marked, new_marker, procs_with

# About how many crash points a whole session passes, and how long it runs: the
# kill is drawn over these (a draw past the end lets the session finish).
POINTS_EST = 215
SECONDS_EST = 2.2
COMPACT = "compact"  # in SCRIPT: the stream-json compact op, between two user messages
SCRIPT = ("step 1: set the project up", "step 2: hand the counting to a helper", COMPACT,
          "step 3: edit the notes")
STEER = "steer: also keep a copy of the notes"
RESUME = "resume: carry on where you stopped"
AFTER_REWIND = "after the rewind: say what you see"
SESSION_TIMEOUT_S = 60.0
# The summary the model writes when asked to compact (it names no step, so the
# router never takes it for a user's request), streamed slowly enough to be cut.
SUMMARY = ("Summary: the notes file was written and a command recorded the setup; a "
           "helper counted the lines of the notes. Next, edit the notes as asked.")
SUMMARY_CHUNK, SUMMARY_DELAY = 6, 0.002
SUMMARY_STREAM_S = (len(SUMMARY) / SUMMARY_CHUNK + 4) * SUMMARY_DELAY
# The crash points of a compaction from its summary request on: the request, the
# usage record, the compaction record's write and fsync.
COMPACTION_POINTS = 4


@dataclass
class CrashPlan:
    """What one trial does, drawn from its seed."""

    seed: int
    # "point": at the n-th crash point; "time": after a delay; "compaction": at the
    # n-th crash point of the compaction (n from 0, its summary request)
    mode: str
    fraction: float  # where in the session, of POINTS_EST or SECONDS_EST (or the compaction)
    tear: bool  # a power cut too: the journals lose part of what was not yet fsynced
    delay: float | None  # let the point go on, and kill this much later (mid-git, mid-write)
    sleep: float  # how long step 1's command runs (the steer arrives meanwhile)
    rewind_pick: float  # which listed rewind point the resume goes back to
    rewind_both: bool  # conversation too, or only the code

    @property
    def point(self) -> int:
        if self.mode == "compaction":
            return int(self.fraction * COMPACTION_POINTS)
        return 1 + int(self.fraction * POINTS_EST)

    def describe(self) -> str:
        where = {"point": f"kill@point#{self.point}",
                 "compaction": f"kill@compaction#{self.point}"}.get(
                     self.mode, f"kill@{self.fraction * SECONDS_EST:.3f}s")
        if self.mode != "time" and self.delay is not None:
            where += f"+{self.delay * 1000:.1f}ms"
        return (f"kind=crash {where}{' tear' if self.tear else ''} cmd={self.sleep:.2f}s "
                f"rewind={'both' if self.rewind_both else 'code'}@{self.rewind_pick:.2f}")


def make_plan(seed: int) -> CrashPlan:
    rng = random.Random(seed)
    plan = CrashPlan(
        seed=seed,
        mode="point" if rng.random() < 0.75 else "time",
        fraction=rng.random(),
        tear=rng.random() < 0.5,
        delay=rng.uniform(0.0, 0.01) if rng.random() < 0.3 else None,
        sleep=rng.uniform(0.02, 0.12),
        rewind_pick=rng.random(),
        rewind_both=rng.random() < 0.5,
    )
    if rng.random() < 1 / 7:  # drawn last: the other draws stay as they were
        plan.mode = "compaction"
        if plan.point == 0:  # at the summary request, or anywhere in its stream
            plan.delay = rng.uniform(0.0, SUMMARY_STREAM_S * 1.2)
    return plan


# ----------------------------------------------------------------------------- the model


class Router:
    """The fake model: answers each request from what it holds, so any prefix of the
    session (and its resume) gets a fitting reply, whatever was lost in a crash.
    Each reply of a tool loop thinks first, as a thinking model does."""

    def __init__(self, effects: Path, marker: str) -> None:
        self.effects = effects
        self.marker = marker

    def _bash(self, sleep: float = 0.0) -> tuple[str, dict, str]:
        from tests.fake_api import new_tool_use_id

        tid = new_tool_use_id()
        pause = f"sleep {sleep:.2f}; " if sleep else ""
        command = f"{pause}echo E-{tid} | tee -a {self.effects} # {self.marker}"
        return ("bash", {"command": command}, tid)

    def __call__(self, body: dict[str, Any]) -> Any:
        from agent_tui.core.compaction.compaction import SUMMARY_ASK
        from tests.fake_api import Reply

        messages = body.get("messages") or [{}]
        last = messages[-1].get("content")
        blocks = last if isinstance(last, list) else [{"type": "text", "text": str(last)}]
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        results = any(b.get("type") == "tool_result" for b in blocks)
        first = messages[0].get("content")
        first_text = json.dumps(first)
        if any(SUMMARY_ASK in t for t in texts):
            return Reply.text(SUMMARY, chunk=SUMMARY_CHUNK, delay_between_events=SUMMARY_DELAY)
        if "sub: " in first_text:  # the sub-agent's own conversation
            if results:
                return Reply.text("sub done: the notes have two lines.", chunk=7)
            return Reply.thinking("A helper counts with one command.", tool_uses=[self._bash()])
        if any(RESUME in t or AFTER_REWIND in t for t in texts):
            return Reply.text("Resumed. I will check what finished before redoing anything.")
        if results:
            return Reply.text("That step is done.", chunk=4).with_thinking("All went well.")
        step = next((int(m.group(1)) for t in reversed(texts)
                     for m in [re.search(r"step (\d)", t)] if m), 0)
        if step == 1:
            sleep = float(re.search(r"\[(\d\.\d+)\]", " ".join(texts)).group(1))
            return Reply.thinking(
                "The notes first, then a record of the setup.",
                "I will write the notes, then record the setup.",
                tool_uses=[("write_file", {"path": "notes.txt",
                                           "content": "alpha\nfirst notes\n"}),
                           self._bash(sleep)], chunk=6)
        if step == 2:
            return Reply.thinking("This is a job for a helper.", tool_uses=[
                ("task", {"description": "count lines",
                          "prompt": "sub: count the lines of notes.txt"})])
        if step == 3:
            return Reply.thinking(
                "Edit, record, read back.", redacted=1,
                tool_uses=[("edit_file", {"path": "notes.txt", "old_string": "alpha",
                                          "new_string": "beta"}),
                           self._bash(), ("read_file", {"path": "notes.txt"})])
        return Reply.text("Nothing to do.")


# ----------------------------------------------------------------------------- a trial


@dataclass
class Trial:
    """One trial's folders and processes."""

    root: Path
    marker: str = field(default_factory=new_marker)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    @property
    def effects(self) -> Path:
        return self.root / "effects.log"

    def env(self, url: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root), "LANG": "C.UTF-8",
            "AGENT_TUI_HOME": str(self.home),
            "ANTHROPIC_API_KEY": "chaos-key", "ANTHROPIC_BASE_URL": url,
        }

    def argv(self, *extra: str) -> list[str]:
        return ["-p", "--input-format", "stream-json", "--output-format", "stream-json",
                "--permission-mode", "auto", "--cwd", str(self.workspace), *extra]

    def session_dir(self) -> Path | None:
        sessions = self.home / "sessions"
        found = sorted(sessions.iterdir()) if sessions.is_dir() else []
        return found[0] if found else None


def _drive_session(run: AgentRun, plan: CrashPlan) -> None:
    """Run ``SCRIPT``: each message once the agent is idle (the compaction once the
    turn before ended, the next message once it is over); the steer while step 1's
    command runs. Returns at end of output (done, or killed)."""
    step, steered, rewinding, pending = 0, False, False, set()

    def send_step() -> None:
        if step == len(SCRIPT):
            run.send({"type": "list_rewind_points"})
        elif SCRIPT[step] == COMPACT:
            run.send({"type": "compact", "instructions": "keep the file names"})
        else:
            text = SCRIPT[step] + (f" [{plan.sleep:.2f}]" if step == 0 else "")
            run.send({"type": "user_message", "text": text})

    send_step()
    for event in run.stream(SESSION_TIMEOUT_S):
        kind = event.get("type")
        if (kind == "tool_state" and event.get("state") == "running" and step == 0
                and event.get("name") == "bash" and not steered):
            run.send({"type": "user_message", "text": STEER})
            steered = True
        elif kind == "steer_state":
            if event.get("state") == "queued":
                pending.add(event["id"])
            else:
                pending.discard(event["id"])
        elif (kind == "turn_ended" and not pending) or (
                kind == "compaction" and event.get("state") != "started"):
            step += 1
            send_step()
        elif kind == "rewind_points":
            points = event.get("points") or []
            if points:  # back to the start of step 2, files only
                run.send({"type": "rewind", "checkpoint_id": points[min(1, len(points) - 1)]
                          ["checkpoint_id"], "restore": "code"})
                rewinding = True
            else:
                run.close_stdin()
        elif kind == "rewound" or (rewinding and kind == "notice"
                                   and "rewind" in event.get("text", "")):
            run.close_stdin()


def _drive_resume(run: AgentRun, plan: CrashPlan) -> None:
    """A message, then the rewind points, then a rewind to one of them, then one more
    message (its request shows the conversation the rewind left)."""
    run.send({"type": "user_message", "text": RESUME})
    rewinding = after = False
    for event in run.stream(SESSION_TIMEOUT_S):
        kind = event.get("type")
        if kind == "turn_ended":
            if after:
                run.close_stdin()
            else:
                run.send({"type": "list_rewind_points"})
        elif kind == "rewind_points":
            points = event.get("points") or []
            if not points:
                run.close_stdin()
                continue
            pick = points[int(plan.rewind_pick * len(points))]
            run.send({"type": "rewind", "checkpoint_id": pick["checkpoint_id"],
                      "restore": "both" if plan.rewind_both and pick.get("turn_id") else "code",
                      "overwrite_conflicts": True})
            rewinding = True
        elif kind == "rewound" and not after:
            run.send({"type": "user_message", "text": AFTER_REWIND})
            after = True
        elif rewinding and not after and kind == "notice" and "rewind" in event.get("text", ""):
            run.close_stdin()  # the rewind was refused (checked as such)


def _settle_leftovers(marker: str, timeout: float = 3.0) -> None:
    """Commands a killed agent left run on (as they would); wait, then end them."""
    deadline = time.monotonic() + timeout
    while procs_with(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    kill_marked(marker)


def run_trial(srv: Any, ctx: Any, seed: int, *, base: Path | None = None) -> Outcome:
    from bench.chaos_crash_checks import Crashed, PowerCut, check_after_crash, check_resume

    started = time.monotonic()
    plan = make_plan(seed)
    trial = Trial(Path(tempfile.mkdtemp(prefix="atui-crash-", dir=base)))
    failures: list[str] = []
    outcome = Outcome(seed, plan.describe(), failures, 0.0, kind="crash")
    runs: list[AgentRun] = []
    torn = ""
    try:
        trial.workspace.mkdir()
        (trial.workspace / "README.md").write_text("A project of a crash trial.\n")
        srv.clear_queue()
        router = Router(trial.effects, trial.marker)
        srv.enqueue(*[router] * 64)
        rej0 = len(srv.rejections)

        power = PowerCut(trial)

        compaction_from: list[int] = []  # the n of the compaction's first crash point

        def on_point(name: str, n: int) -> float | None:
            power.seen(name)
            if name == "compaction:request":
                compaction_from.append(n)
            if plan.mode == "point" and n == plan.point:
                return plan.delay or 0.0
            if (plan.mode == "compaction" and compaction_from
                    and n == compaction_from[0] + plan.point):
                return plan.delay or 0.0
            return None

        first = AgentRun(ctx, trial.argv(), trial.env(srv.url), str(trial.workspace),
                         str(trial.root / "first.err"), on_point=on_point)
        runs.append(first)
        timer = None
        if plan.mode == "time":
            timer = threading.Timer(plan.fraction * SECONDS_EST, first.kill, args=("timer",))
            timer.start()
        _drive_session(first, plan)
        if first.wait(SESSION_TIMEOUT_S) is None:
            first.kill("hung")
            failures.append(f"the first run did not end within {SESSION_TIMEOUT_S:g} s")
            first.wait(10)
        if timer is not None:
            timer.cancel()
        outcome.points = len(first.points)
        killed = first.killed_at
        outcome.status = (killed.split(":")[0] if killed else "no kill")
        if killed and plan.mode == "compaction":
            outcome.status += " (in the compaction)"
        _settle_leftovers(trial.marker)
        if killed is None and first.proc.exitcode != 0:
            failures.append(f"the first run exited {first.proc.exitcode} without a kill: "
                            + (trial.root / "first.err").read_text()[-800:])
        compacted = [e.get("state") for e in first.of("compaction")]
        if killed is None and compacted != ["started", "completed"]:
            failures.append(f"the compaction did not complete: {compacted}")
        if plan.tear and killed:
            torn = power.cut(plan.seed)
        crashed = Crashed.read(trial, killed, torn)
        failures += check_after_crash(crashed)
        if crashed.journal is None:
            outcome.status += " (before any session)"
            return outcome
        resume = AgentRun(ctx, trial.argv("--continue"), trial.env(srv.url),
                          str(trial.workspace), str(trial.root / "resume.err"))
        runs.append(resume)
        req0 = len(srv.requests)
        _drive_resume(resume, plan)
        code = resume.wait(SESSION_TIMEOUT_S)
        said = (trial.root / "resume.err").read_text()[-800:]
        if code == 1 and not crashed.conversation() and "no saved session" in said:
            outcome.status += " (refused: nothing to resume)"  # killed before a message was saved
            return outcome
        if code is None:
            resume.kill("hung")
            failures.append(f"the resume did not end within {SESSION_TIMEOUT_S:g} s")
            resume.wait(10)
        elif code != 0:
            failures.append(f"the resume exited {code}: {said}")
        failures += check_resume(crashed, resume, srv.requests[req0:], srv.rejections[rej0:])
    except Exception:
        failures.append(f"trial crashed: {traceback.format_exc()}")
    finally:
        for run in runs:
            if run.wait(0) is None:
                run.kill("cleanup")
                run.wait(10)
        kill_marked(trial.marker)
        if not failures:
            shutil.rmtree(trial.root, ignore_errors=True)
        else:
            for name, run in zip(("first", "resume"), runs):
                with open(trial.root / f"{name}.events.jsonl", "w") as out:
                    out.writelines(json.dumps(e) + "\n" for e in run.events)
            cut = f"; power cut: {torn}" if torn else ""
            failures.append(f"(killed at {first.killed_at if runs else None}{cut}; the "
                            f"trial's folders are kept in {trial.root})")
        outcome.seconds = time.monotonic() - started
    return outcome
