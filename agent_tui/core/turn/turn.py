"""The agent loop of one turn: model call -> tool batch -> (steer) -> model call ...

Cancel points, each marked ``# cancel point``: before each model request, while an
unknown model's first request waits for what the model offers, while the stream is
read (a stalled read is interrupted, not waited out), during retry back-off, and those
of the tool batch (``core/turn/tool_runner.py``). A cancel runs in two phases: the
entrance closes (no new request, retry or tool start; queued calls
become ``cancelled_before_start``), then running tools get a bounded cleanup budget
to stop and report what they know. A tool that finished before or while the cancel
arrived keeps its real result.
"""

from __future__ import annotations

from collections.abc import Sequence
import asyncio
import logging
import time
import traceback
from typing import Any, assert_never

from agent_tui.cancel import Cancelled, CancelReason, CancelScope
from agent_tui.core.usage.budget import BudgetReached, LimitReached
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.services.model_call import ModelCall, StreamEnding
from agent_tui.core.compaction.compaction import (
    CompactionFailed,
    Compactor,
    last_step_seq,
    learn_window,
    turn_start_seq,
)
from agent_tui.core.usage.limits import Overflow
from agent_tui.core.usage.thinking import depends_on_model
from agent_tui.core.history.history import ModelViewError, build_view, check_model_view
from agent_tui.core.hooks.hook_points import PromptBlocked
from agent_tui.core.hooks.work_points import tool_batch
from agent_tui.core.journal.records import (
    ModelRequestRecord,
    SteerRecord,
    TurnEndedRecord,
    UserMessageRecord,
)
from agent_tui.core.turn.reply import Reply, ReplyReader, StopReason
from agent_tui.core.turn.request import build_request, thinking_params
from agent_tui.protocol import (
    CompactionTrigger,
    ImageAttachment,
    Notice,
    NoticeLevel,
    RequestPurpose,
    SteerDelivery,
    SteerState,
    SteerStatus,
    TurnEnded,
    TurnStarted,
    TurnState,
    TurnStatus,
)
from agent_tui.core.turn.tool_runner import ToolRunner
from agent_tui.core.turn.turn_log import ToolCall, TurnLog
from agent_tui.providers import base as model

log = logging.getLogger(__name__)

#: Replies cut at ``max_tokens`` in a row after which the turn asks the model to go on
#: (Claude Code's three); after one more the turn ends, saying so.
MAX_CUT_CONTINUES = 3

