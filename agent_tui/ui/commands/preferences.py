"""``/vim``, ``/output-style`` and ``/keybindings``: the commands of a user's habits.

What they change lives in the app (``ui/app/preferences.py``, behind
:class:`PreferencesHost`); here is what each command line does with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from rich.console import RenderableType


class PreferencesHost(Protocol):
    def toggle_vim(self) -> bool:
        """Vim mode on or off; True when it is now on."""

    def open_output_style_picker(self) -> None: ...
    def set_output_style(self, name: str) -> str | None:
        """Use the style ``name`` (saved for the project); an error to show, or None."""

    def keybindings_page(self) -> RenderableType: ...
    def open_plugin_options(self, spec: str) -> None:
        """The installed plugin ``spec``'s options as a form (``/plugin config NAME``)."""

    def open_plugin_review(self, plugin_id: str, lines: list[str], then: Callable[[bool | None], None]) -> None:
        """What a plugin will run, and ``then`` with the yes or no (``/plugin enable``)."""


class Host(Protocol):
    @property
    def preferences(self) -> PreferencesHost: ...
    def notice(self, level: str, text: str) -> None: ...
    def show_page(self, title: str, body: RenderableType) -> None: ...


def vim(host: Host, args: str) -> None:
    on = host.preferences.toggle_vim()
    host.notice("info", "vim mode: Esc for normal mode, i to type (Esc on an empty input "
                        "still interrupts)" if on else "vim mode off")


def output_style(host: Host, args: str) -> None:
    if not args.strip():
        host.preferences.open_output_style_picker()
        return
    error = host.preferences.set_output_style(args.strip())
    if error is not None:
        host.notice("warning", error)


def keybindings(host: Host, args: str) -> None:
    host.show_page("keybindings", host.preferences.keybindings_page())
