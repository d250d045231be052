"""One peer on a pseudo-terminal against its fake, measured as a person uses it: keys
written one by one, the screen read back (escape sequences and spaces taken out, so a
word drawn cell by cell is still found).

Figures of one session: the bytes a second written to an idle terminal; for each Esc in
a stalled stream, the ms until the fake sees the connection closed and until the peer's
own stop word is on screen; the processes of a shell tree still there 5 s after Esc.
Print mode is a separate process a turn (:func:`print_turns`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.peers_fake import ANSWER, PeerServer
from bench.peers_setup import AGENT_TUI, Peer, command, environment, print_command, write_config
from bench.procs import kill_marked, new_marker, procs_with
from bench.terminal import PtyApp

ESCAPES = re.compile(rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()*+].|\x1b[@-_]")
# What a terminal answers to the queries a TUI sends at start (opencode waits for them):
# the cursor's position, the device attributes, the colours, the window's size in pixels.
ANSWERS = {
    b"\x1b[6n": b"\x1b[1;1R",
    b"\x1b[c": b"\x1b[?62;22c",
    b"\x1b[0c": b"\x1b[?62;22c",
    b"\x1b]10;?": b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\",
    b"\x1b]11;?": b"\x1b]11;rgb:0000/0000/0000\x1b\\",
    b"\x1b[14t": b"\x1b[4;600;1000t",
}
IDLE_S = 5.0
LEFT_AFTER_S = 5.0


def flat(data: bytes) -> str:
    """What a screen shows of ``data``, lower case, with no spaces: words to look for."""
    text = ESCAPES.sub(b"", data).decode("utf-8", "replace").lower()
    return re.sub(r"\s+", "", text)


def tree_command(marker: str) -> str:
    """A plain child, a child that ignores TERM, a setsid child and a double-forked
    child, each a ``sleep`` whose argv[0] starts with ``marker``."""
    return (f"exec -a {marker}-plain sleep 1000 & "
            f"(trap '' TERM; exec -a {marker}-ignore sleep 1000) & "
            f"setsid -f bash -c 'exec -a {marker}-setsid sleep 1000'; "
            f"( (exec -a {marker}-double sleep 1000 &) & ); wait")


def tree_children(marker: str) -> int:
    """The tree's sleeps still running (the shells around them are not counted)."""
    count = 0
    for proc in procs_with(marker):
        try:
            if proc.cmdline()[0].startswith(marker + "-") and proc.status() != "zombie":
                count += 1
        except (IndexError, OSError, Exception):
            pass
    return count


