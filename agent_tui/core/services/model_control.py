"""Which model a session talks to, and how it thinks: switching, listing, validating.

A switch takes effect on the next request and is journalled (a resumed session goes
on with the model it had). On a switch the window and capabilities are looked up
again, and the user is told once that the earlier model's thinking is left out of
the model view (the API rejects another model's signatures).
"""

from __future__ import annotations

import difflib
from typing import Protocol

from agent_tui.cancel import CancelScope
from agent_tui.core.calls.agent_types import INHERIT
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.journal.journal import JournalWriteError
from agent_tui.core.journal.records import AssistantMessageRecord, ModelChangeRecord
from agent_tui.core.usage.thinking import ThinkingError, parse_thinking
from agent_tui.protocol import (
    ModelChanged,
    ModelInfoItem,
    Models,
    Notice,
    NoticeCode,
    NoticeLevel,
)
from agent_tui.providers import base as model


#: Claude Code's model aliases: each is the newest model of its line the provider lists.
MODEL_ALIASES = ("opus", "sonnet", "haiku")


async def resolve_model(deps: SessionDeps, name: str, scope: CancelScope) -> str:
    """The model id a command's or a sub-agent's ``model:`` names, in Claude Code's
    words: ``inherit`` is the session's model; an alias (``opus``, ``sonnet``,
    ``haiku``) is a cloud's id for it, else the first model the provider lists under it
    (the Models API lists the newest first); anything else is an id. An alias nothing
    is listed under is the session's model, with a warning. Its limits are looked up
    (in the background). Raises ``Cancelled`` when ``scope`` is."""
    chosen = name.strip()
    alias = chosen.lower()
    if not chosen or alias == INHERIT:
        return deps.config.model
    if alias in deps.provider.model_aliases:  # a cloud's own ids
        chosen = deps.provider.model_aliases[alias]
    elif alias in MODEL_ALIASES:
        try:
            async with scope.linked():  # cancel point: asking for the model list
                listed = await deps.provider.list_models()
        except model.ProviderError:
            listed = []
        match = next((m.id for m in listed if alias in m.id.lower()), None)
        if match is None:
            deps.emit(Notice(level=NoticeLevel.WARNING, text=(
                f"model alias {chosen!r}: no such model listed; {deps.config.model} is used")))
            return deps.config.model
        chosen = match
    deps.limits.learn(deps.provider, chosen)
    return chosen


def close_matches(name: str, known: list[str]) -> list[str]:
    return difflib.get_close_matches(name, known, n=3, cutoff=0.5)


class SwitchHooks(Protocol):
    """The ``PreModelSwitch`` and ``PostModelSwitch`` hooks (``core/hooks/work_points.py``)."""

    async def before(self, old: str, new: str, requested: str) -> str:
        """Why the switch may not happen ("" when it may)."""

    async def after(self, old: str, new: str, requested: str) -> None: ...


