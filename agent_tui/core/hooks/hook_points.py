"""Where the core runs the user's hooks, and what it makes of their answers.

:class:`HookPoints` serves one turn (or the session, for ``SessionStart`` and
``PreCompact``): it asks the :class:`~agent_tui.core.services.hooks_port.HooksPort` under the scope
of what the hooks gate, tells the front ends while they run (``hook`` events: the
tools pane shows "checked by hook"), journals each command's run (``HookRecord``,
whose ``context`` is what the model is told because of it) and turns the answer into
what the caller needs: a gate for a tool call, a blocked prompt, whether to go on.

- ``PreToolUse``: before the permission check. Esc while it runs ends the hooks and
  raises :class:`~agent_tui.cancel.Cancelled`: the call never starts. An
  ``updatedInput`` replaces fields of the call's input (:meth:`HookPoints.changed_input`):
  the call is checked and runs as changed, or, changed into nothing valid, never starts.
- ``PostToolUse``: after a call succeeded; its feedback reaches the model as a note.
  ``PostToolUseFailure`` the same after a call that failed by itself (not one Esc
  ended: the ``Interrupt`` event tells of those).
- ``UserPromptSubmit``: when a turn starts; a block raises :class:`PromptBlocked`
  (the prompt never reaches the model), context rides with the prompt.
- ``Stop``: when the model stops on its own; a block asks it to go on, at most
  ``max_stop_continues`` times in a row.
- ``SessionStart``: context for the first request, and the variables the hooks wrote
  to ``CLAUDE_ENV_FILE``, added to the environment of the session's commands.
  ``PreCompact``: the answer, for the compaction to honour.

Before any hook runs, the session's transcript in Claude Code's shape
(``claude_transcript.py``, the hooks' ``transcript_path``) is brought up to date.

A hook answering ``"continue": false`` ends the turn after the current tool batch
(``stop_reason``). A sub-agent runs tool hooks, whose input then carries its
``agent_id`` and ``agent_type``; ``SubagentStart`` before its first request (context
for it), and ``SubagentStop`` where the main agent runs ``Stop`` (a block keeps it
working, under the same loop guard); never ``UserPromptSubmit`` (it has no user
prompt). ``SessionEnd``: when the session ends (``reason``); it cannot block.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, assert_never

from agent_tui.cancel import Cancelled, CancelReason, CancelScope
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.services.hooks_port import HookAnswer, HookBase, HookRun
from agent_tui.core.history.items import Reply, ToolCall, read_items
from agent_tui.core.journal.records import HookRecord
from agent_tui.core.calls.permission import decided_by, Ruling
from agent_tui.core.hooks.task_points import plan_hooks
from agent_tui.protocol import HookStateChanged, Notice, NoticeLevel, Verdict
from agent_tui.core.calls.tool import InvalidInput, AnyTool, ToolResult
from agent_tui.protocol.states import HookDecision, HookEvent, HookRunState, ToolState
from agent_tui.protocol.tool_names import claude_name, writes_plan
from agent_tui.providers.base import ErrorKind, ProviderError

E = HookEvent


class PromptBlocked(Exception):
    """A ``UserPromptSubmit`` hook blocked the prompt: the turn ends, the model never sees it."""


def model_note(event: HookEvent, text: str) -> str:
    """How a hook's words are put to the model."""
    return f"[{event} hook] {text.strip()}"


def gated(ruling: Ruling, answer: HookAnswer) -> Ruling:
    """The permission ruling once ``PreToolUse`` hooks had their say: a block denies;
    ask asks even where the settings allow; allow skips the ask of the permission
    mode (never a deny or ask rule: those are the user's own words)."""
    rule, reason = f"hook:{E.PRE_TOOL_USE}", answer.reason
    if answer.decision is HookDecision.BLOCK:
        return Ruling(verdict=Verdict.DENY, rule=rule, reason=reason or "blocked by a hook")
    if answer.decision is HookDecision.ASK and ruling.verdict is Verdict.ALLOW:
        return Ruling(verdict=Verdict.ASK, rule=rule, reason=reason or "a hook asks",
                      confinement=ruling.confinement)
    if answer.decision is HookDecision.ALLOW and decided_by(ruling.rule) == "mode":
        return Ruling(verdict=Verdict.ALLOW, rule=rule, reason=reason or "allowed by a hook")
    return ruling


