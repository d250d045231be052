"""``agent-tui -p``, time per turn, beside its floor: a bare script that imports the SDK and
streams the same answer from the same fake.

Each turn is a fresh process (``-p`` with one prompt, the answer on stdout, then exit), as a
script that calls ``agent-tui -p`` in a loop runs it; the two commands alternate so that drift
hits both alike, after one warm-up of each (it also writes the bytecode caches). The clock runs
from just before the spawn to the exit. One more run of agent-tui under ``-X importtime`` says
where its start-up goes: the largest imports, each with its own and its children's time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.peers_fake import ANSWER, PeerServer
from bench.peers_setup import AGENT_TUI, KEY, MODEL, environment, print_command, write_config

#: The floor: what any Python client of this API pays for one streamed answer.
FLOOR = f"""
import anthropic
client = anthropic.Anthropic()
with client.messages.stream(model={MODEL!r}, max_tokens=256, tools=[{{
        "name": "bash", "description": "run", "input_schema": {{"type": "object"}}}}],
        messages=[{{"role": "user", "content": "say something"}}]) as stream:
    print(stream.get_final_text())
"""

#: The floor of a Python client as agent-tui is one: the SDK loaded through agent-tui's lazy
#: loader, its async client (spans off, as agent-tui makes it), one streamed answer.
LAZY_FLOOR = f"""
import asyncio
from agent_tui.providers import anthropic_lazy
anthropic = anthropic_lazy.load()
async def main():
    client = anthropic.AsyncAnthropic(max_retries=0, open_telemetry=False)
    stream = await client.messages.create(model={MODEL!r}, max_tokens=256, stream=True, tools=[{{
        "name": "bash", "description": "run", "input_schema": {{"type": "object"}}}}],
        messages=[{{"role": "user", "content": "say something"}}])
    text = []
    async for event in stream:
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            text.append(event.delta.text)
    print("".join(text))
asyncio.run(main())
"""


class PrintBench:
    """A fake API, a throwaway home and workspace, and the two commands that ask it."""

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="atui-bench-print-"))
        self.workspace = self.tmp / "ws"
        self.workspace.mkdir()
        self.srv = PeerServer(AGENT_TUI.api)
        home = self.tmp / "home"
        write_config(AGENT_TUI, home, self.workspace, self.srv.url)
        self.env = environment(AGENT_TUI, home, self.srv.url)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode caches work as for users
        assert self.env["ANTHROPIC_API_KEY"] == KEY

    def agent_argv(self, turn: int) -> list[str]:
        return print_command(AGENT_TUI, self.tmp, self.workspace, f"turn {turn}: say something")

    def turn_s(self, argv: list[str]) -> float:
        """Seconds from spawn to exit of one command that must print the fake's answer."""
        t0 = time.monotonic()
        self._answered(argv, self.env)
        return time.monotonic() - t0

    def _answered(self, argv: list[str], env: dict[str, str]) -> str:
        """The command's stderr, once it printed the fake's answer and exited."""
        proc = subprocess.run(argv, cwd=self.workspace, env=env, timeout=120,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if ANSWER not in proc.stdout:
            raise RuntimeError(f"{argv[:3]}: no answer (exit {proc.returncode}): "
                               f"{proc.stderr[-300:]!r}")
        return proc.stderr

    def imports(self, top: int = 8) -> list[str]:
        """The ``top`` largest imports of one ``-p`` turn, the entry point's and theirs
        (two levels): "name: total ms (own ms)"."""
        stderr = self._answered(self.agent_argv(0), dict(self.env, PYTHONPROFILEIMPORTTIME="1"))
        rows: list[tuple[int, int, str]] = []
        for line in stderr.splitlines():
            parts = line.removeprefix("import time:").split("|")
            if len(parts) != 3 or not parts[0].strip().isdigit():
                continue  # the header, or the agent's own stderr
            own, total, raw = int(parts[0]), int(parts[1]), parts[2][1:]
            depth = (len(raw) - len(raw.lstrip(" "))) // 2  # Python indents two a level
            if depth <= 1:
                rows.append((total, own, raw.strip()))
        rows.sort(reverse=True)
        return [f"{name}: {total / 1000:.0f} ms ({own / 1000:.0f} ms own)"
                for total, own, name in rows[:top]]

    def close(self) -> None:
        self.srv.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


@dataclass
class PrintTimes:
    agent: list[float]  # ms a turn
    floor: list[float]  # ms a turn of the bare script
    lazy_floor: list[float]  # ms a turn of the bare script through agent-tui's lazy loader
    imports: list[str]  # the largest imports of one agent-tui run


def measure(runs: int) -> PrintTimes:
    """``runs`` turns of each, in turn (each round starting one further along), after one
    warm-up of each."""
    bench = PrintBench()
    floor = [sys.executable, "-c", FLOOR]  # the same URL and key from the environment
    lazy_floor = [sys.executable, "-c", LAZY_FLOOR]
    try:
        bench.turn_s(bench.agent_argv(0))
        bench.turn_s(floor)
        bench.turn_s(lazy_floor)
        times: list[list[float]] = [[], [], []]
        for i in range(runs):
            for k in range(3):
                which = (i + k) % 3
                argv = (bench.agent_argv(i + 1), floor, lazy_floor)[which]
                times[which].append(bench.turn_s(argv) * 1000)
        return PrintTimes(times[0], times[1], times[2], bench.imports())
    finally:
        bench.close()


if __name__ == "__main__":
    got = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
    print("agent-tui -p (ms):", *(round(v) for v in got.agent))
    print("bare SDK script (ms):", *(round(v) for v in got.floor))
    print("bare script, the SDK loaded as agent-tui loads it (ms):", *(round(v) for v in got.lazy_floor))
    print("largest imports:", *got.imports, sep="\n  ")
    print(f"load average {os.getloadavg()[0]:.1f}")
