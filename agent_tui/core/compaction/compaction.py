"""Compaction: the conversation so far, summarized by the model, stands for itself.

The summary is asked for with an ordinary Messages request: the same system prompt,
tools and messages as the turn's requests (so it reads them from the prompt cache),
with one more user text asking for the summary. The journal keeps everything: a
``CompactionRecord`` names the records the summary replaces, and the model view
(``history.model_records``) puts the summary in their place. The cut is at the start
of the running turn (its messages, queued steers and the note that the turn before
was interrupted stay verbatim), so it never falls between a ``tool_use`` and its
``tool_result``; when idle, everything is summarized.

A summary request that would not fit the window is cut before it is sent: a ``prompt
is too long: N tokens > M maximum`` rejection (of the turn's request or of the summary
request) says the window and how many tokens the rejected messages took, so the oldest
turns are left out of the summary request until it fits (:func:`_fit`) instead of
being sent and rejected again. The window learnt from it serves the rest of the
session (:meth:`~agent_tui.core.usage.limits.ModelLimits.learn_from_overflow`).

Cancel points, each marked ``# cancel point``: before the summary request, and while
it streams. A cancelled or failed compaction writes nothing: the history is exactly
as it was, and the caller says so.
"""

from __future__ import annotations

import json
import uuid
from bisect import bisect_left
from collections.abc import Callable
from typing import Any, assert_never

from agent_tui import crash_points
from agent_tui.cancel import Cancelled, CancelScope
from agent_tui.core.usage.cache import mark_messages, system_blocks
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.history.history import build_view, check_model_view
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.journal.journal import JournalWriteError
from agent_tui.core.usage.limits import Overflow
from agent_tui.core.services.model_call import ModelCall
from agent_tui.core.services.model_control import ModelControl
from agent_tui.core.journal.records import AssistantMessageRecord, CompactionRecord, UserMessageRecord
from agent_tui.protocol import (
    Compaction,
    CompactionState,
    CompactionTrigger,
    HookDecision,
    Notice,
    NoticeLevel,
    RequestPurpose,
)
from agent_tui.providers import base as model

SUMMARY_ASK = """\
Stop here: do not call any tool. Write a summary of this conversation so far, to \
replace it: the conversation will go on from your summary alone, so keep what is \
needed to continue the work and nothing else. Cover:
1. The user's goals and requests, in their words where it matters, and any \
constraints or preferences they gave.
2. Decisions made and why.
3. Files read, created or changed (paths), and what changed in each.
4. Commands run that matter, and their results (tests passing or failing, errors).
5. What is done, and what is unfinished: the next steps.
6. What was interrupted, denied or has an unknown result: name the tool call and \
say that its effect must be checked before it is redone.
Write plain prose and lists; no preamble."""

MAX_SHRINKS = 6  # if the summary request itself is too long: drop older parts, retry
FIT_SHARE = 0.85  # a summary request cut to fit is made to take this share of the window


class CompactionFailed(Exception):
    """The compaction did not happen; the history is unchanged."""


def estimate_tokens(obj: Any) -> int:
    """A rough count for figures shown before the API has counted (4 chars a token)."""
    return max(1, len(json.dumps(obj, ensure_ascii=False)) // 4)


def _ask(messages: list[dict[str, Any]], focus: str) -> list[dict[str, Any]]:
    text = SUMMARY_ASK + (f"\n\nFocus especially on: {focus}" if focus.strip() else "")
    asked = [dict(m, content=list(m["content"])) for m in messages]
    if asked and asked[-1]["role"] == "user":
        asked[-1]["content"].append({"type": "text", "text": text})
    else:
        asked.append({"role": "user", "content": [{"type": "text", "text": text}]})
    return asked


def _drop_oldest(messages: list[dict[str, Any]], share: float) -> list[dict[str, Any]]:
    """The newest part of ``messages``: cut at a user message that starts a turn (no
    tool results in it), so no tool_use loses its result."""
    starts = [
        i for i, m in enumerate(messages)
        if i > 0 and m["role"] == "user"
        and not any(b.get("type") == "tool_result" for b in m["content"])
    ]
    if not starts:
        return messages
    want = int(len(messages) * share)
    cut = next((i for i in starts if i >= want), starts[-1])
    return messages[cut:]


def _chars(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False))


def _fit(messages: list[dict[str, Any]], budget_chars: float) -> list[dict[str, Any]]:
    """The newest part of ``messages`` that takes at most ``budget_chars``, cut at a
    user message that starts a turn (no tool_use loses its result); all of them when
    they fit, the newest turn when nothing smaller does."""
    sizes = [_chars(m) for m in messages]
    excess = sum(sizes) - budget_chars
    if excess <= 0:
        return messages
    dropped = 0
    for i, m in enumerate(messages):
        if i > 0 and dropped >= excess and m["role"] == "user" and not any(
                b.get("type") == "tool_result" for b in m["content"]):
            return messages[i:]
        dropped += sizes[i]
    return _drop_oldest(messages, 1.0)


