"""Log records and Python's warnings go where the entry point says: the TUI's to a file
in the state folder (stderr would land on its screen), the ACP agent's to stderr;
``AGENT_TUI_LOG_FILE`` and ``AGENT_TUI_LOG`` choose for both."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

EMIT = textwrap.dedent('''
    import logging, sys, warnings
    from pathlib import Path
    from agent_tui.log_setup import setup_logging
    default = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    print(setup_logging(default))
    logging.getLogger("mcp.client").warning("a library's warning")
    logging.getLogger("agent_tui").info("an info line")
    warnings.warn("a deprecation, say")
''')


def run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TUI_LOG")}
    return subprocess.run([sys.executable, "-c", EMIT, *args], capture_output=True, text=True,
                          env={**environ, **env}, timeout=60, check=True)


def test_the_tui_s_default_file_takes_warnings_and_nothing_reaches_stderr(tmp_path: Path) -> None:
    target = tmp_path / "state" / "agent-tui.log"
    out = run(tmp_path, str(target))
    assert out.stderr == ""
    assert out.stdout.strip() == str(target)
    text = target.read_text()
    assert "WARNING mcp.client: a library's warning" in text
    assert "a deprecation, say" in text
    assert "an info line" not in text  # WARNING by default
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700


def test_an_explicit_file_and_level_win(tmp_path: Path) -> None:
    chosen = tmp_path / "mine.log"
    out = run(tmp_path, str(tmp_path / "unused.log"), AGENT_TUI_LOG_FILE=str(chosen),
              AGENT_TUI_LOG="info")
    assert out.stderr == ""
    assert "an info line" in chosen.read_text()
    assert not (tmp_path / "unused.log").exists()


def test_without_a_file_records_go_to_stderr(tmp_path: Path) -> None:
    out = run(tmp_path)
    assert "a library's warning" in out.stderr
    assert out.stdout.strip() == "None"


def test_a_place_that_cannot_be_written_is_no_crash(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = run(tmp_path, str(blocker / "sub" / "agent-tui.log"))
    assert out.stdout.strip() == "None"
    assert out.stderr == ""