def unless_blocked(answer: HookAnswer, run: HookRun) -> str:
    """A run's context for the model, unless the hooks blocked what it rides with."""
    return "" if answer.decision is HookDecision.BLOCK else run.context


def last_assistant_text(records: list[Any]) -> str:
    """The text of the model's last answer (``last_assistant_message``)."""
    replies = [item for item in read_items(records).items if isinstance(item, Reply)]
    if not replies:
        return ""
    return "\n".join(b.get("text", "") for b in replies[-1].blocks if b.get("type") == "text")


def _failure_kind(exc: ProviderError) -> str:
    """An API error in Claude Code's words for ``StopFailure``'s ``error`` (its matcher)."""
    if exc.status == 402:
        return "billing_error"
    match exc.kind:
        case ErrorKind.RATE_LIMIT:
            return "rate_limit"
        case ErrorKind.AUTHENTICATION | ErrorKind.PERMISSION:
            return "authentication_failed"
        case ErrorKind.INVALID | ErrorKind.TOO_LARGE | ErrorKind.NOT_FOUND | ErrorKind.CONTEXT_OVERFLOW:
            return "invalid_request"
        case ErrorKind.SERVER | ErrorKind.OVERLOADED:
            return "server_error"
        case ErrorKind.CONNECTION | ErrorKind.OTHER:
            return "unknown"
        case _:
            assert_never(exc.kind)


def _after(result: ToolResult) -> HookEvent | None:
    """The event that follows a call's end: None for one that never ran or was cut off."""
    if result.outcome is ToolState.SUCCEEDED:
        return E.POST_TOOL_USE
    if result.outcome is ToolState.FAILED:
        return E.POST_TOOL_USE_FAILURE
    return None


def _short(command: str) -> str:
    line = command.strip().splitlines()[0] if command.strip() else command
    return line if len(line) <= 60 else line[:57] + "..."