def learn_window(deps: SessionDeps, error: Exception) -> Overflow | None:
    """A ``prompt is too long`` rejection's figures; its window is learnt for the
    model (and said, once per change: the context meter follows)."""
    model_id = deps.config.model
    before = deps.limits.window(model_id)
    found = deps.limits.learn_from_overflow(model_id, error)
    if found is not None and found.window != before:
        deps.emit(Notice(level=NoticeLevel.INFO, text=(
            f"the API says {model_id}'s context window is {found.window:,} tokens (it "
            f"rejected a prompt of {found.prompt_tokens:,}); compacting ahead of it from now on")))
        deps.emit(ModelControl(deps).changed_event())
    return found


class Compactor:
    def __init__(self, deps: SessionDeps, system: str, window: int) -> None:
        self.deps = deps
        self.system = system
        self.window = window

    def _emit(self, event: Any) -> None:
        self.deps.emit(event)

    async def compact(
        self,
        *,
        turn_id: str,
        scope: CancelScope,
        trigger: CompactionTrigger,
        focus: str = "",
        keep_from_seq: int | None = None,
        thinking: dict[str, Any] | None = None,
        max_tokens: int = 8192,
        overflow: Overflow | None = None,
    ) -> CompactionRecord:
        """Summarize; raises Cancelled (history unchanged) or CompactionFailed.

        ``overflow``: the rejection that made this compaction due, if one did (its
        prompt was the conversation as it is now): the summary request is cut to fit."""
        cfg = self.deps.config
        records = self.deps.journal.records
        view = build_view(records, cfg.model)
        last = self.deps.usage.last
        before = last.context_tokens if last is not None else estimate_tokens(view.messages)
        focus = await self._pre_compact(turn_id, scope, trigger, focus)
        self._emit(Compaction(state=CompactionState.STARTED, trigger=trigger, tokens_before=before))
        try:
            summary = await self._summarize(view.messages, turn_id, scope, focus, thinking,
                                            max_tokens, overflow)
        except Cancelled:
            self._emit(Compaction(state=CompactionState.CANCELLED, trigger=trigger,
                                  tokens_before=before, tokens_after=before,
                                  detail="the conversation is unchanged"))
            self._emit(Notice(level=NoticeLevel.INFO,
                              text="compaction cancelled: the conversation is unchanged"))
            raise
        except (model.ProviderError, CompactionFailed) as exc:
            self._emit(Compaction(state=CompactionState.FAILED, trigger=trigger,
                                  tokens_before=before, tokens_after=before, detail=str(exc)))
            raise CompactionFailed(str(exc)) from exc
        if keep_from_seq is None:
            keep_from_seq = (records[-1].seq + 1) if records else 1
        # The records are in seq order: the last one before the kept part, by bisection.
        cut = bisect_left(records, keep_from_seq, key=lambda r: r.seq)
        record = CompactionRecord(
            compaction_id=f"c_{uuid.uuid4().hex[:12]}",
            summary=summary,
            kept_from_seq=keep_from_seq,
            replaced_through_seq=records[cut - 1].seq if cut else 0,
            tokens_before=before,
            trigger=trigger,
            focus=focus,
        )
        after_view = build_view([*records, record], cfg.model).messages
        record.tokens_after = estimate_tokens(after_view) + estimate_tokens(self.system) + (
            estimate_tokens(self.deps.tools.specs())
        )
        try:
            self.deps.journal.append(record, durable=True)
        except JournalWriteError as exc:
            self._emit(Compaction(state=CompactionState.FAILED, trigger=trigger,
                                  tokens_before=before, tokens_after=before,
                                  detail=f"not saved: {exc}"))
            raise CompactionFailed(f"the summary could not be saved: {exc}") from exc
        self.deps.usage.forget()
        # The results before the kept part's last user message are in no view now.
        last_user = next((records[i].seq for i in range(cut - 1, -1, -1)
                          if isinstance(records[i], UserMessageRecord)), None)
        if last_user is not None:
            self.deps.journal.let_go_output(last_user)
        self._emit(Compaction(state=CompactionState.COMPLETED, trigger=trigger,
                              tokens_before=before, tokens_after=record.tokens_after))
        if self.deps.hooks is not None:  # as Claude Code: SessionStart with source
            # "compact" (its context joins the next request), then PostCompact (told)
            kind = "manual" if trigger is CompactionTrigger.MANUAL else "auto"
            points = HookPoints(self.deps, scope, self._record, turn_id)
            await points.session_start("compact")
            await points.post_compact(kind, summary)
        return record

    async def _pre_compact(
        self, turn_id: str, scope: CancelScope, trigger: CompactionTrigger, focus: str
    ) -> str:
        """PreCompact hooks: a block stops the compaction; context joins the focus."""
        if self.deps.hooks is None:
            return focus
        kind = "manual" if trigger is CompactionTrigger.MANUAL else "auto"
        answer = await HookPoints(self.deps, scope, self._record, turn_id).pre_compact(kind, focus)
        scope.raise_if_cancelled()  # cancel point: a hook ended by Esc
        if answer.decision is HookDecision.BLOCK:
            raise CompactionFailed(f"a PreCompact hook blocked it: {answer.reason or 'no reason'}")
        return "\n".join([focus, *answer.context]).strip()

    async def _summarize(
        self,
        messages: list[dict[str, Any]],
        turn_id: str,
        scope: CancelScope,
        focus: str,
        thinking: dict[str, Any] | None,
        max_tokens: int,
        overflow: Overflow | None = None,
    ) -> str:
        if not messages:
            raise CompactionFailed("there is nothing to compact yet")
        fixed = _chars(self.system) + _chars(self.deps.tools.specs())
        part = messages
        if overflow is not None:
            part = self._fitted(part, overflow, fixed + _chars(messages), fixed)
        for _attempt in range(MAX_SHRINKS + 1):
            asked = _ask(part, focus)
            check_model_view(asked)
            try:
                return await self._request(asked, turn_id, scope, thinking, max_tokens)
            except model.ProviderError as exc:
                if exc.kind is not model.ErrorKind.CONTEXT_OVERFLOW:
                    raise
                found = learn_window(self.deps, exc)
                shorter = part
                if found is not None:
                    self.window = found.window
                    shorter = self._fitted(part, found, fixed + _chars(asked), fixed)
                if len(shorter) == len(part):
                    shorter = _drop_oldest(part, 0.5)
                if len(shorter) == len(part):
                    raise CompactionFailed(
                        "even the newest part of the conversation does not fit the window"
                    ) from exc
                part = shorter
        raise CompactionFailed("the summary request did not fit the window")

    def _fitted(self, part: list[dict[str, Any]], overflow: Overflow, rejected_chars: int,
                fixed_chars: int) -> list[dict[str, Any]]:
        """``part`` cut to take FIT_SHARE of the window, at the rate (tokens per
        character) the rejected request was counted at."""
        rate = overflow.prompt_tokens / max(1, rejected_chars)
        budget = FIT_SHARE * overflow.window / rate - fixed_chars - _chars(SUMMARY_ASK)
        return _fit(part, budget)

    async def _request(
        self,
        messages: list[dict[str, Any]],
        turn_id: str,
        scope: CancelScope,
        thinking: dict[str, Any] | None,
        max_tokens: int,
    ) -> str:
        cfg = self.deps.config
        cached = cfg.prompt_cache
        request = model.ModelRequest(
            model=cfg.model,
            system=system_blocks(self.system) if cached else self.system,
            messages=mark_messages(messages) if cached else messages,
            tools=self.deps.tools.specs(),
            max_tokens=max_tokens,
            thinking=thinking,
        )
        scope.raise_if_cancelled()  # cancel point: before the summary request
        crash_points.reached("compaction:request")  # a crash trial may kill here (or mid-stream)
        asking = ModelCall(self.deps, scope, turn_id=turn_id, purpose=RequestPurpose.COMPACTION,
                           record=self._record, emit=self._emit, window=lambda: self.window,
                           label="compaction: ")
        texts: dict[int, str] = {}

        def fresh() -> Callable[[model.StreamEvent], None]:
            texts.clear()  # a try again starts the summary over
            return lambda event: _summary_text(texts, event)

        # cancel points inside: while the summary streams, and during a retry's back-off
        streamed, _tries = await asking.ask(request, fresh, shown=lambda: bool(texts))
        if streamed.error is not None:
            raise streamed.error
        summary = "\n".join(t for _i, t in sorted(texts.items()) if t.strip()).strip()
        if not summary:
            raise CompactionFailed("the model gave an empty summary")
        return summary

    def _record(self, record: Any) -> bool:
        try:
            self.deps.journal.append(record)
            return True
        except JournalWriteError as exc:
            self._emit(exc.notice())
            return False


