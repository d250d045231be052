"""Running one prompt hook (``"type": "prompt"``): the model judges the event, as
Claude Code asks it.

The hook's ``prompt`` is sent to the session's provider (its ``model``, else the
session's model) with the hook's input JSON in place of ``$ARGUMENTS`` (after the
prompt when it has none). The model answers one JSON object: ``{"ok": true}`` (no
opinion: things go on) or ``{"ok": false, "reason": "..."}``, which is a block with
that reason: the call is denied, the prompt blocked, a ``Stop`` hook keeps the agent
going with the reason as its next instruction. An answer that is not that object is
a failed hook (said to the user); no answer (the provider failed, the hook's timeout
passed) fails closed for a gate, as a command that cannot start does. Esc ends the
request. The request goes through the session's account (``core/usage/hook_account.py``):
past the spending cap it is not sent, and its usage is recorded (purpose ``hook``: in
``/cost`` and the cap's sum), a cut one as interrupted.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator

from typing import Protocol

from agent_tui.cancel import Cancelled, CancelReason, CancelScope
from agent_tui.core.services.model_call import fold_usage
from agent_tui.hooks.runner import CommandRun
from agent_tui.protocol.states import HookEnding
from agent_tui.providers.base import (
    ModelRequest,
    Provider,
    ProviderError,
    StreamEvent,
    TextDelta,
    UsageCounts,
)


class Account(Protocol):
    """What a prompt hook's request costs (``core/usage/hook_account.py``)."""

    def refused(self, model: str) -> str | None: ...
    def report(self, model: str, counts: UsageCounts, cut: bool) -> None: ...

SYSTEM = (
    "You check one event of a coding agent for a hook its user configured. Judge only "
    "what the user's instructions ask about, from the event's JSON. Answer with one JSON "
    'object and nothing else: {"ok": true} when it may go on, or {"ok": false, "reason": '
    '"why, in one sentence"} when it may not.'
)
MAX_TOKENS = 1024
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def prompt_text(prompt: str, payload: str) -> str:
    """The hook's prompt with the event's JSON in it."""
    return prompt.replace("$ARGUMENTS", payload) if "$ARGUMENTS" in prompt else f"{prompt}\n\n{payload}"


def verdict(answer: str) -> CommandRun:
    """The model's answer as a hook's run: its JSON answer, or a failure."""
    text = _FENCE.sub("", answer.strip())
    try:
        said = json.loads(text)
    except ValueError:
        said = None
    if not isinstance(said, dict) or not isinstance(said.get("ok"), bool):
        return CommandRun(ending=HookEnding.EXITED,
                          failure='the model did not answer {"ok": true|false, "reason": ...}')
    if said["ok"]:
        return CommandRun(ending=HookEnding.EXITED, exit_code=0)
    reason = said.get("reason")
    out = {"decision": "block", "reason": reason if isinstance(reason, str) else ""}
    return CommandRun(ending=HookEnding.EXITED, exit_code=0, stdout=json.dumps(out))


async def ask_model(
    provider: Provider, model: str, prompt: str, payload: str, *, timeout_s: float,
    scope: CancelScope, account: Account | None = None,
) -> CommandRun:
    """Ask the model; always returns (never raises for the provider's failures)."""
    if scope.cancelled:  # cancel point: what it would gate is already cancelled
        return CommandRun(ending=HookEnding.CANCELLED)
    why = account.refused(model) if account is not None else None
    if why is not None:  # the spending cap: not sent
        return CommandRun(ending=HookEnding.NOT_STARTED, error=f"the model was not asked: {why}")
    started = time.monotonic()
    request = ModelRequest(model=model, system=SYSTEM, max_tokens=MAX_TOKENS,
                           messages=[{"role": "user", "content": prompt_text(prompt, payload)}])
    own = scope.child("prompt hook")  # its timeout must not cancel what it gates
    own.cancel_after(timeout_s)
    parts: list[str] = []
    usage: UsageCounts | None = None
    completed = False
    stream = provider.stream(request)

    def took() -> float:
        return round(time.monotonic() - started, 3)

    try:
        async with own.linked():  # cancel point: while the model answers
            async for event in stream:
                usage = fold_usage(usage, event)
                if isinstance(event, TextDelta):
                    parts.append(event.text)
        completed = True
    except Cancelled:
        timed_out = own.reason is CancelReason.TIMEOUT and not scope.cancelled
        return CommandRun(ending=HookEnding.TIMED_OUT if timed_out else HookEnding.CANCELLED,
                          duration_s=took())
    except ProviderError as exc:
        return CommandRun(ending=HookEnding.NOT_STARTED, error=f"the model request failed: {exc}",
                          duration_s=took())
    finally:
        own.detach()
        await _close(stream)
        if usage is not None and account is not None:  # billed, cut or not
            account.report(model, usage, cut=not completed)
    run = verdict("".join(parts))
    run.duration_s = took()
    return run


async def _close(stream: AsyncIterator[StreamEvent]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is None:
        return
    try:
        await asyncio.wait_for(aclose(), timeout=2.0)
    except Exception:
        pass  # best effort: the connection goes with the client
