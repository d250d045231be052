"""The working session on screen: usage (the status line's context meter, tokens and
cost), compaction (a divider with the tokens before and after, and honest started /
cancelled / failed states), the model in use, the model picker, and a new
conversation after ``/clear``, and the permission mode (Shift+Tab cycles it). A part of the app (``ui/app/main.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from rich.text import Text

from agent_tui.protocol import PermissionMode
from agent_tui.protocol.states import CompactionState
from agent_tui.ui.render.safe_text import clean, first_line
from agent_tui.ui.render.states import role_style
from agent_tui.ui.render.usage import UsageTally, tokens_short

if TYPE_CHECKING:
    from agent_tui.protocol import (
        Compaction,
        ContextReport,
        ConversationCleared,
        ModelChanged,
        Models,
        Op,
        PermissionModeChanged,
        Usage,
    )
    from agent_tui.ui.app.screen_slots import ScreenSlot
    from agent_tui.ui.widgets.queue_pane import QueuePane
    from agent_tui.ui.widgets.tools_pane import ToolsPane
    from agent_tui.ui.widgets.status_line import StatusLine
    from agent_tui.ui.widgets.transcript import Transcript


#: How a notice names each permission mode.
MODE_WORDS: dict[PermissionMode, str] = {
    PermissionMode.ASK: "ask (calls that write or run are asked)",
    PermissionMode.ACCEPT_EDITS: "accept edits (file edits in the workspace run, commands are asked)",
    PermissionMode.PLAN: "plan (read-only: nothing is changed until you approve a plan)",
    PermissionMode.AUTO: "auto (nothing is asked)",
    PermissionMode.DONT_ASK: "don't ask (what is not allowed by a rule is refused, never asked)",
}


def compaction_line(event: Compaction, variables: dict[str, str]) -> Text:
    trigger = {"auto": "the context was nearly full", "overflow": "the request was too long",
               "manual": "/compact"}.get(event.trigger, clean(event.trigger))
    line = Text()
    match event.state:
        case CompactionState.STARTED:
            line.append("⟳ compacting the conversation", style=role_style(variables, "accent", bold=True))
            line.append(f" ({trigger})…", style=role_style(variables, "text-muted"))
        case CompactionState.COMPLETED:
            line.append("── compacted", style=role_style(variables, "accent", bold=True))
            line.append(f": {tokens_short(event.tokens_before)} → {tokens_short(event.tokens_after)} tokens "
                        f"({trigger}); the model now sees a summary of what came before ──")
        case CompactionState.CANCELLED:
            line.append("■ compaction cancelled", style=role_style(variables, "warning", bold=True))
            line.append(": the conversation is as it was")
        case CompactionState.FAILED:
            line.append("✗ compaction failed", style=role_style(variables, "error", bold=True))
            line.append(": the conversation is as it was")
    if event.detail and event.state is not CompactionState.COMPLETED:
        line.append(" · " + first_line(event.detail, 200), style=role_style(variables, "text-muted"))
    return line


class SessionViewHost(Protocol):
    """What the working session's view uses of the app."""

    transcript: Transcript
    tools_pane: ToolsPane
    queue_pane: QueuePane
    status: StatusLine
    usage: UsageTally
    model_slot: ScreenSlot[Any]

    @property
    def theme_variables(self) -> dict[str, str]: ...
    def submit(self, op: Op) -> None: ...


