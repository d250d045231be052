"""The user's ``statusLine`` command (Claude Code's ``{"type": "command", "command":
...}``): run like a hook command (``runner.py``: its own process group, TERM -> grace ->
KILL, bounded output) with Claude Code's JSON on its stdin, bounded in time; its first
line is kept with its colours (SGR escapes) and every other escape and control byte
stripped, so a command cannot move the cursor, retitle the terminal or hide text.

Taken from the user's own settings files (``~/.claude/settings.json``,
``~/.config/agent-tui/settings.json``) and, in a trusted folder only, the project's
(the last one wins, as Claude Code's order has it): an untrusted project's
``statusLine`` would run the repository's command on every change, and the trust
notice names it (``settings/untrusted.py``). One run at a time: a
request while one runs is refused (the caller asks again later). A command that fails
says so once; later failures stay quiet until it works again, and the last line it
printed stays on the screen (a failed or stopped run gives no line: ``None``).

Its own time limit (:data:`TIMEOUT_S`, Claude Code has none shorter than its hooks'
ten minutes): the run goes on a thread, so a slow command never holds the screen up,
and at the limit the runner ends the command's whole process tree (its group and every
process it tagged, ``runtime/process``). ``refreshInterval`` (seconds, at least 1, as
Claude Code's) asks for a run that often even when nothing changed.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent_tui.cancel import CancelScope
from agent_tui.credentials import command_env
from agent_tui.hooks.runner import run_command
from agent_tui.config_file import read_config_text
from agent_tui.paths import claude_config_dir, project_settings_files, user_config_dir
from agent_tui.protocol.states import HookEnding

TIMEOUT_S = 5.0
MAX_CHARS = 400
OUTPUT_BYTES = 64 * 1024
# SGR (colours, bold...) is kept; every other escape sequence goes.
_OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_CSI = re.compile(r"\x1b\[([0-?]*)([ -/]*)([@-~])")
_OTHER_ESC = re.compile(r"\x1b[ -/]+[0-~]|\x1b[0-~]|\x1b")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f\x80-\x9f]")


def clean_line(output: str) -> str:
    """The first non-empty line of ``output``: colours kept, other escapes stripped."""
    line = next((ln for ln in output.replace("\r", "\n").split("\n") if ln.strip()), "")
    line = _OSC.sub("", line)
    line = _CSI.sub(lambda m: m[0] if m[3] == "m" and not m[2] and
                    re.fullmatch(r"[0-9;:]*", m[1]) else "", line)
    kept: list[str] = []
    for piece in re.split(r"(\x1b\[[0-9;:]*m)", line):
        kept.append(piece if piece.startswith("\x1b[") else _CONTROL.sub("", _OTHER_ESC.sub("", piece)))
    return "".join(kept).expandtabs(4)[: MAX_CHARS * 4]


def status_line_command(workspace: Path, *, trusted: bool = False) -> tuple[str | None, list[str]]:
    """The command the user's files set, then a trusted project's (the last one wins),
    and notes (a malformed value)."""
    setting, notes = status_line_setting(workspace, trusted=trusted)
    return (setting["command"] if setting else None), notes


def status_line_setting(workspace: Path, *, trusted: bool = False) -> tuple[dict[str, Any] | None, list[str]]:
    """The ``statusLine`` object in force (see :func:`status_line_command`), and notes."""
    command: dict[str, Any] | None = None
    notes: list[str] = []
    files = [claude_config_dir() / "settings.json", user_config_dir() / "settings.json"]
    for path in [*files, *(project_settings_files(workspace) if trusted else [])]:
        value = _read(path).get("statusLine")
        if value is None:
            continue
        if isinstance(value, dict) and value.get("type", "command") == "command" \
                and isinstance(value.get("command"), str) and value["command"].strip():
            command = value
        else:
            notes.append(f"{path}: statusLine: expected {{\"type\": \"command\", \"command\": "
                         "\"...\"}} (not used)")
    return command, notes


def status_line_for(
    workspace: Path, *, trusted: bool = False, env: Mapping[str, str] | None = None,
) -> tuple[StatusLineCommand | None, list[str]]:
    """The runner of the command (None: there is none), and the notes to say. ``env``:
    the user's own settings' env (never a project's, as for hooks)."""
    setting, notes = status_line_setting(workspace, trusted=trusted)
    if setting is None:
        return None, notes
    every = setting.get("refreshInterval")
    if every is not None and (isinstance(every, bool) or not isinstance(every, int | float)
                              or every < 1):
        notes.append(f"statusLine.refreshInterval: expected a number of seconds, at least 1 "
                     f"(got {every!r}; not used)")
        every = None
    return StatusLineCommand(setting["command"], workspace, env,
                             refresh_s=float(every) if every is not None else None), notes


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_config_text(path))  # bounded, never a FIFO or a device
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


