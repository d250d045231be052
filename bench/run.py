"""``make bench``: every figure beside its reference, one table, JSON under results/.

    python -m bench.run [--quick] [--runs N] [--only AREA[,AREA...]]

Areas: interrupts, stream, startup, print, terminal, keys, memory, session, cache, picker, providers,
rules. ``--quick`` takes 3 runs a figure, leaves out the 5,000-message transcript (about a
minute on its own) and runs the long session for 300 turns instead of 2,000.
Progress goes to stderr; the table to stdout, last.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from bench.stats import (
    Figure,
    all_zero,
    median_at_most,
    ratio_at_most,
    table,
    worst_at_most,
    write_json,
)

AREAS = ("interrupts", "esc_key", "stream", "startup", "print", "terminal", "keys", "memory", "session",
         "cache", "picker", "providers", "rules")
TREE_TITLES = {
    "term_exits": "tree that exits on TERM",
    "term_ignored": "tree that ignores TERM",
    "setsid_escape": "tree with a setsid escapee",
}


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def interrupt_figures(runs: int) -> list[Figure]:
    from agent_tui.runtime.process import ContainmentMode, containment
    from agent_tui.runtime.process.cgroup_tree import set_enabled
    from bench.interrupts import BENCH_GRACE_S, TreeBench, tree_reference_ms, workspace
    from bench.procs import TREES

    ref = "killpg(SIGKILL)+reap"
    gone: dict[str, Figure] = {}
    sweep: dict[str, Figure] = {}
    ended: dict[str, Figure] = {}
    contained = containment()
    for kind in TREES:
        limit = 100.0 + (BENCH_GRACE_S * 1000 if kind == "term_ignored" else 0.0)
        gone[kind] = Figure(
            f"gone_{kind}", f"Esc -> all processes gone, {TREE_TITLES[kind]}", "ms",
            ref_title=ref, target=f"median <= {limit:g} ms", check=median_at_most(limit),
        )
        sweep[kind] = Figure(
            f"gone_{kind}_no_cgroup", "  the same without cgroups (groups, tags, sweep)",
            "ms", ref_title=ref, target=f"median <= {limit:g} ms", check=median_at_most(limit),
        )
        ended[kind] = Figure(
            f"ended_{kind}", f"Esc -> turn_ended, {TREE_TITLES[kind]}", "ms", ref_title=ref,
        )
        if contained.mode is not ContainmentMode.CGROUP:
            gone[kind].notes.append(f"no cgroups here ({contained.detail}): both rows sweep")
    residue = Figure("residue", "residue after turn_ended (marked processes)", "count",
                     target="0 in every run", check=all_zero)
    gone["term_ignored"].notes.append(f"grace (SIGTERM -> SIGKILL) is {BENCH_GRACE_S} s here")
    bench = TreeBench(workspace())
    try:
        for i in range(runs):
            for kind in TREES:
                for figure, with_cgroups in ((gone[kind], True), (sweep[kind], False)):
                    set_enabled(with_cgroups)
                    result = bench.run(kind)
                    if result["gone_ms"] is not None:
                        figure.samples.append(result["gone_ms"])
                    else:
                        figure.notes.append(f"run {i}: processes still there after the wait")
                    if with_cgroups and result["ended_ms"] is not None:
                        ended[kind].samples.append(result["ended_ms"])
                    residue.samples.append(result["residue"])
                reference = tree_reference_ms(kind)
                for figure in (gone[kind], sweep[kind], ended[kind]):
                    figure.ref_samples.append(reference)
            log(f"interrupts: run {i + 1}/{runs}")
    finally:
        set_enabled(True)
        bench.close()
    figures = [f for kind in TREES for f in (gone[kind], sweep[kind])]
    return [*figures, *ended.values(), residue]


def esc_key_figures(runs: int) -> list[Figure]:
    from bench.esc_key import esc_samples

    got = esc_samples(runs)
    ref = "Textual's wait (ESCDELAY=100)"
    close = Figure("esc_key_close", "Esc key (pty) -> server sees the stalled stream closed",
                   "ms", got["close"], ref, got["close_ref"], target="median <= 30 ms",
                   check=median_at_most(30.0))
    shown = Figure("esc_key_shown", "Esc key (pty) -> first stop line on screen", "ms",
                   got["shown"], ref, got["shown_ref"], target="median <= 50 ms",
                   check=median_at_most(50.0))
    return [close, shown]


def stream_figures(runs: int) -> list[Figure]:
    from bench.interrupts import ApiBench, backoff_reference_ms, workspace
    from bench.stop_hops import HopClock, cancelled_read_reference_ms, thread_hop_reference_ms

    close = Figure("stream_close", "Esc in a stalled stream -> server sees the close", "ms",
                   ref_title="raw client closes", target="median <= 100 ms",
                   check=median_at_most(100.0))
    stream_end = Figure("stream_ended", "Esc in a stalled stream -> turn_ended", "ms",
                        ref_title="raw client closes")
    backoff = Figure("backoff_ended", "Esc in a retry back-off (529, 30 s) -> turn_ended", "ms",
                     ref_title="cancel a sleeping task", target="median <= 100 ms",
                     check=median_at_most(100.0))
    hops = hop_figures()
    bench = ApiBench(workspace())
    try:
        with HopClock(bench.srv.port).installed() as clock:
            for i in range(runs):
                result = bench.stalled_stream()
                if result["close_ms"] is not None:
                    close.samples.append(result["close_ms"])
                stream_end.samples.append(result["ended_ms"])
                add_hops(hops, result, clock)
                reference = bench.stalled_stream_reference()
                close.ref_samples.append(reference)
                stream_end.ref_samples.append(reference)
                hops[0].ref_samples.append(cancelled_read_reference_ms(bench.srv, clock))
                hops[1].ref_samples.append(reference)
                hops[2].ref_samples.append(thread_hop_reference_ms())
                backoff.samples.append(bench.backoff())
                backoff.ref_samples.append(backoff_reference_ms())
        log(f"stream and back-off: {runs} runs")
    finally:
        bench.close()
    return [close, *hops, stream_end, backoff]


def hop_figures() -> list[Figure]:
    """The stalled-stream close, hop by hop (``bench/stop_hops.py``), each beside its floor."""
    return [Figure("stream_hop_socket", "  hop 1: Esc (another thread) -> the socket closed",
                   "ms", ref_title="cancelled asyncio read"),
            Figure("stream_hop_server", "  hop 2: the socket closed -> server sees the close", "ms",
                   ref_title="raw client closes"),
            Figure("stream_hop_sdk", "  Esc (another thread) -> the SDK stream's close", "ms",
                   ref_title="call_soon_threadsafe")]


def add_hops(hops: list[Figure], result: dict, clock: Any) -> None:
    """One stalled-stream run's hops (``clock``: its ``HopClock``)."""
    marks = clock.after(result["t0"])
    spans = [(result["t0"], marks["socket_closed"]), (marks["socket_closed"], result["closed"]),
             (result["t0"], marks["stream_closed"])]
    for figure, (start, end) in zip(hops, spans):
        if start is not None and end is not None:
            figure.samples.append((end - start) * 1000)


