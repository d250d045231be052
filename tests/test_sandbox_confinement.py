"""What the sandbox keeps in, checked with bubblewrap itself: root inside cannot
remount the read-only file system, the host's sockets under /run are out of reach,
and the agent's own guard files are read-only even in the writable workspace. Each
check runs as root and again as an unprivileged user (root can hide a confinement bug
an ordinary user would meet, and the other way round)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox_support import needs_bwrap, sandbox_policy

pytestmark = needs_bwrap

SCRIPT = """
mount -o remount,rw / 2>/dev/null && echo REMOUNTED
ls -A /run | head -1 | grep -q . && echo RUN-VISIBLE
python3 - "$1" <<'PY' && echo SOCKET-REACHED
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
PY
echo x > sub/.claude/settings.local.json 2>/dev/null && echo GUARD-WRITTEN
echo x > lib/.git/hooks/pre-commit 2>/dev/null && echo HOOK-WRITTEN
echo x > .mcp.json 2>/dev/null && echo MCP-WRITTEN
echo x > notes.txt && echo WORKSPACE-WRITTEN
"""


def _users() -> list[str]:
    users = ["root"] if os.geteuid() == 0 else [""]
    if os.geteuid() == 0 and shutil.which("su"):
        users.append("nobody")
    return users


@pytest.fixture
def workspace() -> Iterator[Path]:
    # a folder an unprivileged user may use too (pytest's own is the owner's only)
    folder = Path(tempfile.mkdtemp(prefix="agent-tui-confine-"))
    os.chmod(folder, 0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def host_socket() -> Iterator[str]:
    """A listening Unix socket of the host under /run (a daemon's, say Docker's)."""
    run = Path("/run")
    if not os.access(run, os.W_OK):
        pytest.skip("cannot make a socket under /run here (not root)")
    path = run / f"agent-tui-test-{uuid.uuid4().hex[:8]}.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    os.chmod(path, 0o777)
    server.listen(1)
    try:
        yield str(path)
    finally:
        server.close()
        path.unlink(missing_ok=True)


@pytest.mark.parametrize("user", _users())
def test_root_cannot_remount_and_host_sockets_and_guard_files_are_out_of_reach(
        workspace: Path, host_socket: str, user: str) -> None:
    for folder in ("sub/.claude", "lib/.git/hooks"):
        (workspace / folder).mkdir(parents=True)
    for name in ("sub/.claude/settings.local.json", "lib/.git/hooks/pre-commit", ".mcp.json"):
        (workspace / name).write_text("{}")
    for path in workspace.rglob("*"):
        os.chmod(path, 0o777 if path.is_dir() else 0o666)
    argv = sandbox_policy(workspace).wrap(["sh", "-c", SCRIPT, "sh", host_socket], workspace)
    if user == "nobody":
        argv = ["su", "nobody", "-s", "/bin/sh", "-c", " ".join(map(_quote, argv))]
    done = subprocess.run(argv, cwd=workspace, capture_output=True, text=True, timeout=60)
    said = done.stdout.split()
    assert "WORKSPACE-WRITTEN" in said, done.stderr  # the sandbox ran, the workspace writes
    for escaped in ("REMOUNTED", "RUN-VISIBLE", "SOCKET-REACHED", "GUARD-WRITTEN",
                    "HOOK-WRITTEN", "MCP-WRITTEN"):
        assert escaped not in said, (user, done.stdout, done.stderr)
    assert (workspace / ".mcp.json").read_text() == "{}"


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)
