"""The rewind menu (Esc Esc on an empty input while idle).

Three steps, each answered by the core:

1. ``ListRewindPoints`` -> ``rewind_points``: the user messages, newest first, with
   their time, and the undo points ("before rewind to …") taken by earlier rewinds.
2. Enter on one -> ``PlanRewind`` -> ``rewind_plan``: the files a rewind would change
   (with +/- lines and the word CONFLICT where a file changed since), what it cannot
   undo, and the choices: code and conversation, conversation only, code only.
   Everything that cannot be undone is on screen before any choice is made.
3. A choice -> ``Rewind``. When files changed since the checkpoint, one more step
   asks explicitly whether to overwrite them or keep them.

Esc goes back one step (and closes the menu from the list). The app routes the
answers here and renders ``rewound`` itself.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_tui.protocol import (
    FileChangeInfo,
    ListRewindPoints,
    Op,
    PlanRewind,
    RestoreWhat,
    Rewind,
    RewindPlanned,
    RewindPoint,
    RewindPoints,
)
from agent_tui.ui.render.safe_text import clean, first_line
from agent_tui.ui.render.states import role_style
from agent_tui.ui.render.times import default_format_time


# What the rewind does to a file (FileChangeInfo.kind) in words.
CHANGE_WORDS = {"added": "re-create", "modified": "restore", "deleted": "delete"}

ACTIONS: list[tuple[RestoreWhat, str]] = [
    (RestoreWhat.BOTH, "restore code and conversation"),
    (RestoreWhat.CONVERSATION, "restore conversation only (files stay as they are)"),
    (RestoreWhat.CODE, "restore code only (the conversation stays as it is)"),
]

OVERWRITE = "overwrite"
KEEP = "keep"
BACK = "back"


def change_line(change: FileChangeInfo, variables: dict[str, str], width: int = 9) -> Text:
    """``restore  src/app.py  +3 -10  CONFLICT: changed since the checkpoint``."""
    line = Text(no_wrap=True, overflow="ellipsis")
    word = CHANGE_WORDS.get(change.kind, clean(change.kind))
    role = "error" if change.conflict else "text"
    line.append(f"  {word:<{width}} ", style=role_style(variables, role, bold=True))
    line.append(clean(change.path))
    if change.lines_added is not None or change.lines_removed is not None:
        line.append("  ")
        line.append(f"+{change.lines_added or 0}", style=role_style(variables, "success"))
        line.append(" ")
        line.append(f"-{change.lines_removed or 0}", style=role_style(variables, "error"))
    if change.conflict:
        line.append("  CONFLICT: changed since the checkpoint", style=role_style(variables, "error", bold=True))
    return line


class RewindScreen(ModalScreen[Rewind | None]):
    DEFAULT_CSS = """
    RewindScreen { align: center middle; }
    RewindScreen > #dialog {
        width: 96%;
        max-width: 110;
        height: auto;
        max-height: 96%;
        border: thick $accent;
        background: $surface;
        padding: 0 1;
    }
    RewindScreen #intro { color: $text-muted; }
    RewindScreen #points { height: auto; max-height: 10; margin: 1 0 0 0; }
    RewindScreen #plan { height: auto; margin: 1 0 0 0; }
    RewindScreen #actions { height: auto; margin: 1 0 0 0; }
    RewindScreen #actions.-hidden { display: none; }
    RewindScreen #keys { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS = [Binding("escape", "back", "back", show=False)]

    def __init__(
        self,
        submit: Callable[[Op], None],
        format_time: Callable[[float], str] = default_format_time,
    ) -> None:
        super().__init__()
        self._submit = submit
        self._format_time = format_time
        self.step = "loading"  # loading | points | planning | plan | confirm
        self.points: list[RewindPoint] = []
        self.chosen: RewindPoint | None = None
        self.plan: RewindPlanned | None = None
        self.restore: RestoreWhat | None = None

    # -- layout ---------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(
                Text("Go back to an earlier message: restore the files, the conversation, or both."),
                id="intro",
            )
            yield OptionList(Option(Text("loading the messages…"), disabled=True), id="points")
            yield Static("", id="plan")
            yield OptionList(id="actions", classes="-hidden")
            yield Static("", id="keys")

    def on_mount(self) -> None:
        self.query_one("#dialog").border_title = "rewind"
        self._set_keys()
        self._submit(ListRewindPoints())

    def _set_keys(self) -> None:
        keys = {
            "loading": "esc close",
            "points": "↑↓ choose   enter see what would change   esc close",
            "planning": "esc back",
            "plan": "↑↓ choose   enter rewind   esc back to the messages",
            "confirm": "↑↓ choose   enter confirm   esc back",
        }[self.step]
        self.query_one("#keys", Static).update(Text(keys))

    # -- step 1: the points --------------------------------------------------------------

    def show_points(self, event: RewindPoints) -> None:
        points_list = self.query_one("#points", OptionList)
        self.points = list(event.points)
        if not event.available:
            points_list.set_options([Option(Text("this session keeps no checkpoints: rewind is off"), disabled=True)])
            self.step = "loading"
        elif not self.points:
            points_list.set_options([Option(Text("no messages to go back to yet"), disabled=True)])
            self.step = "loading"
        else:
            points_list.set_options([self._point_option(p) for p in self.points])
            points_list.highlighted = 0
            points_list.focus()
            self.step = "points"
        self._set_keys()

    def _point_option(self, point: RewindPoint) -> Option:
        variables = self.app.theme_variables
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{self._format_time(point.time):>5}  ", style=role_style(variables, "text-muted"))
        if point.turn_id is None:
            line.append("↶ undo point: ", style=role_style(variables, "accent", bold=True))
            line.append(first_line(point.label, 200) or "(no label)", style=role_style(variables, "accent"))
        else:
            line.append(first_line(point.label, 200) or "(empty message)")
        if point.warnings:
            line.append(f"  ({len(point.warnings)} warning{'s' if len(point.warnings) > 1 else ''})",
                        style=role_style(variables, "warning"))
        return Option(line, id=point.checkpoint_id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_list.id == "points":
            self._choose_point(event.option.id)
        elif event.option_list.id == "actions":
            self._choose_action(event.option.id)

    def _choose_point(self, checkpoint_id: str | None) -> None:
        point = next((p for p in self.points if p.checkpoint_id == checkpoint_id), None)
        if point is None:
            return
        self.chosen, self.plan = point, None
        self.step = "planning"
        self.query_one("#plan", Static).update(Text("working out what would change…", style="dim"))
        self._hide_actions()
        self._set_keys()
        self._submit(PlanRewind(checkpoint_id=point.checkpoint_id))

    # -- step 2: the plan ----------------------------------------------------------------

    def show_plan(self, plan: RewindPlanned) -> None:
        if self.chosen is None or plan.checkpoint_id != self.chosen.checkpoint_id or self.step != "planning":
            return  # an answer to an earlier choice
        self.plan = plan
        self.step = "plan"
        self.query_one("#plan", Static).update(self.render_plan())
        actions = self.query_one("#actions", OptionList)
        undo_point = self.chosen.turn_id is None
        options = []
        for what, words in ACTIONS:
            disabled = undo_point and what is not RestoreWhat.CODE
            label = Text(words)
            if disabled:
                label.append("  (not a message: only files can go back to it)", style="dim")
            options.append(Option(label, id=str(what), disabled=disabled))
        actions.set_options(options)
        actions.highlighted = 2 if undo_point else 0
        actions.remove_class("-hidden")
        actions.border_title = "restore"
        actions.focus()
        self._set_keys()

    def render_plan(self) -> Text:
        assert self.plan is not None and self.chosen is not None
        plan, variables = self.plan, self.app.theme_variables
        out = Text()
        out.append("Rewind to: ", style="bold")
        out.append(first_line(self.chosen.label, 200))
        out.append("\n")
        if plan.changes:
            out.append(f"Files the rewind would change ({len(plan.changes)}):\n", style="bold")
            width = max(len(CHANGE_WORDS.get(c.kind, c.kind)) for c in plan.changes)
            for change in plan.changes:
                out.append_text(change_line(change, variables, width))
                out.append("\n")
        else:
            out.append("No files would change.\n", style="bold")
        conflicts = sum(1 for c in plan.changes if c.conflict)
        if conflicts:
            out.append(
                f"{conflicts} file{'s' if conflicts > 1 else ''} changed since the checkpoint "
                f"(not by this rewind): you will be asked before {'they are' if conflicts > 1 else 'it is'} "
                "overwritten.\n",
                style=role_style(variables, "error"),
            )
        if plan.not_undoable:
            out.append("Cannot be undone by a rewind:\n", style=role_style(variables, "warning", bold=True))
            for item in plan.not_undoable:
                out.append("  • " + first_line(item, 300) + "\n", style=role_style(variables, "warning"))
        for warning in [*plan.warnings, *self.chosen.warnings]:
            out.append("  ! " + first_line(warning, 300) + "\n", style=role_style(variables, "warning"))
        out.rstrip()
        return out

    def _hide_actions(self) -> None:
        self.query_one("#actions", OptionList).add_class("-hidden")

    # -- step 3: the choice (and the conflicts) ------------------------------------------

    def _choose_action(self, option_id: str | None) -> None:
        if self.step == "plan":
            if option_id is None:
                return  # a separator: nothing chosen
            self.restore = RestoreWhat(option_id)
            conflicts = [c for c in (self.plan.changes if self.plan else []) if c.conflict]
            if conflicts and self.restore is not RestoreWhat.CONVERSATION:
                self._ask_about_conflicts(len(conflicts))
                return
            self._rewind(overwrite=False)
        elif self.step == "confirm":
            if option_id == OVERWRITE:
                self._rewind(overwrite=True)
            elif option_id == KEEP:
                self._rewind(overwrite=False)
            else:
                self.show_plan_again()

    def _ask_about_conflicts(self, count: int) -> None:
        self.step = "confirm"
        variables = self.app.theme_variables
        files = f"{count} file{'s' if count > 1 else ''}"
        actions = self.query_one("#actions", OptionList)
        actions.set_options([
            Option(Text(f"keep the {files} changed since: restore the others only"), id=KEEP),
            Option(Text(f"overwrite files changed since the checkpoint ({files})",
                        style=role_style(variables, "error", bold=True)), id=OVERWRITE),
            Option(Text("back"), id=BACK),
        ])
        actions.highlighted = 0
        actions.border_title = f"{files} changed since the checkpoint"
        self._set_keys()

    def show_plan_again(self) -> None:
        if self.plan is None:
            return
        self.step = "planning"
        self.show_plan(self.plan)

    def _rewind(self, *, overwrite: bool) -> None:
        assert self.chosen is not None and self.restore is not None
        op = Rewind(
            checkpoint_id=self.chosen.checkpoint_id, restore=self.restore, overwrite_conflicts=overwrite
        )
        self._submit(op)
        self.dismiss(op)

    # -- going back --------------------------------------------------------------------------

    def action_back(self) -> None:
        if self.step == "confirm":
            self.show_plan_again()
        elif self.step in ("plan", "planning"):
            self.step = "points" if self.points else "loading"
            self.chosen, self.plan = None, None
            self.query_one("#plan", Static).update("")
            self._hide_actions()
            self.query_one("#points", OptionList).focus()
            self._set_keys()
        else:
            self.dismiss(None)
