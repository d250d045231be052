"""Ops: what a front end asks of the session.

Each Op's docstring names the Events that answer it (``protocol/events.py``). Every
model serialises to one JSON object with a ``type`` field, which is also the
stream-json input of print mode.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made, and a -p turn makes these classes whether it uses them or not.
from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Field, TypeAdapter

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.protocol.states import Decision, PermissionMode, RestoreWhat, SessionEndReason


ImageMediaType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]


class ImageAttachment(DeferredModel):
    """An image sent with a message, as the model gets it: the file's bytes, base64.

    A front end reads and checks it (``files/image_paths.py``): the core sends it as
    it is, and the journal keeps it, so a resumed session sends the same image.
    """

    media_type: ImageMediaType
    data: str  # base64 of the image file
    path: str = ""  # where it was read from, as the user named it ("" when sent as data)
    size: int = 0  # bytes, before encoding

    @property
    def label(self) -> str:
        """How people are shown it: its path, else its type."""
        return self.path or self.media_type

    def block(self) -> dict[str, Any]:
        """The Messages API's image content block."""
        return {"type": "image", "source": {"type": "base64", "media_type": self.media_type,
                                            "data": self.data}}


class UserMessage(DeferredModel):
    """Starts a turn when idle; steers the running turn otherwise.

    Answered by ``turn_started`` (idle) or ``steer_state`` queued -> applied | returned.
    ``images`` go to the model beside the text (before it, as the API advises).
    """

    type: Literal["user_message"] = "user_message"
    text: str
    images: list[ImageAttachment] = Field(default_factory=list)


class FollowUp(DeferredModel):
    """Runs as a new turn after the agent stops on its own.

    Answered by ``steer_state`` (kind follow_up) queued -> applied | returned.
    """

    type: Literal["follow_up"] = "follow_up"
    text: str
    images: list[ImageAttachment] = Field(default_factory=list)


class Interrupt(DeferredModel):
    """Esc: cancel the running turn. Answered by ``turn_state`` cancelling, then
    ``turn_ended`` cancelled (or nothing when idle)."""

    type: Literal["interrupt"] = "interrupt"


class SendNow(DeferredModel):
    """Deliver a message at once: running commands that can move to the background do
    so (they keep running), and the message is applied right after. When idle, starts
    a turn. Answered by ``steer_state`` queued -> applied and ``tool_state``."""

    type: Literal["send_now"] = "send_now"
    text: str
    images: list[ImageAttachment] = Field(default_factory=list)


class Decide(DeferredModel):
    """The user's answer to a ``permission_requested``. Answered by ``tool_state``."""

    type: Literal["decide"] = "decide"
    tool_use_id: str
    decision: Decision
    note: str = ""
    # An allow that changes the call (the Agent SDK's ``updatedInput``), in our keys: the
    # whole input the call runs with, checked again by the permission rules.
    updated_input: dict[str, Any] | None = None
    # Allow rules the user chose to last ("don't ask again for: npm test *"), in Claude
    # Code's text: they apply from this call on (the front end saves them to a file).
    rules: list[str] = Field(default_factory=list)
    # A deny that also stops the turn (Claude Code's "No"): the turn is interrupted once
    # the call has taken its answer, so it ends denied, not cancelled.
    stop: bool = False


class ListRewindPoints(DeferredModel):
    """Ask for the points a rewind can go back to. Answered by ``rewind_points``."""

    type: Literal["list_rewind_points"] = "list_rewind_points"


class PlanRewind(DeferredModel):
    """Preview a rewind (nothing changes). Answered by ``rewind_plan``."""

    type: Literal["plan_rewind"] = "plan_rewind"
    checkpoint_id: str


class Rewind(DeferredModel):
    """Go back to a checkpoint (only while no turn runs). Answered by ``rewound``
    (or a ``notice`` saying why not)."""

    type: Literal["rewind"] = "rewind"
    checkpoint_id: str
    restore: RestoreWhat = RestoreWhat.BOTH
    overwrite_conflicts: bool = False


class CancelTool(DeferredModel):
    """Stop one running tool call (or sub-agent) without ending the turn. Answered by
    its ``tool_state``, or a ``notice`` when no such call runs."""

    type: Literal["cancel_tool"] = "cancel_tool"
    tool_use_id: str