def startup_figures(runs: int) -> list[Figure]:
    from bench.startup import measure

    agent, bare = measure(runs)
    log(f"startup: {runs} runs of each")
    return [Figure("first_frame", "time to first frame (pty)", "ms", agent,
                   ref_title="bare Textual app", ref_samples=bare,
                   target="<= 1.3x reference", check=ratio_at_most(1.3))]


def print_figures(runs: int) -> list[Figure]:
    from bench.print_mode import measure

    got = measure(runs)
    log(f"print mode: {runs} runs of each")
    figure = Figure("print_turn", "`-p`, time per turn (a fresh process, one short answer)", "ms",
                    [round(v) for v in got.agent], ref_title="bare SDK script, one stream",
                    ref_samples=[round(v) for v in got.floor], target="<= 1.1x reference",
                    check=ratio_at_most(1.1))
    figure.notes.append("largest imports of one run: " + "; ".join(got.imports))
    lazy = Figure("print_turn_lazy_sdk", "  the same, beside the SDK loaded as agent-tui loads it",
                  "ms", [round(v) for v in got.agent],
                  ref_title="bare script through agent-tui's lazy SDK loader, one stream",
                  ref_samples=[round(v) for v in got.lazy_floor])
    lazy.notes.append("what agent-tui's own start-up and turn cost above any Python client of the SDK")
    return [figure, lazy]


