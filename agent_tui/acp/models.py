"""The model over ACP: a session config option of category ``model``.

ACP's schema (v1.19, what the pinned SDK speaks) chooses a session's model through
config options: ``session/new`` and ``session/load`` answer with a ``model`` select
option listing what the provider's Models API offers (the current model first if it
is not listed: an alias, a gateway's id), ``session/set_config_option`` with
``configId: "model"`` switches (a ``SetModel`` op), and every change, the editor's or
``/model``'s, is told as a ``config_option_update``. An unknown model is refused with
the core's own words (close matches included), the session's model unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from acp import RequestError
from acp.schema import ConfigOptionUpdate, SessionConfigOptionSelect, SessionConfigSelectOption

from agent_tui.protocol import ListModels, ModelChanged, Models, Notice, NoticeCode, Op, SetModel

MODEL_OPTION = "model"
#: Seconds a session/new waits for the model list, and a switch for its answer.
LIST_WAIT_S = 5.0
SWITCH_WAIT_S = 15.0


class ModelChoice:
    """One session's model option: the list, the current model, the switches."""

    def __init__(self, submit: Callable[[Op], None], current: str) -> None:
        self._submit = submit
        self.current = current
        self.listed: list[tuple[str, str]] = []  # (id, display name)
        self._listing: asyncio.Future[None] | None = None
        self._switching: asyncio.Future[str] | None = None

    # -- what the core says (the bridge's event loop) ------------------------------

    def on_models(self, event: Models) -> None:
        self.listed = [(m.id, m.display_name or m.id) for m in event.models]
        self.current = event.current or self.current
        if self._listing is not None and not self._listing.done():
            self._listing.set_result(None)

    def on_model_changed(self, event: ModelChanged) -> ConfigOptionUpdate:
        self.current = event.model
        if self._switching is not None and not self._switching.done():
            self._switching.set_result(event.model)
        return ConfigOptionUpdate(session_update="config_option_update",
                                  config_options=[self.option()])

    def on_error(self, event: Notice) -> None:
        """A refused model while a switch waits is its answer (ops are applied in order,
        and one switch waits at a time); another error meanwhile (the session's own) is
        not."""
        if (self._switching is not None and not self._switching.done()
                and event.code is NoticeCode.MODEL_REFUSED):
            self._switching.set_exception(RequestError.invalid_params(
                {"configId": MODEL_OPTION, "details": event.text}))

    # -- what the editor asks -------------------------------------------------------

    async def options(self) -> list[SessionConfigOptionSelect]:
        """The option, once the provider listed its models (or the wait ran out)."""
        self._listing = asyncio.get_running_loop().create_future()
        self._submit(ListModels())
        try:
            await asyncio.wait_for(asyncio.shield(self._listing), LIST_WAIT_S)
        except TimeoutError:
            pass  # offer what is known: the current model
        return [self.option()]

    async def choose(self, value: str) -> list[SessionConfigOptionSelect]:
        if value == self.current:
            return [self.option()]
        self._switching = asyncio.get_running_loop().create_future()
        self._submit(SetModel(model=value))
        try:
            await asyncio.wait_for(asyncio.shield(self._switching), SWITCH_WAIT_S)
        except TimeoutError:
            raise RequestError.internal_error(
                {"configId": MODEL_OPTION, "details": "the session did not answer"}) from None
        finally:
            self._switching = None
        return [self.option()]

    def option(self) -> SessionConfigOptionSelect:
        choices = list(self.listed)
        if self.current and self.current not in {i for i, _ in choices}:
            choices.insert(0, (self.current, self.current))
        return SessionConfigOptionSelect(
            id=MODEL_OPTION, name="Model", category="model", type="select",
            description="The model the session's requests use", current_value=self.current,
            options=[SessionConfigSelectOption(value=i, name=n) for i, n in choices],
        )


def check_option(session_id: str, config_id: str, value: object) -> str:
    """The model an editor asked for; any other option is the client's mistake."""
    if config_id != MODEL_OPTION or not isinstance(value, str) or not value.strip():
        raise RequestError.invalid_params({"sessionId": session_id, "configId": config_id,
                                           "details": "the one option is 'model' (a model id)"})
    return value.strip()