Done = Callable[[str | None, str | None], None]


class StatusLineCommand:
    """Runs the command on its own thread, one run at a time; ``done(text, error)`` is
    called on that thread with the cleaned first line (None: the run failed or was
    stopped, the last line stays), and an error said once."""

    def __init__(self, command: str, workspace: Path, env: Mapping[str, str] | None = None,
                 timeout_s: float = TIMEOUT_S, refresh_s: float | None = None) -> None:
        self.command = command
        self.workspace = workspace
        # a command's environment: the agent's credentials removed, as for hooks
        self.env = {**command_env(env), "CLAUDE_PROJECT_DIR": str(workspace)}
        self.timeout_s = timeout_s
        self.refresh_s = refresh_s  # run at least this often (``refreshInterval``)
        self.scope = CancelScope()  # close() stops a run still going
        self._running = threading.Lock()
        self._failed = False

    @property
    def running(self) -> bool:
        return self._running.locked()

    def request(self, payload: dict[str, Any], done: Done) -> bool:
        """Start a run; False (nothing started) while one runs or after close()."""
        if self.scope.cancelled or not self._running.acquire(blocking=False):
            return False
        stdin = json.dumps(payload).encode()
        threading.Thread(target=self._run, args=(stdin, done), name="status-line",
                         daemon=True).start()
        return True

    def close(self) -> None:
        self.scope.cancel()

    def _run(self, stdin: bytes, done: Done) -> None:
        try:
            text, error = asyncio.run(self._once(stdin))
        except Exception as exc:  # never let a status line take the screen down
            text, error = None, f"status line: {exc}"
        finally:
            self._running.release()
        done(text, self._said_once(error))

    async def _once(self, stdin: bytes) -> tuple[str | None, str | None]:
        # stdout goes to a file, its colours with it (the runner's capture strips them),
        # and no more of it than OUTPUT_BYTES (a flood ends at head's SIGPIPE)
        with tempfile.TemporaryDirectory(prefix="agent-tui-status-") as folder:
            out = Path(folder) / "stdout"
            wrapped = (f"set -o pipefail; {{ {self.command}\n}} | head -c {OUTPUT_BYTES} "
                       f"> {shlex.quote(str(out))}")
            run = await run_command(wrapped, stdin, cwd=self.workspace, env=self.env,
                                    timeout_s=self.timeout_s, scope=self.scope)
            stdout = out.read_bytes().decode("utf-8", "replace") if out.exists() else ""
        match run.ending:
            case HookEnding.EXITED if run.exit_code in (0, 141):  # 141: cut by head
                return clean_line(stdout), None
            case HookEnding.EXITED:
                why = clean_line(run.stderr) or f"exit {run.exit_code}"
            case HookEnding.TIMED_OUT:
                why = f"no answer within {self.timeout_s:g} s (stopped)"
            case HookEnding.NOT_STARTED:
                why = f"could not start: {run.error}"
            case _:
                why = "stopped"
        return None, f"status line command {self.command!r} failed: {_plain(why)}"

    def _said_once(self, error: str | None) -> str | None:
        if error is None:
            self._failed = False
            return None
        if self._failed:
            return None
        self._failed = True
        return error


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;:]*m", "", text)
