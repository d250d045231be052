"""The API key from a command: Claude Code's ``apiKeyHelper`` setting.

The command (from the user's own settings files only: a project's is refused by
:mod:`agent_tui.settings`) prints the key on stdout. It is run before the first
request, again before the next request once the key is older than
``CLAUDE_CODE_API_KEY_HELPER_TTL_MS`` (default 5 minutes), and again at once when
the API answers 401 (the provider retries that request once with the new key).

Running it is the caller's (the wiring hands in a runner built on the process layer:
its own process group, a time bound, Esc ends it). A run that fails (a non-zero exit,
nothing on stdout, the time bound) is a :class:`KeyHelperError` whose message names
the command and its file, never what it printed on stdout: the key is only ever in
this object and the SDK client, never in a message, a log, the journal, or the
environment of a command.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from enum import StrEnum
from pathlib import Path


from agent_tui.providers.base import DeferredModel

TTL_ENV = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"
DEFAULT_TTL_S = 300.0  # Claude Code's: 5 minutes
TIMEOUT_S = 10.0
#: How much of the helper's stderr a failure quotes (its first line, so far).
STDERR_CHARS = 200


class HelperEnding(StrEnum):
    EXITED = "exited"
    TIMED_OUT = "timed_out"
    NOT_STARTED = "not_started"
    CANCELLED = "cancelled"


class HelperRun(DeferredModel):
    """How one run of the helper ended, in facts (from the runner)."""

    ending: HelperEnding
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    error: str = ""  # why it could not be started

    def __repr__(self) -> str:  # stdout is the key: never in a repr, a log, a traceback
        return f"HelperRun(ending={self.ending!s}, exit_code={self.exit_code})"

    __str__ = __repr__


#: Runs ``command`` with a time bound (seconds); never raises for the command's failures.
Runner = Callable[[str, float], Awaitable[HelperRun]]


class KeyHelperError(Exception):
    """The helper gave no key: one line naming it."""


def ttl_from_env(environ: dict[str, str] | None = None) -> tuple[float, str | None]:
    """The TTL in seconds, and a problem with the variable (None when it is fine)."""
    value = (environ if environ is not None else os.environ).get(TTL_ENV)
    if value is None or not value.strip():
        return DEFAULT_TTL_S, None
    try:
        ms = int(value)
    except ValueError:
        ms = -1
    if ms < 0:
        return DEFAULT_TTL_S, (f"{TTL_ENV}={value}: not a whole number of milliseconds "
                               f"(the key is fetched again every {DEFAULT_TTL_S:g} s)")
    return ms / 1000, None


class KeyHelper:
    """The key a command prints, fetched again after ``ttl_s`` or on :meth:`refresh`."""

    def __init__(
        self, command: str, source: Path, run: Runner, *, ttl_s: float = DEFAULT_TTL_S,
        timeout_s: float = TIMEOUT_S, clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.command = command
        self.source = source
        self.ttl_s = ttl_s
        self.timeout_s = timeout_s
        self.runs = 0  # how many times the command ran
        self._run = run
        self._clock = clock
        self._key: str | None = None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()  # requests side by side wait for one run

    def __repr__(self) -> str:
        return f"KeyHelper({self.command!r} from {self.source})"

    @property
    def name(self) -> str:
        return f"apiKeyHelper `{self.command}` (from {self.source})"

    async def key(self) -> str:
        """The key: the one held while it is fresh, else the command's new one."""
        async with self._lock:
            if self._key is not None and self._clock() - self._fetched_at < self.ttl_s:
                return self._key
            return await self._fetch()

    async def refresh(self) -> str:
        """Run the command now; raises :class:`KeyHelperError` when it gives no key."""
        async with self._lock:
            return await self._fetch()

    async def _fetch(self) -> str:
        self._key = None
        self.runs += 1
        run = await self._run(self.command, self.timeout_s)
        match run.ending:
            case HelperEnding.EXITED:
                if run.exit_code != 0:
                    raise KeyHelperError(f"{self.name} exited with code {run.exit_code}"
                                         f"{_quoted(run.stderr)}")
            case HelperEnding.TIMED_OUT:
                raise KeyHelperError(f"{self.name} printed no key within {self.timeout_s:g} s "
                                     "(stopped)")
            case HelperEnding.NOT_STARTED:
                raise KeyHelperError(f"{self.name} could not be started: {run.error}")
            case HelperEnding.CANCELLED:
                raise KeyHelperError(f"{self.name} was stopped before it printed a key")
        key = run.stdout.strip()
        if not key:
            raise KeyHelperError(f"{self.name} printed nothing on stdout (it should print "
                                 "the API key)")
        if any(ch.isspace() for ch in key):
            raise KeyHelperError(f"{self.name} printed more than one word on stdout (it "
                                 "should print the API key alone)")
        self._key = key
        self._fetched_at = self._clock()
        return key


def _quoted(stderr: str) -> str:
    first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
    if not first:
        return ""
    if len(first) > STDERR_CHARS:
        first = first[:STDERR_CHARS] + "..."
    return f": {first}"