class Turn:
    def __init__(
        self,
        deps: SessionDeps,
        turn_id: str,
        scope: CancelScope,
        text: str,
        checkpoint: asyncio.Task[None] | None = None,
        ready: asyncio.Future[Any] | None = None,
        images: Sequence[ImageAttachment] = (),
    ) -> None:
        self.deps = deps
        self.id = turn_id
        self.scope = scope
        self.text = text
        self.images = list(images)
        self.ready = ready
        self.log = TurnLog(deps, turn_id)
        self.reader = ReplyReader(self.log, scope)
        self.asking = ModelCall(deps, scope, turn_id=turn_id, purpose=RequestPurpose.TURN,
                                record=self.log.record, emit=self.log.emit)
        self.runner = ToolRunner(self.log, scope, checkpoint)
        self._compaction_due: CompactionTrigger | None = None
        self._told_left_out: set[str] = set()
        self._overflow: Overflow | None = None  # the rejection that made it due, if one did
        self._cuts_continued = 0  # replies cut at max_tokens in a row the turn went on after

    @property
    def state(self) -> TurnState:
        return self.log.state

    @property
    def calls(self) -> dict[str, ToolCall]:
        return self.log.calls

    # -- the loop -------------------------------------------------------------------

    async def run(self) -> TurnEnded:
        self._loop = asyncio.get_running_loop()
        log = self.log
        log.emit(TurnStarted(turn_id=self.id, text=self.text, images=[i.label for i in self.images]))
        watch = self.scope.on_cancel(self._cancel_requested)
        status, detail = TurnStatus.COMPLETED, ""
        closed_by: CancelReason | None = None  # what ends unstarted calls, if not a cancel
        failure: model.ProviderError | None = None  # the API error that ended it (StopFailure)
        why = ""
        hooks = self.runner.hooks
        try:
            await self._previous_stops()
            log.record(UserMessageRecord(turn_id=self.id, text=self.text, images=self.images),
                       durable=True)
            await self._until_ready()  # SessionStart hooks end before UserPromptSubmit's
            await hooks.prompt(self.text)  # UserPromptSubmit: may block the prompt
            while True:
                reply = await self._call_model()
                self.reader.record(reply, self.deps.config.model)
                calls = reply.complete_calls()
                if self.scope.cancelled:
                    self.runner.close_entrance(calls)
                    break
                if calls:  # --max-budget-usd: past the cap, this reply's calls never run
                    self.deps.budget.check_spend(self.deps.config.model, priced=True)
                go_on = self._after_reply(reply, calls)
                if not calls and not go_on:
                    if await hooks.stop_goes_on():  # Stop: a hook may ask it to go on
                        continue
                    break
                if calls:
                    since = len(self.deps.journal.records)
                    await self._run_batch(calls)
                    await tool_batch(hooks, [c.id for c in calls], since)  # PostToolBatch
                    if self.scope.cancelled or hooks.stop_reason is not None:
                        break
                    self._apply_steers()
        except Cancelled:
            pass
        except BudgetReached as exc:  # the cap: the turn ends as if interrupted, saying why
            detail = str(exc)
            self.scope.cancel(CancelReason.BUDGET)
        except (PromptBlocked, LimitReached) as exc:
            status, detail = TurnStatus.FAILED, str(exc)
            closed_by, why = CancelReason.TURN_FAILED, detail  # calls it left unstarted
        except model.ProviderError as exc:
            failure = exc
            status, detail = TurnStatus.FAILED, f"model request failed: {exc}"
            closed_by, why = CancelReason.STREAM_FAILED, f"the model's reply stream failed: {exc}"
        except ModelViewError as exc:
            status, detail = TurnStatus.FAILED, f"internal error, request not sent: {exc}"
            closed_by, why = CancelReason.TURN_FAILED, detail
        except Exception as exc:  # a bug: say so, keep the session alive
            status, detail = TurnStatus.FAILED, f"internal error: {exc!r}"
            closed_by, why = CancelReason.TURN_FAILED, detail
            log.emit(Notice(level=NoticeLevel.ERROR, text=traceback.format_exc()))
        finally:
            watch.remove()
        if self.scope.reason is CancelReason.BUDGET:
            closed_by, why = CancelReason.BUDGET, detail  # the cap closed them, not the user
        elif self.scope.cancelled:
            closed_by, why = None, ""  # the user's interrupt closed them
        self.runner.close_entrance(list(self.calls.values()), closed_by, why)
        if self.scope.cancelled:
            status = TurnStatus.CANCELLED
            if log.state is TurnState.RUNNING:
                log.set_turn_state(TurnState.CANCELLING)
            log.set_turn_state(TurnState.CANCELLED, self._cancel_summary())
        else:
            log.set_turn_state(
                TurnState.COMPLETED if status is TurnStatus.COMPLETED else TurnState.FAILED, detail
            )
        if detail:
            log.emit(Notice(level=NoticeLevel.ERROR, text=detail))
        log.record(TurnEndedRecord(turn_id=self.id, status=status, detail=detail), durable=True)
        ended = TurnEnded(turn_id=self.id, status=status, detail=detail)
        log.emit(ended)
        # After the turn is said ended (a hook never delays the stop): Interrupt after
        # Esc, StopFailure after an API error.
        if status is TurnStatus.CANCELLED:
            await hooks.interrupted()
        elif failure is not None:
            await hooks.stop_failure(failure)
        return ended

    async def _previous_stops(self) -> None:
        """The calls an interrupted turn left stopping report first: their results go in
        the journal before this prompt, and the first request says how they ended."""
        stopping = self.deps.stopping
        if not stopping:
            return
        # Esc while they stop hurries them (SIGKILL now); the prompt is recorded after them.
        def hurry_them(_reason: CancelReason) -> None:
            self._loop.call_soon_threadsafe(stopping.hurry)

        hurry = self.scope.on_cancel(hurry_them)
        try:
            await stopping.settled()
        finally:
            hurry.remove()

    async def _run_batch(self, calls: list[ToolCall]) -> None:
        """The batch, until it ends or the turn is interrupted: then the turn ends at once,
        and a call still stopping goes on stopping after it (``core/services/stopping.py``)."""
        settle = self.deps.config.stop_settle_s
        if settle is None:
            return await self.runner.run_batch(calls)
        batch = asyncio.ensure_future(self.runner.run_batch(calls))
        stop = asyncio.ensure_future(self.scope.wait())
        try:
            await asyncio.wait({batch, stop}, return_when=asyncio.FIRST_COMPLETED)
            asked = time.monotonic()
            if not batch.done():  # most calls end at TERM within milliseconds
                await asyncio.wait({batch}, timeout=settle)
        except asyncio.CancelledError:
            batch.cancel()
            raise
        finally:
            stop.cancel()
        if batch.done():
            return batch.result()
        self.runner.show_stopping(time.monotonic() - asked)
        self.deps.stopping.add(self._outlived(batch), self.scope)

    async def _outlived(self, batch: asyncio.Future[None]) -> None:
        try:
            await batch
        except Exception as exc:  # a bug: say so; the next turn must not hang on it
            self.log.emit(Notice(level=NoticeLevel.ERROR, text=f"internal error: {exc!r}"))

    def _after_reply(self, reply: Reply, calls: list[ToolCall]) -> bool:
        """What the stop reason asks: True when the turn goes on without tool calls."""
        stop = reply.stop_reason
        if stop == StopReason.PAUSE_TURN:
            return True  # send the paused content back: the model goes on
        if stop == StopReason.CONTEXT_WINDOW_EXCEEDED:
            self._compaction_due = CompactionTrigger.OVERFLOW
            return True
        if stop == StopReason.REFUSAL:
            self.log.emit(Notice(level=NoticeLevel.WARNING, text=(
                "the model declined to go on with this request (stop reason: refusal)")))
        elif stop == StopReason.MAX_TOKENS and not calls:
            if self._cuts_continued < MAX_CUT_CONTINUES:  # as Claude Code: ask it to go on
                self._cuts_continued += 1
                return True
            self.log.emit(Notice(level=NoticeLevel.WARNING, text=(
                f"the answer was cut off at the output limit (max_tokens) "
                f"{MAX_CUT_CONTINUES + 1} times in a row; the model is told so with your "
                "next message and may go on")))
        self._cuts_continued = 0
        return False

    def _cancel_requested(self, reason: CancelReason) -> None:
        # Runs on the cancelling thread; move to the loop to touch state.
        try:
            self._loop.call_soon_threadsafe(self._enter_cancelling)
        except RuntimeError:
            pass

    def _enter_cancelling(self) -> None:
        if self.log.state is not TurnState.RUNNING:
            return
        running = self.runner.running_at_cancel = len(self.runner.running)
        self.log.set_turn_state(
            TurnState.CANCELLING,
            f"{running} tool call{'s' if running != 1 else ''} running" if running else "",
        )

    def _cancel_summary(self) -> str:
        counts: dict[str, int] = {}
        for call in self.calls.values():
            counts[call.state] = counts.get(call.state, 0) + 1
        return ", ".join(f"{n} {state}" for state, n in counts.items())

    # -- model calls ------------------------------------------------------------------

    async def _until_ready(self) -> None:
        if self.ready is not None and not self.ready.done():
            async with self.scope.linked():  # cancel point: waiting for tools to be ready
                await asyncio.shield(self.ready)

    async def _call_model(self) -> Reply:
        attempt = 0
        overflows = 0
        cfg = self.deps.config
        await self._until_ready()
        counted = self.deps.depth > 0  # a sub-agent's steps are its task call's
        while True:
            self.scope.raise_if_cancelled()  # cancel point: before each model request
            if not counted:
                self.deps.budget.spend()  # --max-turns: the turn may end here
                counted = True
            await self._know_the_model()
            await self._compact_if_due(overflows)
            view = build_view(self.deps.journal.records, cfg.model)
            self._tell_left_out(view.images_left_out)
            check_model_view(view.messages)
            request = build_request(self.deps, view)
            self.log.record(
                ModelRequestRecord(
                    turn_id=self.id, attempt=attempt + 1, messages=len(view.messages),
                    model=cfg.model,
                )
            )
            reply = await self._stream_reply(request)
            error = reply.error
            if error is None:
                return reply
            if error.kind is model.ErrorKind.CONTEXT_OVERFLOW and reply.empty and overflows < 2:
                # The API said the prompt is too long (and how long the window is):
                # compact, then try once more.
                overflows += 1
                self._compaction_due = CompactionTrigger.OVERFLOW
                self._overflow = learn_window(self.deps, error)
                continue
            delay = self.asking.retry_delay(error, attempt, shown=not reply.empty)
            if delay is None:
                # Text already shown cannot be taken back by a retry: end the turn.
                self.reader.record(reply, cfg.model)
                raise error
            attempt += 1
            await self.asking.back_off(error, attempt, delay)  # cancel point inside

    async def _know_the_model(self) -> None:
        """A model neither the Models API nor the table knows: what its first request
        sends depends on the lookup already on its way, so the request waits for it
        (bounded by the lookup's own timeout). Once it has ended, nothing waits."""
        cfg = self.deps.config
        if not depends_on_model(cfg.thinking, cfg.effort):
            return
        lookup = self.deps.limits.pending(self.deps.provider, cfg.model)
        if lookup is None:
            return
        started = time.monotonic()
        async with self.scope.linked():  # cancel point: waiting for the model's lookup
            await asyncio.wait([lookup])
        log.debug("the first request to %s waited %.2fs for the Models API (model not in "
                  "the table of known models)", cfg.model, time.monotonic() - started)

    def _tell_left_out(self, left_out: list[str]) -> None:
        """Images the request cannot hold are left out of it: said once a turn each."""
        new = [why for why in left_out if why not in self._told_left_out]
        if not new:
            return
        self._told_left_out.update(new)
        self.log.emit(Notice(level=NoticeLevel.WARNING, text=(
            f"{len(new)} image{'s' if len(new) != 1 else ''} of the conversation left out of "
            "the request (the journal keeps them): " + "; ".join(new))))

    async def _compact_if_due(self, overflows: int) -> None:
        cfg = self.deps.config
        window = self.deps.limits.window(cfg.model)
        trigger = self._compaction_due
        if trigger is None and self.deps.usage.needs_compaction(window):
            trigger = CompactionTrigger.AUTO
        if trigger is None:
            return
        self._compaction_due = None
        overflow, self._overflow = self._overflow, None
        records = self.deps.journal.records
        keep_from = turn_start_seq(records, self.id)
        if overflows > 1:
            # The turn itself no longer fits: keep only its newest step verbatim.
            keep_from = last_step_seq(records, self.id) or keep_from
        params = thinking_params(self.deps)
        try:
            await Compactor(self.deps, cfg.system, window).compact(
                turn_id=self.id, scope=self.scope, trigger=trigger,
                keep_from_seq=keep_from, thinking=params.thinking, max_tokens=params.max_tokens,
                overflow=overflow,
            )  # cancel points inside: before and while the summary request streams
        except CompactionFailed as exc:
            self.log.emit(Notice(level=NoticeLevel.WARNING, text=(
                f"compaction failed: {exc}. The conversation is unchanged.")))
            return
        self._apply_steers()  # steers queued while it ran ride with this request

    async def _stream_reply(self, request: model.ModelRequest) -> Reply:
        reply = Reply()
        # cancel point inside: while the stream is read
        streamed = await self.asking.stream(request, lambda event: self.reader.on_event(reply, event))
        self.deps.budget.api_seconds += streamed.seconds
        match streamed.ending:
            case StreamEnding.COMPLETED:
                reply.ended = reply.stop_reason or "end_turn"
            case StreamEnding.CANCELLED:
                reply.ended = "cancelled"
            case StreamEnding.FAILED:
                reply.ended, reply.error = "error", streamed.error
            case _:
                assert_never(streamed.ending)
        self.reader.settle(reply)
        return reply

    # -- steering ---------------------------------------------------------------------

    def cancel_call(self, tool_use_id: str) -> bool:
        """Stop one running call, leaving the turn to go on."""
        return self.runner.cancel_call(tool_use_id)

    def send_to_background(self) -> int:
        """Move running calls that can keep running in the background there."""
        return self.runner.send_to_background()

    def _apply_steers(self) -> None:
        """Steers ride after this batch's tool results, before the next model call."""
        for item in self.deps.queue.take_steers():
            self.log.record(
                SteerRecord(
                    id=item.id, steer_kind=item.kind, state=SteerStatus.APPLIED, text=item.text,
                    turn_id=self.id, delivery=SteerDelivery.INJECTED, images=item.images,
                )
            )
            self.log.emit(SteerState(id=item.id, state=SteerStatus.APPLIED, kind=item.kind,
                                     text=item.text, images=[i.label for i in item.images]))

