"""A model's context window and output limit, and what it can do.

Learnt from the Models API (``GET /v1/models/{id}``) once per model, in the
background: the lookup never delays the first frame. Until it answers, the fallbacks
apply: for the window, the settings key ``contextWindow``, then the built-in table
below; for what the model offers (thinking, effort, images), the table of known models
(``core/usage/known_models.py``). A model known to neither is unknown: its first
request waits for the lookup already on its way (:meth:`ModelLimits.pending`); no
other request waits for it.

An endpoint without a Models API (a gateway, a model id newer than the table) says the
window in its first rejection, ``prompt is too long: N tokens > M maximum``: M is
learnt then (:meth:`ModelLimits.learn_from_overflow`), for that model and the rest of
the session, and wins over every other source (it is what the endpoint enforces), so
compaction runs ahead of the window from then on instead of after each rejection.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from agent_tui.providers import base as model
from agent_tui.core.usage.known_models import bare_id, known_model

LOOKUP_TIMEOUT_S = 5.0
DEFAULT_WINDOW = 200_000
# (prefix, context window, max output tokens), the longest matching prefix wins.
BUILTIN: list[tuple[str, int, int]] = [
    ("claude-fable-5", 1_000_000, 128_000),
    ("claude-mythos-5", 1_000_000, 128_000),
    ("claude-opus-5", 1_000_000, 128_000),
    ("claude-sonnet-5", 1_000_000, 128_000),
    ("claude-haiku-5", 1_000_000, 128_000),
    ("claude-opus-4-8", 1_000_000, 128_000),
    ("claude-opus-4-7", 1_000_000, 128_000),
    ("claude-opus-4-6", 1_000_000, 128_000),
    ("claude-sonnet-4-6", 1_000_000, 64_000),
    ("claude-opus-4-5", 200_000, 64_000),
    ("claude-sonnet-4-5", 200_000, 64_000),
    ("claude-haiku-4-5", 200_000, 64_000),
    ("claude-opus-4", 200_000, 32_000),
    ("claude-sonnet-4", 200_000, 64_000),
]


_TOO_LONG = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")


@dataclass(frozen=True)
class Overflow:
    """What a ``prompt is too long`` rejection says: the prompt's size and the window."""

    prompt_tokens: int
    window: int


def parse_overflow(message: str) -> Overflow | None:
    """The figures of the API's ``prompt is too long: N tokens > M maximum``, if there."""
    found = _TOO_LONG.search(message)
    if found is None:
        return None
    prompt, window = int(found.group(1)), int(found.group(2))
    return Overflow(prompt, window) if window > 0 else None


def _table(model_id: str) -> tuple[int, int] | None:
    model_id = bare_id(model_id)  # ``anthropic/claude-x`` is ``claude-x``'s window
    best: tuple[str, int, int] | None = None
    for prefix, window, out in BUILTIN:
        if model_id.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, window, out)
    return (best[1], best[2]) if best else None


class ModelLimits:
    def __init__(self, settings_window: int | None = None) -> None:
        self.settings_window = settings_window
        self._info: dict[str, model.ModelInfo] = {}
        self._errors: dict[str, model.ProviderError] = {}
        self._lookups: dict[str, asyncio.Task[model.ModelInfo | None]] = {}
        self._rejected_at: dict[str, int] = {}  # the window a rejection said, per model

    def info(self, model_id: str) -> model.ModelInfo | None:
        """What the model offers: the Models API's answer once it is there, else the
        table of known models; None while the model is unknown to both."""
        return self._info.get(model_id) or known_model(model_id)

    def pending(self, provider: model.Provider,
                model_id: str) -> asyncio.Task[model.ModelInfo | None] | None:
        """The lookup an unknown model's request must wait for (started if it was not),
        or None when there is nothing to wait for: the model is known, or its lookup
        has ended (answered, failed or timed out)."""
        if self.info(model_id) is not None:
            return None
        task = self.learn(provider, model_id)
        return None if task.done() else task

    def remember(self, info: model.ModelInfo) -> None:
        self._info[info.id] = info

    def error(self, model_id: str) -> model.ProviderError | None:
        """Why the Models API could not be asked (or said no), if it could not."""
        return self._errors.get(model_id)

    def learn_from_overflow(self, model_id: str, error: Exception) -> Overflow | None:
        """Take the window from a ``prompt is too long`` rejection of ``model_id``'s
        request (None when the message gives no figures)."""
        found = parse_overflow(str(error))
        if found is not None:
            self._rejected_at[model_id] = found.window
        return found

    def window(self, model_id: str) -> int:
        rejected_at = self._rejected_at.get(model_id)
        if rejected_at is not None:
            return rejected_at
        info = self._info.get(model_id)
        if info is not None and info.max_input_tokens:
            return info.max_input_tokens
        if self.settings_window:
            return self.settings_window
        known = _table(model_id)
        return known[0] if known else DEFAULT_WINDOW

    def max_output(self, model_id: str) -> int | None:
        info = self._info.get(model_id)
        if info is not None and info.max_tokens:
            return info.max_tokens
        known = _table(model_id)
        return known[1] if known else None

    def learn(self, provider: model.Provider, model_id: str) -> asyncio.Task[model.ModelInfo | None]:
        """Start (once per model) asking the provider; the task's result is the info."""
        task = self._lookups.get(model_id)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._ask(provider, model_id))
            self._lookups[model_id] = task
        return task

    async def _ask(self, provider: model.Provider, model_id: str) -> model.ModelInfo | None:
        try:
            info = await asyncio.wait_for(provider.model_info(model_id), LOOKUP_TIMEOUT_S)
        except model.ProviderError as exc:
            self._errors[model_id] = exc
            return None
        except (asyncio.TimeoutError, OSError) as exc:
            self._errors[model_id] = model.ProviderError(f"no answer from the Models API: {exc!r}")
            return None
        if info is not None:
            self._info[model_id] = info
        return info
