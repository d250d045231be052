"""Interrupt trials of ``make chaos``: random scenarios x random Esc moments, in-process.

Each trial draws from its own seed:

- a scenario: streaming text, streaming tool arguments, a tool batch of mixed kinds
  (read-only + bash), a permission wait (answered or not), a retry back-off, a steer
  sent while a command runs, a background command next to a foreground one; and
  thinking streams, with thinking on (adaptive or a budget): a three-step tool loop
  that thinks at every step (signed thinking, redacted thinking, then ``tool_use``),
  and a tool loop whose thinking is cut before its signature (the connection drops,
  or an ``error`` event comes, mid-block; or the signature comes late and the reply
  ends there, all thinking);
- a moment for Esc (sometimes before the first byte, sometimes after the turn ended),
  sent the way the UI sends it (``interrupt_now``) or as an ``Interrupt`` op;
- sometimes a second Esc shortly after.

After each trial: the turn ended within its bound; no marked foreground process is
left once the turn ended, and none at all once the session closed (background jobs
end at shutdown); every journal ``tool_intent`` has its ``tool_result``; tools that
finished kept their real result in the model view; every queued steer was applied
or returned; the strict server rejected nothing (it wants a tool loop's thinking
back signed and unmodified), and a second turn is accepted; every thinking block
sent is one the journal holds complete with its signature, and no thinking cut
before its signature reaches the model.

A worker's one fake server serves its trials (its queue is cleared in between).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_tui.protocol import Decide, Decision, Interrupt, Shutdown, UserMessage, Verdict
from agent_tui.core.history.history import check_model_view, model_view
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import ToolIntentRecord, ToolResultRecord
from agent_tui.core.calls.permission import AllowAll, Ruling
from agent_tui.core.session.session import Session
from agent_tui.core.usage.thinking import parse_thinking
from agent_tui.core.calls.tool import ToolSet
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.tools.background import BackgroundJobs
from agent_tui.tools.bash import BashTool
from agent_tui.tools.files import ReadFileTool
from agent_tui.runtime.process import RunLimits
from bench.chaos_outcome import Outcome
from bench.chaos_interrupt_checks import (
    esc_landed_after,
    result_failures,
    steer_failures,
    thinking_failures,
)
from bench.host import Stamped
from bench.procs import kill_marked, new_marker, procs_with

SCENARIOS = ("text", "tool_args", "batch", "permission", "backoff", "steer", "background",
             "thinking", "thinking_cut")
GRACE_S = 0.2  # SIGTERM -> SIGKILL for the trials' commands
CLEANUP_BUDGET_S = 2.0  # the core's phase-2 budget in the trials
TURN_BOUND_S = CLEANUP_BUDGET_S + 0.5  # Esc -> turn_ended, at most


class AskForBash(AllowAll):
    """Asks before every command; read-only calls pass."""

    def check(self, tool: Any, args: Any) -> Ruling:
        if tool.read_only:
            return Ruling(verdict=Verdict.ALLOW, rule="chaos")
        return Ruling(verdict=Verdict.ASK, rule="chaos", reason="runs a command")

    def remember(self, tool: Any, args: Any) -> None:
        pass


@dataclass
class Plan:
    """What one trial does, drawn from its seed."""

    seed: int
    scenario: str
    replies: list[Any] = field(default_factory=list)
    span: float = 0.5  # about how long the turn runs undisturbed, seconds
    expect: dict[str, str] = field(default_factory=dict)  # tool_use_id -> text its result holds
    ask: bool = False
    decide_at: float | None = None
    decision: Decision | None = None
    steer_at: float | None = None
    interrupt_at: float = 0.0
    interrupt_op: bool = False  # an Interrupt op instead of interrupt_now()
    second_after: float | None = None
    files: dict[str, str] = field(default_factory=dict)
    fg: str = ""  # marker of foreground processes
    bg: str = ""  # marker of background processes
    thinking: str = ""  # the --thinking setting (empty: the default)
    may_fail: bool = False  # the stream breaks after thinking was shown: no retry

    def describe(self) -> str:
        bits = [f"scenario={self.scenario}", f"esc_at={self.interrupt_at:.3f}s",
                "esc=op" if self.interrupt_op else "esc=interrupt_now"]
        if self.second_after is not None:
            bits.append(f"second_esc=+{self.second_after:.3f}s")
        if self.steer_at is not None:
            bits.append(f"steer_at={self.steer_at:.3f}s")
        if self.decision is not None:
            bits.append(f"decide={self.decision.value}@{self.decide_at:.3f}s")
        if self.thinking:
            bits.append(f"thinking={self.thinking}")
        return " ".join(bits)


def _stream_s(reply: Any) -> float:
    """About how long the fake API takes to stream ``reply`` (its SSE events x delay)."""
    import json

    events = 6  # the message's start, delta and stop, and the first wait (4 delays)
    for block in [*reply.blocks, *([reply.partial] if reply.partial else [])]:
        kind = block["type"]
        if kind in ("thinking", "text"):
            events += len(block[kind]) // reply.chunk + 3
        elif kind == "tool_use":
            events += len(json.dumps(block["input"])) // reply.json_chunk + 2
        else:
            events += 2
    return events * reply.delay_between_events


def make_plan(seed: int) -> Plan:
    from tests.fake_api import Reply, new_tool_use_id

    rng = random.Random(seed)
    plan = Plan(seed=seed, scenario=rng.choice(SCENARIOS), fg=new_marker(), bg=new_marker())
    fg = plan.fg

    def bash(command: str, expect: str | None = None, **extra: Any) -> tuple[str, dict, str]:
        tid = new_tool_use_id()
        if expect is not None:
            plan.expect[tid] = expect
        return ("bash", {"command": command, **extra}, tid)

    def read(k: int) -> tuple[str, dict, str]:
        tid = new_tool_use_id()
        name = f"f{k}.txt"
        plan.files[name] = f"CONTENT-{k}-{fg}\n"
        plan.expect[tid] = f"CONTENT-{k}-{fg}"
        return ("read_file", {"path": name}, tid)

    def echo(k: int, sleep: float = 0.0) -> str:
        pre = f"sleep {sleep:.2f}; " if sleep else ""
        return f"{pre}echo OUT-{k}-{fg}"

    done = Reply.text("Done.", chunk=2)
    if plan.scenario == "text":
        chunk, delay = rng.randint(2, 8), rng.uniform(0.002, 0.01)
        text = "The answer streams in small pieces while you watch. " * 4
        plan.replies = [Reply.slow_text(text, chunk=chunk, delay=delay)]
        plan.span = len(text) / chunk * delay
    elif plan.scenario == "tool_args":
        delay = rng.uniform(0.003, 0.01)
        call = bash(echo(0, rng.choice([0.0, 0.1])) + " # " + "padding " * 6, f"OUT-0-{fg}")
        plan.replies = [Reply.tool_uses([call], text_before="Let me run it.", json_chunk=3,
                                        delay_between_events=delay), done]
        plan.span = 40 * delay + 0.15
    elif plan.scenario == "batch":
        calls = [read(0), read(1), bash(echo(2, rng.uniform(0.05, 0.3)), f"OUT-2-{fg}"), read(3)]
        if rng.random() < 0.5:
            calls.append(bash(echo(4), f"OUT-4-{fg}"))
        plan.replies = [Reply.tool_uses(calls, delay_between_events=0.002), done]
        plan.span = 0.4
    elif plan.scenario == "permission":
        plan.ask = True
        calls = [read(0), bash(echo(1, rng.choice([0.0, 0.1])), f"OUT-1-{fg}")]
        plan.replies = [Reply.tool_uses(calls), done]
        plan.span = 0.4
        if rng.random() < 0.6:
            plan.decision = rng.choice([Decision.ALLOW_ONCE, Decision.DENY])
            plan.decide_at = rng.uniform(0.0, 0.3)
    elif plan.scenario == "backoff":
        wait = rng.uniform(0.05, 0.3)
        plan.replies = [Reply.error(529, "overloaded_error", retry_after=round(wait, 3)),
                        Reply.slow_text("Recovered after the retry.", chunk=3, delay=0.005)]
        plan.span = wait + 0.1
    elif plan.scenario == "steer":
        call = bash(echo(0, rng.uniform(0.1, 0.3)), f"OUT-0-{fg}")
        plan.replies = [Reply.tool_uses([call]), done]  # later requests get the default reply
        plan.span = 0.4
        plan.steer_at = rng.uniform(0.0, 0.4)
    elif plan.scenario == "background":
        calls = [
            bash(f"exec -a {plan.bg}-job sleep 30", run_in_background=True),
            bash(echo(1, rng.uniform(0.05, 0.2)), f"OUT-1-{fg}"),
        ]
        plan.replies = [Reply.tool_uses(calls), done]
        plan.span = 0.3
    elif plan.scenario == "thinking":
        plan.thinking = rng.choice(["adaptive", "2048"])
        kw: dict[str, Any] = {"chunk": rng.randint(3, 8),
                              "delay_between_events": rng.uniform(0.002, 0.006)}
        sleep = rng.choice([0.0, 0.1])
        plan.replies = [
            Reply.thinking("I should read the file before running anything. " * 2,
                           "Reading it first.", tool_uses=[read(0)], **kw),
            Reply.thinking("The file is there; now the command. " * 2,
                           redacted=rng.randint(0, 1),
                           tool_uses=[bash(echo(1, sleep), f"OUT-1-{fg}")], **kw),
            Reply.thinking("Both went well.", "All done.", redacted=rng.randint(0, 1), **kw),
        ]
        plan.span = sum(_stream_s(r) for r in plan.replies) + sleep + 0.1
    elif plan.scenario == "thinking_cut":
        plan.thinking = rng.choice(["adaptive", "2048"])
        plan.may_fail = True
        chunk, delay = rng.randint(3, 8), rng.uniform(0.002, 0.006)
        then = rng.choice(["close", "error", "finish"])  # finish: signed late, nothing after
        stall = rng.choice([rng.uniform(0.05, 0.3), 30.0])
        cut = Reply.half_thinking("Halfway through a thought that never gets signed. " * 2,
                                  seconds=stall, then=then, chunk=chunk,
                                  delay_between_events=delay)
        cut.delay_between_events = delay  # the error variant too streams slowly
        plan.replies = [cut]
        if rng.random() < 0.5:  # cut in the tool loop's second step, not its first
            plan.replies.insert(0, Reply.thinking(
                "A look at the file first. " * 2, tool_uses=[read(0)], redacted=rng.randint(0, 1),
                chunk=chunk, delay_between_events=delay))
        plan.span = (sum(_stream_s(r) for r in plan.replies)
                     + (stall if then != "error" and stall < 1 else 0.2))
    # Esc: anywhere from before the first byte to a little after the turn would end.
    plan.interrupt_at = rng.uniform(0.0, plan.span * 1.2)
    plan.interrupt_op = rng.random() < 0.3
    if rng.random() < 0.4:
        plan.second_after = rng.uniform(0.0, 0.15)
    return plan


# ----------------------------------------------------------------------------- a trial


async def _until(pred: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.005)
    return True


async def _idle(session: Session, timeout: float) -> bool:
    try:
        await asyncio.wait_for(session.wait_idle(), timeout)
        return True
    except asyncio.TimeoutError:
        return False


async def run_trial(srv: Any, seed: int) -> Outcome:
    from agent_tui.providers.anthropic import AnthropicProvider
    from tests.fake_api import Reply

    started = time.monotonic()
    plan = make_plan(seed)
    failures: list[str] = []
    workspace = Path(tempfile.mkdtemp(prefix="atui-chaos-"))
    for name, text in plan.files.items():
        (workspace / name).write_text(text)
    srv.clear_queue()
    rej0, err0, req0 = len(srv.rejections), len(srv.errors), len(srv.requests)
    srv.enqueue(*plan.replies)

    events = Stamped()
    journal = Journal()
    jobs = BackgroundJobs(limits=RunLimits(grace_s=GRACE_S))
    deps = SessionDeps(
        config=AgentConfig(workspace=workspace, model="claude-chaos",
                           cleanup_budget=CLEANUP_BUDGET_S, retry_base=0.05,
                           thinking=parse_thinking(plan.thinking)),
        provider=AnthropicProvider(api_key="chaos-key", base_url=srv.url),
        tools=ToolSet([ReadFileTool(), BashTool(jobs=jobs, grace=GRACE_S)]),
        policy=AskForBash() if plan.ask else AllowAll(),
        journal=journal,
        emit=events,
    )
    session = Session(deps, background=[jobs])
    task = asyncio.create_task(session.run())
    closed = False
    status = ""
    esc_after = ""  # the kind of the last event before Esc (thinking_delta: mid-thinking)
    try:
        t_start = time.monotonic()
        session.submit(UserMessage(text="Please do the task."))
        actions: list[tuple[float, str]] = [(plan.interrupt_at, "esc")]
        if plan.second_after is not None:
            actions.append((plan.interrupt_at + plan.second_after, "esc2"))
        if plan.steer_at is not None:
            actions.append((plan.steer_at, "steer"))
        if plan.decide_at is not None:
            actions.append((plan.decide_at, "decide"))
        t_esc = None
        for at, what in sorted(actions):
            await asyncio.sleep(max(0.0, t_start + at - time.monotonic()))
            if what == "esc":
                t_esc = time.monotonic()
                if plan.interrupt_op:
                    session.submit(Interrupt())
                else:
                    session.interrupt_now()
            elif what == "esc2":
                session.interrupt_now()
            elif what == "steer":
                session.submit(UserMessage(text="Also check the tests, please."))
            elif what == "decide":
                asked = events.of("permission_requested")
                if asked:
                    _, request = asked[0]
                    session.submit(Decide(tool_use_id=request.tool_use_id, decision=plan.decision))
        if not await _idle(session, 15):
            failures.append(f"the session did not become idle within 15 s; "
                            f"{_diagnose(session, task)}; events: {_summary(events)}")
            return Outcome(seed, plan.describe(), failures, time.monotonic() - started, status)

        # The first turn: ended within its bound after Esc.
        ended = events.of("turn_ended")
        if not ended:
            failures.append("no turn_ended")
        else:
            t_end, first = ended[0]
            status = first.status
            esc_after = esc_landed_after(events, t_esc)
            if first.status == "failed" and not plan.may_fail:
                failures.append(f"turn failed: {first.detail}")
            if t_esc is not None and t_esc < t_end and t_end - t_esc > TURN_BOUND_S:
                failures.append(f"turn ended {t_end - t_esc:.2f} s after Esc (bound "
                                f"{TURN_BOUND_S} s)")
            if t_esc is not None and t_esc < t_end and first.status != "cancelled":
                # Esc can race the turn's own end, which then wins; note it, it is legal.
                pass
        # Foreground processes: none once the calls the turn ended without have stopped
        # (the turn ends at once; a TERM-ignoring command stops within its grace).
        try:
            await asyncio.wait_for(session.deps.stopping.settled(), TURN_BOUND_S)
        except TimeoutError:
            failures.append(f"calls still stopping {TURN_BOUND_S} s after the turn ended")
        left = procs_with(plan.fg)
        if left:
            failures.append(f"residue after the turn ended: {[' '.join(p.cmdline()) for p in left]}")
        # Journal: every intent has its result.
        records = journal.records
        results = {r.tool_use_id: r for r in records if isinstance(r, ToolResultRecord)}
        for intent in (r for r in records if isinstance(r, ToolIntentRecord)):
            if intent.tool_use_id not in results:
                failures.append(f"tool_intent {intent.tool_use_id} ({intent.name}) has no "
                                "tool_result record")
        # Steers: applied or returned, never dropped.
        failures += steer_failures(events)
        try:
            check_model_view(model_view(records))
        except Exception as exc:
            failures.append(f"model view: {exc}")

        # A second turn must be accepted by the strict server.
        srv.clear_queue()
        before = len(srv.requests)
        srv.enqueue(Reply.text("all good"))
        turns = len(events.of("turn_ended"))
        session.submit(UserMessage(text="carry on"))
        if not await _idle(session, 10):
            failures.append("second turn: the session did not become idle within 10 s")
        elif len(events.of("turn_ended")) <= turns:
            failures.append("second turn: no turn_ended")
        else:
            last = events.of("turn_ended")[-1][1]
            if last.status != "completed":
                failures.append(f"second turn {last.status}: {last.detail}")
        rejections = srv.rejections[rej0:]
        if rejections:
            failures.append(f"the server rejected: {rejections}")
        # Finished tools kept their real result in what the model sees.
        requests = srv.requests
        if len(requests) > before and requests[before]:
            failures += result_failures(plan.expect, records, requests[before])
        failures += steer_failures(events)
        failures += thinking_failures(records, srv.requests[req0:])
        errors = srv.errors[err0:]
        if errors:
            failures.append(f"fake server errors: {errors}")

        session.submit(Shutdown())
        try:
            await asyncio.wait_for(task, 15)
            closed = True
        except asyncio.TimeoutError:
            failures.append("shutdown took over 15 s")
        left = procs_with(plan.fg) + procs_with(plan.bg)
        if left:
            failures.append(f"residue after shutdown: {[' '.join(p.cmdline()) for p in left]}")
    except Exception:
        failures.append(f"trial crashed: {traceback.format_exc()}")
    finally:
        if not closed:
            session.submit(Shutdown())
            try:
                await asyncio.wait_for(task, 15)
            except Exception:
                task.cancel()
        kill_marked(plan.fg)
        kill_marked(plan.bg)
    return Outcome(seed, plan.describe(), failures, time.monotonic() - started, status,
                   where=esc_after)


def _diagnose(session: Session, task: asyncio.Task[None]) -> str:
    import threading

    state = f"session task done={task.done()}"
    if task.done() and not task.cancelled() and task.exception() is not None:
        state += f" raised {task.exception()!r}"
    turn = session._turn
    return (f"{state}, turn={getattr(turn, 'id', None)} "
            f"state={getattr(turn, 'state', None)}, unhandled={session._unhandled}, "
            f"threads={threading.active_count()}")


def _summary(events: Stamped) -> list[str]:
    out = []
    for _, e in events.events:
        if e.type in ("text_delta", "tool_output"):
            continue
        bits = [e.type] + [str(getattr(e, f)) for f in ("name", "state", "status")
                           if getattr(e, f, None)]
        out.append(":".join(bits))
    return out


# ----------------------------------------------------------------------------- main


async def run_trials(seeds: list[int]) -> list[Outcome]:
    """Trials one after another on one fake server of their own (no parallelism)."""
    from tests.fake_api import FakeAnthropicServer

    with FakeAnthropicServer() as srv:
        return [await run_trial(srv, seed) for seed in seeds]