class PeerTui(PtyApp):
    """The peer's TUI in a fresh workspace and home, its fake beside it."""

    def __init__(self, peer: Peer, cache: Path) -> None:
        self.peer = peer
        self.tmp = Path(tempfile.mkdtemp(prefix="atui-peers-"))
        self.workspace = self.tmp / "ws"
        self.workspace.mkdir()
        self.srv = PeerServer(peer.api, strict=peer is AGENT_TUI)
        home = self.tmp / "home"
        write_config(peer, home, self.workspace, self.srv.url)
        env = environment(peer, home, self.srv.url)
        env["SHELL"] = "/bin/bash"
        self.timed: list[tuple[float, bytes]] = []
        self.notes: list[str] = []
        self.argv = command(peer, cache, self.workspace)
        super().__init__(self.argv, env, cwd=self.workspace)

    def on_data(self, data: bytes) -> None:
        self.timed.append((time.monotonic(), data))
        for query, answer in ANSWERS.items():  # a terminal answers what it is asked
            if query in data:
                os.write(self.master, answer)

    def shown_since(self, t0: float, word: str) -> float | None:
        got = b""
        for t, d in list(self.timed):
            if t >= t0:
                got += d
                if word in flat(got[-20000:]):
                    return t
        return None

    def any_shown_since(self, t0: float, words: tuple[str, ...]) -> float | None:
        times = [t for w in words if (t := self.shown_since(t0, w)) is not None]
        return min(times) if times else None

    def wait(self, pred: Any, timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = pred()
            if value:
                return value
            if self.proc.poll() is not None or time.monotonic() > deadline:
                ended = "" if self.proc.poll() is None else f" (exit {self.proc.returncode})"
                log_screen(self.peer.name, self.screen()[-300:])
                raise RuntimeError(f"{what}{ended}")
            time.sleep(0.005)

    def screen(self) -> str:
        return flat(b"".join(d for _, d in self.timed[-200:]))

    def quiet(self, seconds: float, timeout: float) -> None:
        """Until nothing was written for ``seconds`` (or ``timeout`` passed)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            last = self.timed[-1][0] if self.timed else 0.0
            if time.monotonic() - last >= seconds:
                return
            time.sleep(0.05)

    def ready(self) -> None:
        """Up and answering: the first frame, then one short exchange on screen."""
        self.wait(lambda: self.timed, 60, "no output")
        if self.peer.ready_word:
            self.wait(lambda: self.peer.ready_word in self.screen(), 90, "no prompt")
        self.quiet(1.5, 30)
        self.srv.scene.set("text")
        typed = time.monotonic()
        self.type("hi")
        self.wait(lambda: self.shown_since(typed, flat(ANSWER.encode())), 60,
                  "no answer shown (is it pointed at the fake?)")
        self.quiet(1.0, 15)

    def idle_bps(self) -> float:
        time.sleep(1.0)
        return self.window(IDLE_S)[0]

    def esc(self) -> dict[str, float | None]:
        """One stalled stream, one Esc (a second one if the stream is still open after
        1.5 s): ms to the fake's close and to the first stop word on screen."""
        self.srv.scene.set("stall")
        before = len(self.srv.disconnects)
        asked = self.srv.requests
        self.type("think")
        # The stall begins when the request arrives; some peers show its first words only
        # when the block ends, so the screen is not waited for.
        self.wait(lambda: self.srv.requests > asked, 60, "the stalled request did not come")
        time.sleep(0.5)
        t0 = time.monotonic()
        os.write(self.master, b"\x1b")
        closed = self.srv.wait_disconnect(before + 1, 1.5)
        if closed is None:
            os.write(self.master, b"\x1b")
            closed = self.srv.wait_disconnect(before + 1, 10)
            self.notes.append("needs a 2nd Esc")
        try:
            shown = self.wait(lambda: self.any_shown_since(t0, self.peer.stop_words), 10,
                              "no stop line")
        except RuntimeError:
            shown = None
        self.quiet(1.0, 10)
        self.srv.scene.set("text")
        return {"close_ms": None if closed is None else (closed - t0) * 1000,
                "shown_ms": None if shown is None else (shown - t0) * 1000}

    def tree(self) -> tuple[int, float | None]:
        """The four-child tree run by the peer's shell tool, one Esc (two if the first
        is not taken): how many of the four still run ``LEFT_AFTER_S`` later, and ms from
        the Esc to the turn's final state on screen (None: not seen by then)."""
        marker = new_marker()
        self.srv.scene.set("tree", tree_command(marker), self.peer.bash_tool)
        try:
            self.type("run the tree")
            self.wait(lambda: tree_children(marker) >= 4, 60, "the tree did not start")
            time.sleep(0.5)
            t0 = time.monotonic()
            os.write(self.master, b"\x1b")
            time.sleep(1.5)
            if self.any_shown_since(t0, self.peer.stop_words) is None:
                os.write(self.master, b"\x1b")
            time.sleep(max(0.0, LEFT_AFTER_S - (time.monotonic() - t0)))
            final = self.any_shown_since(t0, self.peer.final)
            return tree_children(marker), None if final is None else (final - t0) * 1000
        finally:
            kill_marked(marker, reap=True)
            self.srv.scene.set("text")

    def close(self) -> None:
        super().close()
        if self.argv[0] == "tmux":  # its server left our process group: ended by its socket
            subprocess.run([*self.argv[:3], "kill-server"], capture_output=True, timeout=10)
        self.srv.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def log_screen(name: str, screen: str) -> None:
    print(f"[bench-peers] {name}'s screen: {screen!r}", file=sys.stderr, flush=True)


def print_turns(peer: Peer, cache: Path, turns: int) -> list[float]:
    """Seconds for each print-mode turn (a fresh process a turn), answered by the fake."""
    tmp = Path(tempfile.mkdtemp(prefix="atui-peers-print-"))
    workspace = tmp / "ws"
    workspace.mkdir()
    srv = PeerServer(peer.api, strict=peer is AGENT_TUI)
    out: list[float] = []
    try:
        write_config(peer, tmp / "home", workspace, srv.url)
        env = environment(peer, tmp / "home", srv.url)
        for i in range(turns):
            argv = print_command(peer, cache, workspace, f"turn {i + 1}: say something")
            t0 = time.monotonic()
            proc = subprocess.Popen(argv, cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
            try:
                stdout, stderr = proc.communicate(timeout=90)
            finally:
                _kill_group(proc)
            took = time.monotonic() - t0
            if ANSWER not in stdout.decode("utf-8", "replace"):
                raise RuntimeError(f"{peer.name} -p: no answer (exit {proc.returncode}): "
                                   f"{stderr.decode('utf-8', 'replace')[-300:]!r}")
            out.append(took)
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass
    proc.wait()