class SessionView:
    """The working session on screen, and the permission mode and model in force."""

    def __init__(self, app: SessionViewHost) -> None:
        self.app = app
        self.current_model = ""
        # as the core last said (or Shift+Tab just asked); auto and dont-ask are in
        # Shift+Tab's cycle only when the session started in one
        self.permission_mode = self.started_mode = PermissionMode.ASK  # until the session says

    def session_modes(self, mode: PermissionMode) -> None:
        """The session started in ``mode``."""
        self.permission_mode = self.started_mode = mode
        self.app.status.set_mode(mode)

    def permission_mode_changed(self, event: PermissionModeChanged) -> None:
        self.permission_mode = event.mode
        self.app.status.set_mode(event.mode)
        self.app.status.set_notice("info", f"permission mode: {MODE_WORDS[event.mode]}")

    def cycle_mode(self) -> None:
        """Shift+Tab: the next permission mode (the core confirms it)."""
        order = [PermissionMode.ASK, PermissionMode.ACCEPT_EDITS, PermissionMode.PLAN]
        if self.started_mode in (PermissionMode.AUTO, PermissionMode.DONT_ASK):
            order.append(self.started_mode)
        now = self.permission_mode
        nxt = order[(order.index(now) + 1) % len(order)] if now in order else order[0]
        self.permission_mode = nxt  # a second press at once goes on from here
        self.app.status.set_mode(nxt)
        from agent_tui.protocol import SetPermissionMode

        self.app.submit(SetPermissionMode(mode=nxt))

    def usage_event(self, event: Usage) -> None:
        self.app.usage.add(event)
        self.app.status.set_usage(self.app.usage)

    def compaction_event(self, event: Compaction) -> None:
        if event.state is CompactionState.COMPLETED:
            self.app.usage.compacted(event.tokens_after)
            self.app.status.set_usage(self.app.usage)
        self.app.transcript.add_turn_end(compaction_line(event, self.app.theme_variables))

    def model_changed(self, event: ModelChanged) -> None:
        self.current_model = event.model
        self.app.usage.set_window(event.context_window)
        self.app.status.set_model(event.model, event.thinking)
        self.app.status.set_usage(self.app.usage)
        thinking = f", thinking {event.thinking}" if event.thinking else ""
        self.app.status.set_notice("info", f"model: {clean(event.model)}{thinking}")

    def models_listed(self, event: Models) -> None:
        if event.error and not event.models:
            self.app.status.set_notice("warning", f"cannot list the models: {first_line(event.error, 200)}")
            return
        self.app.status.clear_notice()
        if self.app.model_slot.is_open:
            return
        from agent_tui.ui.screens.picker import PickerScreen, PickItem

        items = []
        for model in event.models:
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(clean(model.id), style="bold")
            if model.display_name and model.display_name != model.id:
                line.append(f"  {clean(model.display_name)}")
            if model.context_window:
                line.append(f"  {tokens_short(model.context_window)} context", style="dim")
            if model.id == event.current:
                line.append("  (in use)", style="dim")
            items.append(PickItem(model.id, line, search=f"{model.id} {model.display_name}"))
        intro = "The model for the next requests." + (f" ({first_line(event.error, 120)})" if event.error else "")

        def chosen(model_id: str | None) -> None:
            if model_id is not None and model_id != event.current:
                from agent_tui.protocol import SetModel

                self.app.submit(SetModel(model=model_id))

        self.app.model_slot.open(PickerScreen("model", intro, items, empty="the provider lists no models",
                                          current=event.current), chosen)

    def conversation_cleared(self, event: ConversationCleared) -> None:
        self.app.usage.cleared()
        self.app.status.set_usage(self.app.usage)
        self.app.tools_pane.clear()
        self.app.tools_pane.flush()
        self.app.queue_pane.clear_settled()
        self.app.transcript.end_text()
        self.app.transcript.add_turn_end(Text(
            "── new conversation: the model no longer sees what is above "
            "(the old conversation stays in the journal: `agent-tui sessions`) ──",
            style=role_style(self.app.theme_variables, "accent")))
        self.app.status.set_notice("info", "new conversation")

    def context_reported(self, event: ContextReport) -> None:
        """``/context``: what fills the window, one line a part."""
        used = f"{tokens_short(event.used)} of {tokens_short(event.window)}"
        share = f" ({event.used * 100 // max(1, event.window)} %)"
        how = "measured by the API" if event.measured else "estimated"
        lines = [f"context of {event.model}: {used}{share}, {how}"]
        lines += [f"  {item.label}: ~{tokens_short(item.tokens)}" for item in event.items]
        lines += [f"  {note}" for note in event.notes]
        self.app.transcript.end_text()
        self.app.transcript.add_turn_end(Text("\n".join(clean(line) for line in lines),
                                          style=role_style(self.app.theme_variables, "muted")))
