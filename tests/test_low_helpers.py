"""The low helpers every layer stands on: the atomic file write and the byte formatter."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent_tui.atomic import link_atomic, write_atomic
from agent_tui.units import format_bytes


def _leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".agent-tui.")]


def test_write_atomic_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"old")

    write_atomic(tmp_path, "f", b"new" * 100_000)

    assert (tmp_path / "f").read_bytes() == b"new" * 100_000
    assert _leftovers(tmp_path) == []


def test_a_failed_write_keeps_the_old_content_and_cleans_up(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"old")

    with pytest.raises(TypeError):
        write_atomic(tmp_path, "f", "not bytes")  # type: ignore[arg-type]

    assert (tmp_path / "f").read_bytes() == b"old"
    assert _leftovers(tmp_path) == []


def test_a_symlink_at_the_target_is_replaced_never_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_bytes(b"precious")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "f").symlink_to(outside)

    write_atomic(folder, "f", b"new")

    assert outside.read_bytes() == b"precious"
    assert not (folder / "f").is_symlink() and (folder / "f").read_bytes() == b"new"


def test_a_folder_descriptor_holds_even_when_the_folder_is_swapped_for_a_link(
    tmp_path: Path,
) -> None:
    folder, elsewhere = tmp_path / "folder", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        moved = tmp_path / "moved"
        folder.rename(moved)
        folder.symlink_to(elsewhere)

        write_atomic(fd, "f", b"data")
    finally:
        os.close(fd)

    assert (moved / "f").read_bytes() == b"data"
    assert list(elsewhere.iterdir()) == []


def test_modes_new_files_get_the_umask_and_exact_mode_keeps_old_bits(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path, "new", b"x", mode=0o666)
        write_atomic(tmp_path, "kept", b"x", mode=0o751, exact_mode=True)
    finally:
        os.umask(old)

    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "kept").stat().st_mode) == 0o751
    write_atomic(tmp_path, "private", b"x")
    assert stat.S_IMODE((tmp_path / "private").stat().st_mode) & 0o077 == 0


def test_link_atomic_replaces_a_file_with_a_link(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"old")

    link_atomic(tmp_path, "f", "target/elsewhere")

    assert os.readlink(tmp_path / "f") == "target/elsewhere"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("n", "shown"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (2 << 20, "2 MiB"),
        (512 << 20, "512 MiB"),
        (int(3.25 * (1 << 30)), "3.2 GiB"),
    ],
)
def test_format_bytes_uses_binary_units_and_drops_a_whole_decimal(n: int, shown: str) -> None:
    assert format_bytes(n) == shown
