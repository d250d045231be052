"""Running one HTTP hook (``"type": "http"``): the hook's input JSON POSTed to its
``url``, its answer read as a command hook's stdout, as Claude Code does.

- A 2xx answer with an empty body: no opinion. A 2xx with a JSON object: read as a
  command hook's JSON answer (``decision``, ``hookSpecificOutput``, ...).
- A 2xx with any other body, or another status: a failed hook (things go on, unless
  ``onFailure`` is ``block``), said to the user.
- No answer at all (the address refuses, the timeout passes): as a command that
  could not start or timed out: a gate (a tool call, a prompt, a compaction) is
  blocked unless ``onFailure`` is ``continue`` (a guard fails closed).

``headers`` values may name variables (``$TOKEN`` or ``${TOKEN}``); only those the
hook lists in ``allowedEnvVars`` are filled in, any other becomes empty (as in
Claude Code), so a project's hook cannot send the user's secrets by naming them.
The request goes to the URL as given: no redirect is followed, no proxy from the
environment is used, and at most ``MAX_BODY`` bytes of the answer are read. Esc ends
the request like a command (the scope of what it gates).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping

import httpx2

from agent_tui.cancel import Cancelled, CancelScope
from agent_tui.hooks.runner import CommandRun
from agent_tui.protocol.states import HookEnding

MAX_BODY = 256 * 1024
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def header_values(headers: Mapping[str, str], allowed: frozenset[str],
                  env: Mapping[str, str]) -> dict[str, str]:
    """The headers with the allowed variables filled in and the others emptied."""
    def fill(match: re.Match[str]) -> str:
        name = match[1] or match[2]
        return env.get(name, "") if name in allowed else ""

    return {key: _VAR.sub(fill, value) for key, value in headers.items()}


async def post_hook(
    url: str, body: bytes, *, headers: Mapping[str, str], timeout_s: float, scope: CancelScope,
) -> CommandRun:
    """POST ``body`` to ``url``; always returns (never raises for the server's failures)."""
    if scope.cancelled:  # cancel point: what it would gate is already cancelled
        return CommandRun(ending=HookEnding.CANCELLED)
    started = time.monotonic()
    sent = {"Content-Type": "application/json", **headers}

    def took() -> float:
        return round(time.monotonic() - started, 3)

    try:
        async with scope.linked():
            async with httpx2.AsyncClient(timeout=timeout_s, follow_redirects=False,
                                          trust_env=False) as client:
                async with client.stream("POST", url, content=body, headers=sent) as response:
                    data = b""
                    async for chunk in response.aiter_bytes():
                        data += chunk
                        if len(data) > MAX_BODY:
                            return CommandRun(ending=HookEnding.EXITED, duration_s=took(),
                                              failure=f"answered with more than {MAX_BODY // 1024} KB")
                    status = response.status_code
    except Cancelled:
        return CommandRun(ending=HookEnding.CANCELLED, duration_s=took())
    except httpx2.TimeoutException:
        return CommandRun(ending=HookEnding.TIMED_OUT, duration_s=took())
    except (httpx2.HTTPError, OSError, ValueError) as exc:
        return CommandRun(ending=HookEnding.NOT_STARTED, duration_s=took(),
                          error=f"no answer from {url}: {exc or type(exc).__name__}")
    text = data.decode("utf-8", errors="replace")
    if not 200 <= status < 300:
        return CommandRun(ending=HookEnding.EXITED, duration_s=took(),
                          failure=f"answered HTTP {status}" + (f": {text.strip()[:200]}" if text.strip() else ""))
    if text.strip() and not text.strip().startswith("{"):
        return CommandRun(ending=HookEnding.EXITED, duration_s=took(),
                          failure="answered with a body that is not a JSON object")
    return CommandRun(ending=HookEnding.EXITED, exit_code=0, stdout=text, duration_s=took())
