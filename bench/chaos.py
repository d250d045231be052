"""``make chaos``: random interrupts and random crashes, checked against the strict fake API.

    python -m bench.chaos --trials N [--kind both|interrupt|crash] [--jobs J] [--seed S]
                          [--replay KIND:SEED ...] [-v]

Two kinds of trial, each drawn from its own seed (printed with any failure, saved to
``bench/results/chaos-failures.txt``; ``--replay`` runs exactly that trial again):

- **interrupt** (``chaos_interrupts``): a scenario in-process, Esc at a random moment;
- **crash** (``chaos_crash``): a scripted session as a real agent process, SIGKILLed
  at a random moment (mostly at a journal write, an fsync or a checkpoint's git
  command), then ``--continue`` and every invariant of a crash checked;
- **concurrent** (``chaos_concurrent``): two or three agent processes on one session
  at once (``--resume``, ``--continue``), some SIGKILLed: forks, locks and journals
  checked (``chaos_concurrent_checks``).

``--trials`` (in all, shared evenly among the kinds) run ``--jobs`` at a time
(``chaos_pool``). The last line printed is exactly ``N passed, M failed``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

from bench.chaos_outcome import Outcome
from bench.stats import RESULTS_DIR

FAILURES_FILE = RESULTS_DIR / "chaos-failures.txt"
KINDS = ("interrupt", "crash", "concurrent")


def trial_seeds(seed: int, trials: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(40) for _ in range(trials)]


def _save_failure(outcome: Outcome) -> None:
    FAILURES_FILE.parent.mkdir(parents=True, exist_ok=True)
    first = outcome.failures[0].splitlines()[0][:300]
    with FAILURES_FILE.open("a") as f:
        f.write(f"{outcome.kind}:{outcome.seed}\t{time.strftime('%Y-%m-%dT%H:%M:%S')}\t"
                f"{outcome.plan}\t{first}\n")


def _replay_item(text: str) -> tuple[str, int]:
    kind, _, seed = text.rpartition(":")
    if kind not in ("", *KINDS):
        raise argparse.ArgumentTypeError(f"not a trial: {text!r} (KIND:SEED or SEED)")
    return (kind or "interrupt", int(seed))


def _kind_summary(kind: str, outcomes: list[Outcome]) -> str:
    mine = [o for o in outcomes if o.kind == kind]
    if not mine:
        return ""
    ends: dict[str, int] = {}
    for o in mine:
        ends[o.status or "none"] = ends.get(o.status or "none", 0) + 1
    failed = sum(1 for o in mine if o.failures)
    if kind == "interrupt":
        counts: dict[str, int] = {}
        for o in mine:
            name = o.plan.split()[0].split("=")[1]
            counts[name] = counts.get(name, 0) + 1
        mid = sum(1 for o in mine if o.where == "thinking_delta")
        detail = ("scenarios: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                  + "; first turns: " + ", ".join(f"{v} {k}" for k, v in sorted(ends.items()))
                  + f"; Esc mid-thinking: {mid}")
    elif kind == "concurrent":
        forks = sum(int(o.status.split(", ")[1].split()[0]) for o in mine if "fork" in o.status)
        killed = sum(int(o.status.split(", ")[2].split()[0]) for o in mine if "killed" in o.status)
        three = sum(1 for o in mine if o.status.startswith("3 agents"))
        detail = f"{three} with three agents; {forks} forks; {killed} agents killed"
    else:
        full = [o.points for o in mine if o.status == "no kill"]
        detail = ("killed at: " + ", ".join(f"{k} {v}" for k, v in sorted(ends.items()))
                  + (f"; a whole session passes {max(full)} crash points" if full else ""))
    return f"chaos: {kind} {len(mine) - failed}/{len(mine)} passed; {detail}"


def main(argv: list[str] | None = None) -> int:
    from bench.chaos_pool import run_parallel

    parser = argparse.ArgumentParser(prog="python -m bench.chaos",
                                     description="random interrupts and crashes")
    parser.add_argument("--trials", type=int, default=500,
                        help="trials in all, shared evenly among the kinds")
    parser.add_argument("--kind", choices=("both", *KINDS), default="both")
    parser.add_argument("--jobs", type=int, default=(os.cpu_count() or 1) + 1,
                        help="trials at a time (default: CPUs + 1)")
    parser.add_argument("--seed", type=int, default=None,
                        help="master seed (default: random, printed)")
    parser.add_argument("--replay", type=_replay_item, nargs="+", metavar="KIND:SEED",
                        help="run exactly these trials (from chaos-failures.txt)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every trial")
    args = parser.parse_args(argv)
    kinds = KINDS if args.kind == "both" else (args.kind,)
    if args.replay:
        work = list(args.replay)
        print(f"chaos: replaying {len(work)} trial(s)", flush=True)
    else:
        seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
        count = -(-args.trials // len(kinds))  # each kind's share, rounded up
        per_kind = {kind: trial_seeds(seed + n, count) for n, kind in enumerate(KINDS)}
        work = [(kind, per_kind[kind][i]) for i in range(count) for kind in kinds]
        print(f"chaos: {len(work)} trials ({count} {' and '.join(kinds)}), seed {seed}, "
              f"{args.jobs} at a time (replay one with --replay KIND:SEED; failures are "
              f"saved to {FAILURES_FILE})", flush=True)
    started = time.monotonic()
    verbose = args.verbose or bool(args.replay)
    done = 0

    def report(outcome: Outcome) -> None:
        nonlocal done
        done += 1
        if outcome.failures:
            print(f"FAIL {outcome.kind} trial {done} seed {outcome.seed}: {outcome.plan}",
                  flush=True)
            for failure in outcome.failures:
                print(f"    {failure}", flush=True)
            if not args.replay:
                _save_failure(outcome)
        elif verbose:
            print(f"ok   {outcome.kind} trial {done} seed {outcome.seed} "
                  f"({outcome.seconds:.2f} s): {outcome.plan} [{outcome.status}]", flush=True)

    outcomes = run_parallel(work, max(1, args.jobs), report)
    failed = sum(1 for o in outcomes if o.failures)
    print(f"chaos: {time.monotonic() - started:.1f} s", flush=True)
    for kind in KINDS:
        line = _kind_summary(kind, outcomes)
        if line:
            print(line, flush=True)
    print(f"{len(outcomes) - failed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