class HookPoints:
    def __init__(
        self,
        deps: SessionDeps,
        scope: CancelScope,
        record: Callable[[Any], object],
        turn_id: str | None = None,
    ) -> None:
        self.deps = deps
        self.scope = scope
        self._record = record
        self.turn_id = turn_id
        self.stop_reason: str | None = None  # a hook asked to end the turn
        self._continues = 0

    def _base(self) -> HookBase:
        """The common fields; the transcript is brought up to date first, so a hook
        reads the conversation up to now."""
        transcript, agent = self.deps.transcript, self.deps.agent
        for kept in (transcript, agent.transcript if agent is not None else None):
            if kept is not None:
                kept.sync()
        return HookBase(
            session_id=self.deps.config.session_id,
            transcript_path=str(transcript.path) if transcript is not None else "",
            cwd=str(self.deps.config.workspace),
            agent_id=agent.id if agent is not None else None,
            agent_type=agent.type if agent is not None else None,
        )

    def wanted(self, event: HookEvent, subject: str | None = None,
                tool_input: dict[str, Any] | None = None) -> bool:
        hooks = self.deps.hooks
        return hooks is not None and bool(hooks.matching(event, subject, tool_input))

    async def dispatch(
        self,
        event: HookEvent,
        subject: str | None,
        fields: Mapping[str, Any],
        *,
        to_model: Callable[[HookAnswer, HookRun], str] = lambda _answer, _run: "",
        tool_use_id: str | None = None,
        tool_input: dict[str, Any] | None = None,
    ) -> HookAnswer | None:
        """Run the event's hooks (None: there are none) with its own stdin ``fields``
        (the event's row in ``hooks/events.py`` names them), tell and journal each run."""
        hooks = self.deps.hooks
        found = hooks.matching(event, subject, tool_input) if hooks else []
        commands = [row.command for row in found]
        if hooks is None or not commands:
            return None
        emit = self.deps.emit
        emit(HookStateChanged(event=event, state=HookRunState.RUNNING, commands=commands,
                              turn_id=self.turn_id, tool_use_id=tool_use_id))
        answer = await hooks.fire(event, self._base(), self.scope, fields, subject=subject,
                                  tool_input=tool_input)
        for run in answer.runs:
            text = to_model(answer, run)
            self._record(HookRecord(
                event=event, command=run.command, source=run.source, ending=run.ending,
                decision=run.decision, turn_id=self.turn_id, tool_use_id=tool_use_id,
                exit_code=run.exit_code, signal=run.signal, duration_s=run.duration_s,
                reason=run.reason, context=model_note(event, text) if text.strip() else "",
            ))
            if run.message:
                emit(Notice(level=NoticeLevel.WARNING,
                            text=f"{event} hook `{_short(run.command)}`: {run.message}"))
        emit(HookStateChanged(event=event, state=HookRunState.ENDED, commands=commands,
                              turn_id=self.turn_id, tool_use_id=tool_use_id,
                              decision=answer.decision, detail=answer.reason))
        if answer.stop is not None and answer.ends_turn and self.stop_reason is None:
            self.stop_reason = answer.stop
            emit(Notice(level=NoticeLevel.INFO, text=(
                f"a {event} hook ended the turn" + (f": {answer.stop}" if answer.stop else ""))))
        return answer

    # -- tool calls -------------------------------------------------------------------

    async def pre_tool(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> HookAnswer:
        """``PreToolUse``; raises Cancelled when the turn was cancelled meanwhile."""
        answer = await self.dispatch(
            E.PRE_TOOL_USE, name,
            {"tool_name": name, "tool_input": tool_input, "tool_use_id": tool_use_id},
            to_model=lambda _answer, run: run.context, tool_use_id=tool_use_id,
            tool_input=tool_input,
        )
        if answer is not None and (answer.cancelled or self.scope.cancelled):
            raise Cancelled(self.scope.reason or CancelReason.USER_INTERRUPT)  # cancel point
        answer = answer or HookAnswer()
        if writes_plan(name) and answer.decision is not HookDecision.BLOCK:
            task = await plan_hooks(self, {**tool_input, **(answer.updated_input or {})})
            if task is not None:  # TaskCreated, TaskCompleted: a block refuses the plan
                answer.decision, answer.reason = task.decision, task.reason
        return answer

    def changed_input(
        self, tool: AnyTool, name: str, given: dict[str, Any], answer: HookAnswer
    ) -> tuple[dict[str, Any], Any] | str | None:
        """A ``PreToolUse`` hook's ``updatedInput`` over the call's input: the new input
        and its parsed arguments; None when no hook changed it (or one blocked the
        call); a text saying why when the changed input is not valid (the call never
        starts: it runs as the hook wants it or not at all)."""
        if not answer.updated_input or answer.decision is HookDecision.BLOCK:
            return None
        changed = {**given, **answer.updated_input}
        try:
            args = tool.parse(changed)
        except InvalidInput as exc:
            return ("Not started: a PreToolUse hook changed its input into one that is not "
                    f"valid: {exc}")
        self.deps.emit(Notice(level=NoticeLevel.INFO, text=(
            f"a PreToolUse hook changed the input of {claude_name(name)}: "
            + ", ".join(sorted(answer.updated_input)))))
        return changed, args

    def wants_post_tool(self, name: str, result: ToolResult,
                        tool_input: dict[str, Any] | None = None) -> bool:
        """``PostToolUse`` after a call that succeeded, ``PostToolUseFailure`` after
        one that failed by itself; neither once Esc was pressed."""
        event = _after(result)
        return (
            event is not None
            and not self.scope.cancelled  # cancel point: no more hooks once Esc was pressed
            and self.wanted(event, name, tool_input)
        )

    async def post_tool(
        self, tool_use_id: str, name: str, tool_input: dict[str, Any], result: ToolResult
    ) -> None:
        """``PostToolUse`` (or ``PostToolUseFailure``): a block's reason and any context
        reach the model as a note."""
        event = _after(result)
        if event is None:
            return
        response = {"content": result.content, "is_error": result.is_error,
                    "exit_code": result.exit_code, "details": result.details,
                    "blocks": result.blocks}
        def to_model(_answer: HookAnswer, run: HookRun) -> str:
            said = run.reason if run.decision is HookDecision.BLOCK else ""
            return "\n".join(t for t in (said, run.context) if t.strip())

        await self.dispatch(
            event, name,
            {"tool_name": name, "tool_input": tool_input, "tool_use_id": tool_use_id,
             "tool_response": response},
            to_model=to_model, tool_use_id=tool_use_id, tool_input=tool_input,
        )

    # -- the turn -----------------------------------------------------------------------

    async def prompt(self, text: str) -> None:
        """``UserPromptSubmit``, after the settings changed since the last turn are
        applied; raises PromptBlocked (or Cancelled)."""
        if self.deps.depth:
            return
        await self.settings_changed()
        answer = await self.dispatch(
            E.USER_PROMPT_SUBMIT, None, {"prompt": text},
            to_model=unless_blocked,
        )
        self.scope.raise_if_cancelled()  # cancel point: while a hook checks the prompt
        if answer is not None and answer.decision is HookDecision.BLOCK:
            raise PromptBlocked(
                "a UserPromptSubmit hook blocked this prompt"
                + (f": {answer.reason}" if answer.reason else "")
            )

    async def settings_changed(self) -> None:
        """``ConfigChange`` for each settings file changed since the last turn, then
        the changes the hooks let through are applied (one notice); raises Cancelled,
        the changes then wait for the next turn."""
        hooks = self.deps.hooks
        if hooks is None:
            return
        blocked: dict[str, str] = {}
        for change in hooks.changed_settings():
            answer = await self.dispatch(E.CONFIG_CHANGE, change.source, {
                "source": change.source, "file_path": change.file_path})
            self.scope.raise_if_cancelled()  # cancel point: while a hook judges a change
            if answer is not None and answer.decision is HookDecision.BLOCK:
                blocked[change.file_path] = answer.reason
        hooks.apply_settings(blocked)

    async def stop_goes_on(self) -> bool:
        """``Stop`` (``SubagentStop`` in a sub-agent), when the model stopped on its
        own: True when a hook asks it to go on (its reason is then the model's next
        message), at most ``max_stop_continues`` times in a row."""
        hooks, agent = self.deps.hooks, self.deps.agent
        if hooks is None or self.stop_reason is not None or (self.deps.depth and agent is None):
            return False
        limit, active = hooks.max_stop_continues, self._continues > 0
        event = E.STOP if agent is None else E.SUBAGENT_STOP

        def goes_on(answer: HookAnswer) -> bool:
            return (answer.decision is HookDecision.BLOCK and answer.stop is None
                    and not answer.cancelled and self._continues < limit)

        def to_model(answer: HookAnswer, run: HookRun) -> str:
            return run.reason if goes_on(answer) and run.decision is HookDecision.BLOCK else ""

        fields: dict[str, Any] = {"stop_hook_active": active,
                                  "last_assistant_message": last_assistant_text(
                                      self.deps.journal.records)}
        if agent is not None:
            kept = agent.transcript
            fields["agent_transcript_path"] = str(kept.path) if kept is not None else ""
        answer = await self.dispatch(event, agent.type if agent is not None else None, fields,
                                      to_model=to_model)
        if answer is None:
            return False
        if goes_on(answer) and not self.scope.cancelled:
            self._continues += 1
            return True
        if answer.decision is HookDecision.BLOCK and self._continues >= limit:
            self.deps.emit(Notice(level=NoticeLevel.WARNING, text=(
                f"{event} hooks asked the agent to go on {limit} time(s) in a row; it stops "
                f"now ({answer.reason})")))
        return False

    # -- the session --------------------------------------------------------------------

    async def session_start(self, source: str) -> None:
        """``SessionStart`` (``source``: startup or resume): context for the model, and
        the variables the hooks wrote to ``CLAUDE_ENV_FILE`` for the session's commands."""
        model = self.deps.config.model
        answer = await self.dispatch(
            E.SESSION_START, source, {"source": source, **({"model": model} if model else {})},
            to_model=lambda _answer, run: run.context,
        )
        self._take_env(E.SESSION_START, answer)

    async def setup(self, trigger: str) -> None:
        """``Setup`` (``--init``, ``--maintenance``: ``trigger``), before ``SessionStart``:
        context for the model and ``CLAUDE_ENV_FILE`` variables, as ``SessionStart``'s."""
        answer = await self.dispatch(
            E.SETUP, trigger, {"trigger": trigger},
            to_model=lambda _answer, run: run.context,
        )
        self._take_env(E.SETUP, answer)

    def _take_env(self, event: HookEvent, answer: HookAnswer | None) -> None:
        if answer is not None and answer.env and not self.scope.cancelled:
            self.deps.config.env.update(answer.env)
            self.deps.emit(Notice(level=NoticeLevel.INFO, text=(
                f"{event} hooks set " + ", ".join(sorted(answer.env))
                + " for the commands of this session")))

    async def subagent_start(self) -> None:
        """``SubagentStart``, before a sub-agent's first request: what the hooks answer
        as ``additionalContext`` is in that request."""
        agent = self.deps.agent
        if agent is None:
            return
        await self.dispatch(
            E.SUBAGENT_START, agent.type, {},
            to_model=lambda _answer, run: run.context,
        )

    async def session_end(self, reason: str) -> None:
        """``SessionEnd``: each hook is bounded by its timeout; Esc (the scope) ends them."""
        await self.dispatch(
            E.SESSION_END, reason, {"reason": reason},
        )

    async def stop_failure(self, exc: ProviderError) -> None:
        """``StopFailure``: the turn ended on an API error (``error``: Claude Code's
        words for its kind; the hooks cannot block or change anything)."""
        error = _failure_kind(exc)
        await self.dispatch(E.STOP_FAILURE, error, {
            "error": error, "error_details": str(exc),
            "last_assistant_message": f"API Error: {exc}"})

    async def interrupted(self) -> None:
        """``Interrupt`` (agent-tui's own), once a turn Esc ended has closed: each tool
        call of the turn with its end state, the processes that were ended (by which
        signal) and any left running. The turn's scope is cancelled, so the hooks run
        under the session's (shutdown ends them; their timeout bounds them)."""
        results = [item.result for item in read_items(self.deps.journal.records).items
                   if isinstance(item, ToolCall) and item.turn_id == self.turn_id]
        if not self.wanted(E.INTERRUPT):
            return
        calls = [{"tool_use_id": r.tool_use_id, "tool_name": claude_name(r.name),
                  "state": r.state.value, "exit_code": r.exit_code, "signal": r.signal,
                  "ended_by": r.ended_by, "side_effects": r.side_effects.value} for r in results]
        ended = [{"tool_use_id": r.tool_use_id, "tool_name": claude_name(r.name),
                  "signal": r.signal, "exit_code": r.exit_code} for r in results if r.signal]
        left = [{"tool_use_id": r.tool_use_id, **kept} for r in results for kept in r.residue]
        parent = self.scope.parent
        scope = parent.child("interrupt hooks") if parent is not None else CancelScope("interrupt hooks")
        try:
            await HookPoints(self.deps, scope, self._record, self.turn_id).dispatch(
                E.INTERRUPT, None,
                {"tool_calls": calls, "processes_ended": ended, "processes_left": left})
        finally:
            scope.detach()

    async def post_compact(self, trigger: str, summary: str) -> None:
        """``PostCompact``: the summary a compaction saved (nothing to decide)."""
        await self.dispatch(E.POST_COMPACT, trigger,
                            {"trigger": trigger, "compact_summary": summary})

    async def pre_compact(self, trigger: str, instructions: str = "") -> HookAnswer:
        """``PreCompact`` (``trigger``: manual or auto), for the compaction to call
        before it starts: a ``block`` decision means do not compact (``reason`` says
        why); ``context`` holds what the hooks want the summary to keep."""
        answer = await self.dispatch(
            E.PRE_COMPACT, trigger,
            {"trigger": trigger, "custom_instructions": instructions or None},
        )
        return answer if answer is not None else HookAnswer()