class ModelControl:
    def __init__(self, deps: SessionDeps) -> None:
        self.deps = deps
        self.switch_hooks: SwitchHooks | None = None

    def restore(self) -> None:
        """A resumed session goes on with the model and thinking it last switched to."""
        for record in reversed(self.deps.journal.records):
            if isinstance(record, ModelChangeRecord):
                self.deps.config.model = record.model
                if record.thinking:
                    try:
                        self.deps.config.thinking = parse_thinking(record.thinking)
                    except ThinkingError:
                        pass
                return

    def changed_event(self) -> ModelChanged:
        cfg = self.deps.config
        return ModelChanged(
            model=cfg.model,
            thinking=str(cfg.thinking),
            context_window=self.deps.limits.window(cfg.model),
            max_output_tokens=self.deps.limits.max_output(cfg.model),
        )

    def _record(self) -> None:
        cfg = self.deps.config
        try:
            self.deps.journal.append(
                ModelChangeRecord(model=cfg.model, thinking=str(cfg.thinking)), durable=True
            )
        except JournalWriteError as exc:
            self.deps.emit(exc.notice())

    async def set_model(self, name: str) -> None:
        asked = name.strip()
        name = self.deps.provider.model_aliases.get(asked.lower(), asked)  # a cloud's ids
        cfg = self.deps.config
        if not name or name == cfg.model:
            self.deps.emit(self.changed_event())
            return
        try:
            info = await self.deps.provider.model_info(name)
        except model.ProviderError as exc:
            if exc.kind is model.ErrorKind.NOT_FOUND:
                known = [m.id for m in await self._list_quietly()]
                near = close_matches(name, known)
                hint = f" Close matches: {', '.join(near)}." if near else ""
                alias = f" ({asked!r} here)" if asked != name else ""
                self.deps.emit(Notice(level=NoticeLevel.ERROR, code=NoticeCode.MODEL_REFUSED,
                                      text=f"unknown model {name!r}{alias}: still using "
                                           f"{cfg.model}.{hint}"))
                return
            info = None  # cannot ask now: switch anyway, the fallbacks apply
            self.deps.emit(Notice(level=NoticeLevel.WARNING, text=(
                f"could not look up {name!r} ({exc}); switching with default limits")))
        old = cfg.model
        refused = await self.switch_hooks.before(old, name, asked) if self.switch_hooks else ""
        if refused:
            self.deps.emit(Notice(level=NoticeLevel.WARNING, code=NoticeCode.MODEL_REFUSED,
                                  text=f"still using {old}: {refused}"))
            self.deps.emit(self.changed_event())
            return
        cfg.model = name
        if info is not None:
            self.deps.limits.remember(info)
        else:
            self.deps.limits.learn(self.deps.provider, name)
        self._record()
        if any(isinstance(r, AssistantMessageRecord) and r.model == old
               and any(b.get("type") in ("thinking", "redacted_thinking") for b in r.blocks)
               for r in self.deps.journal.records):
            self.deps.emit(Notice(level=NoticeLevel.INFO, code=NoticeCode.MODEL_SWITCHED, text=(
                f"switched from {old} to {name}: {old}'s thinking is left out of what "
                f"{name} is sent (the API accepts a model's thinking signatures only "
                "from that model)")))
        self.deps.emit(self.changed_event())
        if self.switch_hooks is not None:
            await self.switch_hooks.after(old, name, asked)

    def set_thinking(self, value: str) -> None:
        try:
            self.deps.config.thinking = parse_thinking(value)
        except ThinkingError as exc:
            self.deps.emit(Notice(level=NoticeLevel.ERROR, text=str(exc)))
            return
        self._record()
        self.deps.emit(self.changed_event())

    async def _list_quietly(self) -> list[model.ModelInfo]:
        try:
            return await self.deps.provider.list_models()
        except model.ProviderError:
            return []

    async def list_models(self) -> Models:
        cfg = self.deps.config
        try:
            found = await self.deps.provider.list_models()
            error = ""
        except model.ProviderError as exc:
            found, error = [], str(exc)
        return Models(
            current=cfg.model,
            error=error,
            models=[
                ModelInfoItem(id=m.id, display_name=m.display_name,
                              context_window=m.max_input_tokens, max_output_tokens=m.max_tokens)
                for m in found
            ],
        )


async def validate_model(provider: model.Provider, name: str) -> str | None:
    """None when ``name`` is known or cannot be checked; else the message to show."""
    try:
        await provider.model_info(name)
    except model.ProviderError as exc:
        if exc.kind is not model.ErrorKind.NOT_FOUND:
            return None
        try:
            known = [m.id for m in await provider.list_models()]
        except model.ProviderError:
            return None  # no Models API (a gateway): the 404 says nothing of the model
        near = close_matches(name, known)
        hint = f"; close matches: {', '.join(near)}" if near else ""
        return f"unknown model {name!r}{hint}"
    return None