def terminal_figures(runs: int) -> list[Figure]:
    from bench.terminal import DELAY_S, measure

    result = measure(runs)
    log(f"terminal: {runs} runs of each")
    rate = f"{4 / DELAY_S:,.0f} characters/s"
    rows = [
        ("idle_bps", "bytes/s to the terminal, idle after one exchange", "B/s", True),
        ("idle_cpu", "  CPU, idle after one exchange", "% core", True),
        ("stream_bps", f"bytes/s to the terminal, a reply streams ({rate})", "B/s", False),
        ("stream_cpu", "  CPU, a reply streams", "% core", False),
    ]
    out = []
    for key, title, unit, targeted in rows:
        figure = Figure(key, title, unit, [round(v, 1) for v in result[key]],
                        ref_title="bare Textual app",
                        ref_samples=[round(v, 1) for v in result[f"bare_{key}"]])
        if targeted:
            figure.target, figure.check = "<= 2x reference", ratio_at_most(2.0)
        out.append(figure)
    out[2].notes.append("the bare app streams the same text into Textual's Markdown widget")
    return out


def session_figures(turns: int) -> list[Figure]:
    from bench.session_cost import DAY_HOURS, OUTPUT_BYTES, TURNS, figures_from, measure

    result = measure(turns, log=log)
    fig = figures_from(result)
    cpu = Figure("turn_cpu", f"core CPU per turn at turn {fig['late_turn']:,} (a command, "
                 "an answer)", "ms", [round(v, 2) for v in fig["late"]],
                 ref_title="turn 10", ref_samples=[round(v, 2) for v in fig["early"]],
                 target="<= 1.5x reference", check=ratio_at_most(1.5))
    cpu.notes.append(f"{result['compactions']} compactions in {turns:,} turns; "
                     f"{result['failed_turns']} turns not completed; {result['seconds']} s")
    hours = DAY_HOURS * turns / TURNS
    slope = Figure("rss_slope", f"RSS growth after warm-up, {hours:g} h simulated "
                   f"({turns:,} turns, {turns * OUTPUT_BYTES / 1e6:,.0f} MB of output)", "MB/h",
                   [round(fig["slope"], 2)], target="< 5 MB/h", check=median_at_most(5.0))
    slope.notes.append("RSS every 20 turns (MB): " + ", ".join(
        f"{mb:.0f}" for _, mb in result["rss"][:: max(1, len(result["rss"]) // 10)]))
    return [cpu, slope]


def key_figures(runs: int) -> list[Figure]:
    from bench.interrupts import workspace
    from bench.keys import keys_command_flood, keys_long_session, keys_streaming

    # A keystroke is cheap and its time noisy (frame slots, the other thread): many
    # samples a figure, whatever ``runs`` says.
    samples = max(30, 4 * runs)
    stream = asyncio.run(keys_streaming(samples, workspace()))
    log(f"keys while streaming: {len(stream['loaded_ms'])} samples, "
        f"{stream['rate']:.0f} deltas/s")
    command = asyncio.run(keys_command_flood(samples, workspace()))
    log(f"keys while a command prints 100 MB: {len(command['loaded_ms'])} samples")
    long = asyncio.run(keys_long_session(samples, workspace()))
    log(f"keys while streaming below 5,000 messages: {len(long['loaded_ms'])} samples")
    f1 = Figure("key_streaming", "key -> screen, model streams 10k deltas/s", "ms",
                stream["loaded_ms"], ref_title="idle", ref_samples=stream["idle_ms"],
                target="<= 2x reference", check=ratio_at_most(2.0))
    f1.notes.append(f"achieved {stream['rate']:.0f} deltas/s")
    f2 = Figure("key_command", "key -> screen, command prints 100 MB", "ms",
                command["loaded_ms"], ref_title="idle", ref_samples=command["idle_ms"],
                target="<= 2x reference", check=ratio_at_most(2.0))
    f3 = Figure("key_long_session", "key -> screen, 5,000 messages above a 10k deltas/s stream",
                "ms", long["loaded_ms"], ref_title="idle, empty", ref_samples=long["idle_ms"],
                target="<= 2x reference", check=ratio_at_most(2.0))
    f3.notes.append(f"achieved {long['rate']:.0f} deltas/s; {long['blocks']} transcript entries")
    return [f1, f2, f3]


def memory_figures(runs: int, transcript_runs: int) -> list[Figure]:
    from bench.memory import measure

    flood = Figure("mem_flood", "peak memory growth, command prints 1 GB", "MB",
                   ref_title="idle app", target="worst < 64 MB", check=worst_at_most(64.0))
    transcript = Figure("mem_transcript", "peak memory growth, 5,000-message transcript",
                        "MB", ref_title="idle app", target="worst < 64 MB",
                        check=worst_at_most(64.0))
    for i in range(runs):
        idle = measure("idle")["growth_mb"]
        flood.ref_samples.append(idle)
        transcript.ref_samples.append(idle)
        flood.samples.append(measure("flood")["growth_mb"])
        log(f"memory: flood run {i + 1}/{runs}")
    if not transcript_runs:
        transcript.skipped = True
        transcript.notes.append("not measured with --quick")
    for i in range(transcript_runs):
        result = measure("transcript")
        transcript.samples.append(result["growth_mb"])
        transcript.notes.append(f"run {i}: {result['seconds']} s to render every message")
        log(f"memory: transcript run {i + 1}/{transcript_runs} ({result['seconds']} s)")
    return [flood, transcript]


def cache_figures(runs: int) -> list[Figure]:
    from bench.cache import TURNS, measure

    share = Figure("cache_read_share", f"input read from the prompt cache, {TURNS}-turn session",
                   "%", ref_title="the same session uncached", target="median >= 85 %",
                   check=lambda f: f.median is not None and f.median >= 85)
    per_turn = Figure("input_per_turn", "  input tokens per turn (cached or not)", "tokens",
                      ref_title="uncached")
    compact = Figure("compaction_ms", "  compaction of that session (the API answers at once)",
                     "ms", ref_title="uncached")
    for _ in range(max(1, min(runs, 3))):
        cached, plain = measure(True), measure(False)
        share.samples.append(round(cached["share"] * 100, 1))
        share.ref_samples.append(round(plain["share"] * 100, 1))
        per_turn.samples.append(round(cached["per_turn"]))
        per_turn.ref_samples.append(round(plain["per_turn"]))
        compact.samples.append(round(cached["compaction_ms"], 1))
        compact.ref_samples.append(round(plain["compaction_ms"], 1))
        if cached["rejections"] or plain["rejections"]:
            share.notes.append("the fake API rejected a request")
    share.notes.append("one turn interrupted mid-stream; the fake caches as the API documents")
    return [share, per_turn, compact]


def picker_figures(runs: int) -> list[Figure]:
    from bench.picker import FILES, measure

    result = measure(runs)
    log(f"picker: {runs} runs on {result['listed']} files")
    opened = Figure("picker_open", f"@ -> first results, {FILES:,} files", "ms", result["open_ms"],
                    ref_title="rg --files, 50 paths", ref_samples=result["ref_ms"],
                    target="median <= 100 ms", check=median_at_most(100.0))
    query = Figure("picker_query", f"query typed -> ranked results, {FILES:,} files listed", "ms",
                   result["query_ms"])
    return [opened, query]


def provider_figures(runs: int) -> list[Figure]:
    """The same session on each wire format: cache share, cost, Esc latency."""
    from bench.provider_kinds import KINDS, TURNS, measure

    figures: list[Figure] = []
    for kind in KINDS:
        share = Figure(f"{kind}_cache_share", f"{kind}: input read from the cache, "
                       f"{TURNS}-turn session", "%")
        cost = Figure(f"{kind}_cost", f"  {kind}: the session's cost at one price", "cents")
        esc = Figure(f"{kind}_esc", f"  {kind}: Esc in a stalled stream -> server sees the "
                     "close", "ms", target="median <= 100 ms", check=median_at_most(100.0))
        for _ in range(max(1, min(runs, 3))):
            result = measure(kind)
            share.samples.append(round(result["share"] * 100, 1))
            cost.samples.append(round(result["cost"] * 100, 2))
            if result["esc_ms"] is not None:
                esc.samples.append(round(result["esc_ms"], 2))
        log(f"providers: {kind}")
        figures += [share, cost, esc]
    return figures


#: A 200-character command of the kind a model sends: a pipeline, a list, quotes, a
#: substitution, a redirection and a wrapper.
RULES_COMMAND = ("cd src && timeout 60 npm run test -- --reporter=dot 2>&1 | tail -n 40; "
                 "git status --short | grep -v '^??' > /dev/null || echo \"changed: $(git diff "
                 "--stat | wc -l) files\"; ls -la build && cat pkg1.json")


def rules_figures(runs: int) -> list[Figure]:
    import shlex

    from agent_tui.permissions.read_only import is_read_only
    from agent_tui.permissions.shell_parse import parse_command

    parse = parse_command.__wrapped__  # not the cache: every call parses
    assert len(RULES_COMMAND) == 200
    parsed, split = Figure("rules_parse", "command judge: parse a 200-character command", "ms",
                           ref_title="shlex.split (no grammar)", target="median <= 1 ms",
                           check=median_at_most(1.0)), []
    for _ in range(runs):
        for _ in range(50):
            start = time.perf_counter()
            is_read_only(parse(RULES_COMMAND))
            parsed.samples.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            shlex.split(RULES_COMMAND)
            split.append((time.perf_counter() - start) * 1000)
    parsed.ref_samples = split
    log(f"rules: {len(parsed.samples)} parses")
    return [parsed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 runs a figure")
    parser.add_argument("--runs", type=int, default=None, help="runs a figure (default 7)")
    parser.add_argument("--only", default=",".join(AREAS), help="comma-separated areas")
    args = parser.parse_args(argv)
    runs = args.runs or (3 if args.quick else 7)
    areas = [a.strip() for a in args.only.split(",") if a.strip()]
    unknown = [a for a in areas if a not in AREAS]
    if unknown:
        parser.error(f"unknown area(s) {unknown}; choose from {AREAS}")
    steps: dict[str, Callable[[], list[Figure]]] = {
        "interrupts": lambda: interrupt_figures(runs),
        "esc_key": lambda: esc_key_figures(runs),
        "stream": lambda: stream_figures(runs),
        "startup": lambda: startup_figures(runs),
        "print": lambda: print_figures(runs),
        "terminal": lambda: terminal_figures(min(runs, 3)),
        "keys": lambda: key_figures(runs),
        "session": lambda: session_figures(300 if args.quick else 2_000),
        # The transcript takes about a minute a run (see docs/bench.md): once is
        # enough, and --quick leaves it out.
        "memory": lambda: memory_figures(min(runs, 3), 0 if args.quick else 1),
        "cache": lambda: cache_figures(runs),
        "picker": lambda: picker_figures(runs),
        "providers": lambda: provider_figures(runs),
        "rules": lambda: rules_figures(runs),
    }
    figures: list[Figure] = []
    failures: list[str] = []
    started = time.monotonic()
    for area in areas:
        log(f"{area}...")
        try:
            figures += steps[area]()
        except Exception:
            failures.append(f"{area}: {traceback.format_exc()}")
            log(f"{area} FAILED:\n{traceback.format_exc()}")
    elapsed = time.monotonic() - started
    path = write_json(figures, "bench", runs=runs, areas=areas, seconds=round(elapsed, 1),
                      failures=failures)
    for f in figures:
        for note in f.notes:
            print(f"note: {f.title}: {note}")
    print(f"bench: {runs} runs a figure, {elapsed:.0f} s; results in {path}")
    print(table(figures))
    missed = [f.title for f in figures if f.verdict == "MISS"]
    skipped = sum(1 for f in figures if f.verdict == "not run")
    print(f"{len(figures) - len(missed) - skipped} of {len(figures) - skipped} figures without a miss"
          + (f"; {len(failures)} area(s) failed to run" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