def turn_start_seq(records: list[Any], turn_id: str) -> int | None:
    """The seq of ``turn_id``'s user message: where a compaction during it cuts."""
    for record in records:
        if isinstance(record, UserMessageRecord) and record.turn_id == turn_id:
            return record.seq
    return None


def last_step_seq(records: list[Any], turn_id: str) -> int | None:
    """The seq of ``turn_id``'s newest model reply: a cut there keeps its step (the
    reply and the tool results after it) and nothing of the turn before."""
    seqs = [r.seq for r in records
            if isinstance(r, AssistantMessageRecord) and r.turn_id == turn_id]
    return seqs[-1] if seqs else None


def _summary_text(texts: dict[int, str], event: model.StreamEvent) -> None:
    """The summary is its text alone: each text block's deltas, joined by index."""
    match event:
        case model.TextDelta():
            texts[event.index] = texts.get(event.index, "") + event.text
        case (model.MessageStarted() | model.MessageEnded() | model.TextStarted()
              | model.ThinkingStarted() | model.ThinkingDelta() | model.SignatureDelta()
              | model.RedactedThinking() | model.CitationDelta() | model.OtherBlockStarted()
              | model.ToolUseStarted() | model.ToolInputDelta() | model.BlockStopped()):
            pass
        case _:
            assert_never(event)
