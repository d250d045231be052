"""Concurrent-resume trials: two or three agents on one session, some SIGKILLed.

Each trial draws from its own seed:

- **agent A** starts a session (print mode, stream-json in and out, against the strict
  fake API) and sends its messages ``A1``, ``A2``... one per turn;
- **agents B (and C)** start at random moments after A's journal exists, each with
  ``--resume`` of A's session (or ``--continue``), and send their own ``B1``...: one
  that finds the session open forks it; one that comes after its holder died
  continues it;
- **the model** answers each message, some with a command (a short sleep, so turns
  overlap, and an effect appended to a file outside the workspace);
- **the kills**: each agent may be SIGKILLed (with its process group) at a random
  time or at one of its crash points (a journal write or fsync, a checkpoint's git).

When every agent has ended, the locks are checked at once (commands a killed agent
left running must not hold them), then a last agent resumes A's session with one
message, which must continue it (no fork). ``chaos_concurrent_checks`` checks every
journal and what each agent said.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.chaos_concurrent_checks import LAST, TAG, check_trial, locks_free
from bench.chaos_outcome import Outcome
from bench.chaos_agent import AgentRun
from bench.chaos_crash import Trial
from bench.procs import kill_marked

NAMES = "ABC"
AGENT_TIMEOUT_S = 60.0


@dataclass
class Kill:
    mode: str  # "time" (seconds after it started) or "point" (its n-th crash point)
    at: float


@dataclass
class ConcurrentPlan:
    seed: int
    agents: int  # 2 or 3
    messages: list[int]  # how many messages each agent sends
    starts: list[float]  # B's and C's delays after A's journal exists (A's: 0)
    continues: list[bool]  # --continue instead of --resume ID
    holds: list[float]  # how long each agent stays open after its last turn
    kills: list[Kill | None]
    commands: float  # the share of messages answered with a command first

    def describe(self) -> str:
        parts = []
        for i in range(self.agents):
            kill = self.kills[i]
            how = "" if kill is None else (
                f" kill@{kill.at:.2f}s" if kill.mode == "time" else f" kill@point#{int(kill.at)}")
            way = "" if i == 0 else (" cont" if self.continues[i] else " resume") + \
                f"+{self.starts[i]:.2f}s"
            parts.append(f"{NAMES[i]}x{self.messages[i]}{way}{how}")
        return f"kind=concurrent {' '.join(parts)} cmds={self.commands:.2f}"


def make_plan(seed: int) -> ConcurrentPlan:
    rng = random.Random(seed)
    agents = 2 if rng.random() < 0.5 else 3
    kills: list[Kill | None] = []
    for _ in range(agents):
        draw = rng.random()
        if draw < 0.25:
            kills.append(Kill("time", rng.uniform(0.05, 2.0)))
        elif draw < 0.45:
            kills.append(Kill("point", rng.randint(1, 40)))
        else:
            kills.append(None)
    return ConcurrentPlan(
        seed=seed, agents=agents,
        messages=[rng.randint(1, 3) for _ in range(agents)],
        starts=[0.0] + [rng.uniform(0.0, 0.8) for _ in range(agents - 1)],
        continues=[False] + [rng.random() < 0.3 for _ in range(agents - 1)],
        holds=[rng.uniform(0.0, 1.0) for _ in range(agents)],
        kills=kills, commands=rng.random(),
    )


class Router:
    """The fake model: each message gets an answer naming it; some get a command first
    (whether is drawn from the message's tag, so a resumed request gets the same)."""

    def __init__(self, plan: ConcurrentPlan, effects: Path, marker: str) -> None:
        self.plan = plan
        self.effects = effects
        self.marker = marker

    def __call__(self, body: dict[str, Any]) -> Any:
        from tests.fake_api import Reply

        last = (body.get("messages") or [{}])[-1].get("content")
        blocks = last if isinstance(last, list) else [{"type": "text", "text": str(last)}]
        texts = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        tags = TAG.findall(texts)
        tag = tags[-1] if tags else "?"
        if any(b.get("type") == "tool_result" for b in blocks):
            return Reply.text(f"done {tag} after its command.", chunk=6)
        draw = random.Random(f"{self.plan.seed}/{tag}").random()
        if tags and draw < self.plan.commands:
            sleep = 0.05 + 0.4 * draw
            command = f"sleep {sleep:.2f}; echo {tag} >> {self.effects} # {self.marker}"
            return Reply.tool_use("bash", {"command": command}, text_before=f"{tag}: a command.")
        return Reply.text(f"done {tag}.", chunk=6)


@dataclass
class Agent:
    name: str
    run: AgentRun
    argv: list[str]
    sent: list[str]
    done: threading.Event
    timer: threading.Timer | None = None  # its kill, when drawn at a time

    def wait(self, timeout: float) -> int | None:
        code = self.run.wait(timeout)
        if code is not None and self.timer is not None:
            self.timer.cancel()  # never a kill for a pid that may be someone else's now
        return code

    @property
    def killed(self) -> bool:
        return self.run.proc.exitcode == -9


def _drive(agent: Agent, count: int, hold: float = 0.0) -> None:
    """Send the agent's messages one turn at a time; close its input ``hold`` seconds
    after the last (the session stays open meanwhile)."""
    sent = 0

    def send() -> None:
        nonlocal sent
        sent += 1
        text = f"msg {agent.name}{sent} from agent {agent.name}"
        agent.sent.append(text)
        agent.run.send({"type": "user_message", "text": text})

    try:
        send()
        for event in agent.run.stream(AGENT_TIMEOUT_S):
            if event.get("type") == "turn_ended":
                if sent < count:
                    send()
                else:
                    threading.Timer(hold, agent.run.close_stdin).start()
    finally:
        agent.done.set()


def _start(trial: Trial, srv: Any, ctx: Any, name: str, argv: list[str],
           kill: Kill | None) -> Agent:
    def on_point(point: str, n: int) -> float | None:
        return 0.0 if kill is not None and kill.mode == "point" and n == int(kill.at) else None

    run = AgentRun(ctx, trial.argv(*argv), trial.env(srv.url), str(trial.workspace),
                   str(trial.root / f"{name}.err"), on_point=on_point)
    agent = Agent(name, run, argv, [], threading.Event())
    if kill is not None and kill.mode == "time":
        agent.timer = threading.Timer(kill.at, run.kill, args=("timer",))
        agent.timer.daemon = True
        agent.timer.start()
    return agent


def _journal_of(trial: Trial) -> tuple[str, Path] | None:
    folder = trial.session_dir()
    if folder is not None and (folder / "journal.jsonl").is_file():
        return folder.name, folder / "journal.jsonl"
    return None


def run_trial(srv: Any, ctx: Any, seed: int, *, base: Path | None = None) -> Outcome:

    started = time.monotonic()
    plan = make_plan(seed)
    trial = Trial(Path(tempfile.mkdtemp(prefix="atui-conc-", dir=base)))
    failures: list[str] = []
    outcome = Outcome(seed, plan.describe(), failures, 0.0, kind="concurrent")
    agents: list[Agent] = []
    threads: list[threading.Thread] = []
    try:
        trial.workspace.mkdir()
        (trial.workspace / "README.md").write_text("A project of a concurrent trial.\n")
        srv.clear_queue()
        srv.enqueue(*[Router(plan, trial.effects, trial.marker)] * 64)
        rej0 = len(srv.rejections)

        def launch(i: int, argv: list[str]) -> None:
            agent = _start(trial, srv, ctx, NAMES[i], argv, plan.kills[i])
            agents.append(agent)
            thread = threading.Thread(target=_drive, args=(agent, plan.messages[i], plan.holds[i]),
                                      daemon=True)
            threads.append(thread)
            thread.start()

        launch(0, [])
        deadline = time.monotonic() + AGENT_TIMEOUT_S
        while _journal_of(trial) is None and not agents[0].done.is_set():
            if time.monotonic() > deadline:
                raise AssertionError("A's journal never appeared")
            time.sleep(0.005)
        found = _journal_of(trial)
        if found is None:
            outcome.status = "A died before its session"
            return outcome
        session_id = found[0]
        t0 = time.monotonic()
        for i in sorted(range(1, plan.agents), key=lambda i: plan.starts[i]):
            time.sleep(max(0.0, t0 + plan.starts[i] - time.monotonic()))
            launch(i, ["--continue"] if plan.continues[i] else ["--resume", session_id])
        for agent in agents:
            if agent.wait(AGENT_TIMEOUT_S) is None:
                agent.run.kill("hung")
                failures.append(f"agent {agent.name} did not end within {AGENT_TIMEOUT_S:g} s")
                agent.wait(10)
        for thread in threads:
            thread.join(10)
        # At once: commands the killed agents left running must not hold any lock.
        failures += locks_free(trial.home / "sessions")
        last = _start(trial, srv, ctx, LAST, ["--resume", session_id], None)
        agents.append(last)
        _drive(last, 1)
        if last.run.wait(AGENT_TIMEOUT_S) is None:
            last.run.kill("hung")
            failures.append("the last resume did not end")
        kill_marked(trial.marker)
        failures += check_trial(trial, session_id, agents, srv.rejections[rej0:])
        forks = len(list((trial.home / "sessions").iterdir())) - 1
        killed = sum(1 for a in agents if a.killed)
        outcome.status = f"{plan.agents} agents, {forks} fork(s), {killed} killed"
    except Exception:
        failures.append(f"trial crashed: {traceback.format_exc()}")
    finally:
        for agent in agents:
            if agent.wait(0) is None:
                agent.run.kill("cleanup")
                agent.wait(10)
            if agent.timer is not None:
                agent.timer.cancel()
        kill_marked(trial.marker)
        if not failures:
            shutil.rmtree(trial.root, ignore_errors=True)
        else:
            for agent in agents:
                with open(trial.root / f"{agent.name}.events.jsonl", "w") as out:
                    out.writelines(json.dumps(e) + "\n" for e in agent.run.events)
            failures.append(f"(the trial's folders are kept in {trial.root})")
        outcome.seconds = time.monotonic() - started
    return outcome