class StopBackground(DeferredModel):
    """Stop one background job (a command or a sub-agent) by id. Answered by
    ``background_job`` when it has ended, or a ``notice`` if there is no such job."""

    type: Literal["stop_background"] = "stop_background"
    id: str


class Shutdown(DeferredModel):
    """Stop the session: interrupt what runs, end background work, then stop.
    Answered by ``session_closed``. ``reason`` is what ``SessionEnd`` hooks are told."""

    type: Literal["shutdown"] = "shutdown"
    reason: SessionEndReason = SessionEndReason.OTHER


class Compact(DeferredModel):
    """Compact the conversation now (``/compact [focus]``). Answered by ``compaction``
    started -> completed | cancelled | failed; queued until a running turn ends."""

    type: Literal["compact"] = "compact"
    instructions: str = ""


class SetModel(DeferredModel):
    """Use another model from the next request on. Answered by a ``model_changed``
    (or a ``notice`` naming close matches when the model is unknown)."""

    type: Literal["set_model"] = "set_model"
    model: str


class ListModels(DeferredModel):
    """Ask which models the provider offers. Answered by ``models``."""

    type: Literal["list_models"] = "list_models"


class SetThinking(DeferredModel):
    """``off``, ``adaptive`` or a budget in tokens, from the next request on.
    Answered by ``model_changed`` (which carries the thinking setting)."""

    type: Literal["set_thinking"] = "set_thinking"
    thinking: str


class SetPermissionMode(DeferredModel):
    """Decide calls by another permission mode from now on (Shift+Tab, ``/plan``, an
    editor's mode switch). Answered by ``permission_mode_changed``."""

    type: Literal["set_permission_mode"] = "set_permission_mode"
    mode: PermissionMode


class ShowContext(DeferredModel):
    """What fills the context window (``/context``). Answered by ``context_report``."""

    type: Literal["show_context"] = "show_context"


class ClearConversation(DeferredModel):
    """Start a new conversation (``/clear``); the old one stays in the journal.
    Answered by ``conversation_cleared`` (or a ``notice`` while a turn runs)."""

    type: Literal["clear_conversation"] = "clear_conversation"


class RenameSession(DeferredModel):
    """Name the session (``/rename``): ``agent-tui sessions`` and ``/resume`` show it.
    Answered by a ``notice``."""

    type: Literal["rename_session"] = "rename_session"
    name: str


BASH_MODE_ID_PREFIX = "bash_mode_"  # the tool_use_id of a RunShell's command


class RunShell(DeferredModel):
    """Bash mode (``!cmd`` in the TUI): the user's own command, run at once through the
    session's command runner (as the ``bash`` tool runs: contained, sandboxed, stopped
    by ``interrupt``); no model request is made. Answered by ``tool_state`` (and
    ``tool_output``) of a call named ``bash`` with ``turn_id`` "" and a
    ``tool_use_id`` starting ``bash_mode_``, or a ``notice`` while a turn runs. The
    command and its output go to the model with the next user message."""

    type: Literal["run_shell"] = "run_shell"
    command: str


class EditQueued(DeferredModel):
    """Change a queued steer or follow-up before it is applied. Answered by
    ``steer_state`` edited, or applied/returned when it was too late."""

    type: Literal["edit_queued"] = "edit_queued"
    id: str
    text: str


class RemoveQueued(DeferredModel):
    """Take a queued steer or follow-up back. Answered by ``steer_state`` removed."""

    type: Literal["remove_queued"] = "remove_queued"
    id: str


Op = Annotated[
    Union[
        UserMessage,
        FollowUp,
        SendNow,
        Interrupt,
        Decide,
        ListRewindPoints,
        PlanRewind,
        Rewind,
        CancelTool,
        StopBackground,
        Shutdown,
        Compact,
        SetModel,
        ListModels,
        SetThinking,
        SetPermissionMode,
        ClearConversation,
        RunShell,
        RenameSession,
        ShowContext,
        EditQueued,
        RemoveQueued,
    ],
    Field(discriminator="type"),
]
OP_ADAPTER: TypeAdapter[Op] = TypeAdapter(Op, config=ConfigDict(defer_build=True))


