"""The fake's prompt cache: entries written at breakpoints, found again by prefix key.

It follows the prompt caching page of the API docs:

* The prompt is the :func:`~tests.fake_api.tokens.prompt_units` of the request, in the
  order ``tools -> system -> messages``. Each unit has the key of the whole prefix that
  ends with it, so any change to a tool, the system prompt, an earlier block, the model,
  ``thinking`` or ``tool_choice`` (the last two: message positions only) is a miss.
* **Writes happen only at breakpoints** (``cache_control`` on a tool, system block or
  message block, or the automatic one of a top-level ``cache_control``; see
  :mod:`tests.fake_api.validate_cache`). A breakpoint whose prefix is shorter than the
  model's ``min_cacheable_tokens`` writes nothing, and no error is returned.
* **Reads look backward**: from each breakpoint, at most 20 positions (the breakpoint
  itself first) for an entry an earlier request wrote. The highest hit over all
  breakpoints is ``A``.
* ``cache_read_input_tokens`` = tokens up to ``A``; ``cache_creation_input_tokens`` =
  tokens after ``A`` up to the last breakpoint ``C`` (split into
  ``cache_creation.ephemeral_1h_input_tokens`` up to the last 1-hour breakpoint ``B`` after
  ``A``, and ``ephemeral_5m_input_tokens`` from there to ``C``); ``input_tokens`` = the rest.
* Entries live for their TTL (``"5m"`` = 300 s, ``"1h"`` = 3600 s) on the server's clock
  and each hit refreshes the entry it hit. Pass ``FakeAnthropicServer(clock=FakeClock())``
  and ``clock.advance(301)`` to expire entries without sleeping.

An entry becomes visible as soon as the request that wrote it starts its response (the
docs: "a cache entry only becomes available after the first response begins").
Requests rejected with a 4xx and scripted HTTP errors read and write nothing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from .tokens import PromptUnit

__all__ = ["Breakpoint", "CacheUsage", "FakeClock", "PromptCache", "TTL_SECONDS", "LOOKBACK"]

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
LOOKBACK = 20


@dataclass(frozen=True)
class Breakpoint:
    index: int  # position in the prompt units
    ttl: str  # "5m" | "1h"
    automatic: bool = False


@dataclass(frozen=True)
class CacheUsage:
    """How one request's input tokens split between cache read, cache write and plain."""

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_5m: int
    cache_creation_1h: int
    hit_at: int | None  # the unit index of the highest hit (``A``), None on a miss

    @property
    def cache_creation_input_tokens(self) -> int:
        return self.cache_creation_5m + self.cache_creation_1h

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    @classmethod
    def uncached(cls, total: int) -> "CacheUsage":
        return cls(total, 0, 0, 0, None)


class FakeClock:
    """A clock for the cache that only moves when told to (seconds, like monotonic)."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += float(seconds)


@dataclass
class _Entry:
    expires: float
    ttl: str


class PromptCache:
    """Entries by prefix key; :meth:`account` reads, refreshes and writes for one request."""

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self.clock = clock or time.monotonic
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        now = self.clock()
        with self._lock:
            return sum(1 for e in self._entries.values() if e.expires > now)

    def account(self, units: Sequence[PromptUnit], breakpoints: Sequence[Breakpoint],
                min_tokens: int) -> CacheUsage:
        """Split the request's tokens and update the cache (see the module docstring)."""
        prefix = [0]
        for u in units:
            prefix.append(prefix[-1] + u.tokens)
        total = prefix[-1]
        if not breakpoints:
            return CacheUsage.uncached(total)
        now = self.clock()
        with self._lock:
            self._entries = {k: e for k, e in self._entries.items() if e.expires > now}
            hit = -1
            for bp in breakpoints:
                for pos in range(bp.index, max(-1, bp.index - LOOKBACK), -1):
                    if units[pos].key in self._entries:
                        hit = max(hit, pos)
                        break
            if hit >= 0:
                entry = self._entries[units[hit].key]
                entry.expires = now + TTL_SECONDS[entry.ttl]
            read = prefix[hit + 1]
            last = max(bp.index for bp in breakpoints)
            create_1h = create_5m = 0
            if last > hit and prefix[last + 1] >= min_tokens:
                long_ = [bp.index for bp in breakpoints if bp.ttl == "1h" and bp.index > hit]
                b = max(long_) if long_ else hit
                create_1h = prefix[b + 1] - read
                create_5m = prefix[last + 1] - prefix[b + 1]
            for bp in breakpoints:
                if prefix[bp.index + 1] < min_tokens:
                    continue
                key = units[bp.index].key
                old = self._entries.get(key)
                if old is None or TTL_SECONDS[bp.ttl] >= TTL_SECONDS[old.ttl]:
                    self._entries[key] = _Entry(now + TTL_SECONDS[bp.ttl], bp.ttl)
        return CacheUsage(total - read - create_1h - create_5m, read, create_5m, create_1h,
                          hit if hit >= 0 else None)
