"""The bench's measuring functions run (one run each, tiny sizes). No thresholds:
wall-clock figures belong to ``make bench``, not to tests."""

from __future__ import annotations

import asyncio
import sys

import pytest

from bench import interrupts, keys, memory, print_mode, startup, stop_hops
from bench.procs import TREES
from bench.stats import Figure, median_at_most, table


@pytest.mark.parametrize("kind", TREES)
def test_a_tree_interrupt_is_measured_with_its_reference(kind, tmp_path) -> None:
    bench = interrupts.TreeBench(tmp_path, grace=0.2)
    try:
        result = bench.run(kind)
    finally:
        bench.close()
    assert result["gone_ms"] is not None and result["ended_ms"] is not None
    assert result["residue"] == 0
    assert interrupts.tree_reference_ms(kind) >= 0


def test_stream_close_and_backoff_are_measured(tmp_path) -> None:
    bench = interrupts.ApiBench(tmp_path)
    try:
        stalled = bench.stalled_stream()
        assert stalled["close_ms"] is not None
        assert bench.stalled_stream_reference() >= 0
        assert bench.backoff() >= 0
        assert bench.srv.rejections == []
    finally:
        bench.close()
    assert interrupts.backoff_reference_ms() >= 0


def test_the_stalled_stream_close_is_split_into_hops(tmp_path) -> None:
    bench = interrupts.ApiBench(tmp_path)
    try:
        with stop_hops.HopClock(bench.srv.port).installed() as clock:
            stalled = bench.stalled_stream()
            marks = clock.after(stalled["t0"])
            floor = stop_hops.cancelled_read_reference_ms(bench.srv, clock)
        assert bench.srv.rejections == []
    finally:
        bench.close()
    t0, socket_closed, stream_closed = stalled["t0"], marks["socket_closed"], marks["stream_closed"]
    assert socket_closed is not None and stream_closed is not None
    # each mark lies between the Esc and the end it leads to
    assert t0 <= socket_closed <= stalled["closed"] and t0 <= stream_closed
    assert floor >= 0 and stop_hops.thread_hop_reference_ms() >= 0


def test_first_frame_is_seen_for_both_apps() -> None:
    assert startup.first_frame_s("bare") > 0
    assert startup.first_frame_s("agent") > 0


def test_a_print_turn_and_its_floor_are_timed_and_the_imports_listed() -> None:
    bench = print_mode.PrintBench()
    try:
        assert bench.turn_s([sys.executable, "-c", print_mode.FLOOR]) > 0
        assert bench.turn_s([sys.executable, "-c", print_mode.LAZY_FLOOR]) > 0
        imports = bench.imports()  # a turn of agent-tui -p, answered
    finally:
        bench.close()
    assert any(line.startswith("agent_tui.") and " ms (" in line for line in imports)


def test_keystrokes_are_timed_idle_and_under_load(tmp_path) -> None:
    streaming = asyncio.run(keys.keys_streaming(1, tmp_path))
    assert len(streaming["idle_ms"]) == 1
    command = asyncio.run(keys.keys_command_flood(1, tmp_path, size=50_000_000))
    assert len(command["idle_ms"]) == 1
    long = asyncio.run(keys.keys_long_session(1, tmp_path, messages=200))
    assert len(long["idle_ms"]) == 1 and long["blocks"] >= 200


@pytest.mark.parametrize(
    "scenario, kwargs",
    [("idle", {"idle_s": 0.1}), ("flood", {"flood_bytes": 5_000_000}),
     ("transcript", {"messages": 20})],
)
def test_memory_growth_is_measured_in_a_fresh_interpreter(scenario, kwargs) -> None:
    result = memory.measure(scenario, **kwargs)
    assert result["scenario"] == scenario
    assert "growth_mb" in result


def test_the_table_shows_each_figure_beside_its_reference() -> None:
    figure = Figure("x", "a figure", "ms", [1.0, 3.0, 2.0], ref_title="ref",
                    ref_samples=[1.0], target="median <= 2 ms", check=median_at_most(2.0))
    text = table([figure])
    assert "a figure" in text and "ref: 1.0 / 1.0 ms" in text and "PASS" in text
    assert figure.ratio == 2.0


def test_cache_share_is_measured_side_by_side_with_the_uncached_session() -> None:
    from bench import cache

    cached, plain = cache.measure(True, turns=6), cache.measure(False, turns=6)
    assert cached["rejections"] == plain["rejections"] == 0
    assert cached["share"] > 0.5 and plain["share"] == 0.0
    assert cached["compaction_ms"] > 0


def test_terminal_bytes_and_cpu_are_measured_for_both_apps(monkeypatch) -> None:
    from bench import terminal

    monkeypatch.setattr(terminal, "IDLE_S", 0.3)
    monkeypatch.setattr(terminal, "STREAM_S", 0.3)
    for which in ("agent", "bare"):
        result = terminal.run(which)
        assert result["stream_bps"] > 0, which  # the streamed answer reached the screen
        assert result["idle_bps"] >= 0 and result["idle_cpu"] >= 0


def test_a_long_session_compacts_and_its_cost_per_turn_is_kept() -> None:
    from bench import session_cost

    result = session_cost.measure(25)
    assert len(result["cpu_ms"]) == 25 and result["failed_turns"] == 0
    assert result["compactions"] >= 3  # the window fills every few turns
    assert [t for t, _ in result["rss"]] == [20]
    figures = session_cost.figures_from(result)
    assert len(figures["early"]) == 11 and figures["late_turn"] == 20


def test_the_same_session_is_measured_on_each_provider_kind() -> None:
    from bench.provider_kinds import KINDS, measure

    for kind in KINDS:
        result = measure(kind, turns=2)
        assert result["esc_ms"] is not None and result["cost"] > 0 and result["requests"] >= 2
