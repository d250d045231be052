"""``agent-tui`` leaves as a normal exit does (atexit hooks, flushed output, threads that
are not daemons waited for, its exit code), without freeing the heap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import atexit, sys, threading, time
from pathlib import Path
from agent_tui.cli.process_exit import leave

marks = Path(sys.argv[1])
atexit.register(lambda: marks.write_text(marks.read_text() + "atexit\\n"))
if sys.argv[2] == "thread":
    def late():
        time.sleep(0.3)
        marks.write_text(marks.read_text() + "thread\\n")
    threading.Thread(target=late).start()
sys.stdin.readline()
sys.stdout.write("x" * int(sys.argv[4]))  # no newline: the end is still in the buffer
leave(int(sys.argv[3]))
"""


def _run(tmp_path: Path, mode: str, code: int) -> tuple[subprocess.CompletedProcess[bytes], str]:
    marks = tmp_path / "marks"
    marks.write_text("")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(marks), mode, str(code), "1000000"],
                         input=b"go\n", capture_output=True, timeout=60)
    return out, marks.read_text()


def test_the_hooks_run_the_output_is_whole_and_the_code_is_kept(tmp_path: Path) -> None:
    out, marks = _run(tmp_path, "plain", 3)
    assert out.returncode == 3, out.stderr
    assert out.stdout == b"x" * 1_000_000
    assert marks == "atexit\n"
    assert out.stderr == b""


def test_a_thread_that_still_works_is_waited_for(tmp_path: Path) -> None:
    out, marks = _run(tmp_path, "thread", 0)
    assert out.returncode == 0, out.stderr
    assert marks == "thread\natexit\n"
    assert len(out.stdout) == 1_000_000

