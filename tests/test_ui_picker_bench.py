"""The picker's bench figure is measured (one run on a small tree). No thresholds:
wall-clock figures belong to ``make bench``, not to tests."""

from __future__ import annotations

from bench import picker


def test_the_picker_is_timed_beside_ripgrep_alone() -> None:
    result = picker.measure(1, files=500)
    assert len(result["open_ms"]) == 1 and len(result["query_ms"]) == 1 and len(result["ref_ms"]) == 1
    assert result["listed"] == 500 + 1  # the files and the .gitignore; ignored/ left out
