"""A user's habits in the TUI: vim mode, the output style, their keybindings.

At start (:meth:`Preferences.start`) vim mode follows ``editorMode`` (Claude Code's
``~/.claude.json``, then the settings files, the last one winning) and the keys of
``~/.claude/keybindings.json`` are bound (``ui/input/keybindings.py``); the bindings
not taken are named once, and so are the keys a chord shadows; the chords themselves
are taken by :attr:`Preferences.chords` (``ui/input/chords.py``), which the app gives
every key first (:meth:`Preferences.take_key`). ``/output-style NAME`` changes the style of the running
session (its system prompt is built again, so the next request has it) and saves it in
the project's ``.claude/settings.local.json``, where Claude Code keeps it too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding

from agent_tui.paths import claude_config_dir
from agent_tui.ui.input.chords import ChordKeys
from agent_tui.ui.input.keybindings import (
    ChordBinding,
    KeyBinding,
    KeyMap,
    Saved,
    apply_keymap,
    read_keybindings,
    restore_keys,
)
from agent_tui.ui.input.keys import APP_BINDINGS, INPUT_BINDINGS
from agent_tui.ui.render.safe_text import clean, first_line
from agent_tui.ui.widgets.prompt_input import PromptInput


KEYS_LOOK_S = 1.0  # how often the keybindings file is looked at (a stat)


class PreferencesApp(Protocol):
    prompt: PromptInput
    picker_slot: Any
    host: Any
    status: Any

    @property
    def running(self) -> bool: ...
    def workspace(self) -> Path: ...
    def notice(self, level: str, text: str) -> None: ...


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """When the file last changed, by stat (None: it is not there)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _json(path: Path) -> dict[str, Any]:
    from agent_tui.config_file import read_config_text

    try:  # bounded: a FIFO or a device is never waited on
        data = json.loads(read_config_text(path))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def editor_mode(workspace: Path) -> str | None:
    """``editorMode`` as the files say it, read without the settings loader (before the
    first frame: the full load on the core's thread reports any problem)."""
    from agent_tui.paths import claude_state_file, settings_files

    mode = None
    for path in [claude_state_file(), *settings_files(workspace)]:
        value = _json(path).get("editorMode")
        if isinstance(value, str):
            mode = value
    return mode


class Preferences:
    def __init__(self, app: PreferencesApp) -> None:
        self.app = app
        self.keymap = KeyMap()
        self._saved: Saved = {}  # what the bound keys did before
        self._node: Any = None
        self._stamp: tuple[int, int, int] | None = None  # the file as last read
        self.chords = ChordKeys(self)

    def start(self, app_node: Any, workspace: Path) -> None:
        """Vim mode from ``editorMode``; the user's keybindings bound, and bound again
        when the file changes (a stat a second, as Claude Code reloads it)."""
        if editor_mode(workspace) == "vim":
            self.app.prompt.set_vim(True)
        self._node = app_node
        self._stamp = _stamp(claude_config_dir() / "keybindings.json")
        self._bind()
        app_node.set_interval(KEYS_LOOK_S, self.look_at_keybindings)

    def _bind(self) -> None:
        self.keymap = read_keybindings()
        apply_keymap(self.keymap, self._node, self.app.prompt, self._saved)
        self.chords.load(self.keymap.chords)
        if self.keymap.refused:
            self.app.notice("warning", f"keybindings.json: {len(self.keymap.refused)} not taken "
                                       f"(/keybindings lists them): {self.keymap.refused[0]}")
        elif self.keymap.warnings:
            self.app.notice("warning", f"keybindings.json: {len(self.keymap.warnings)} to "
                                       f"look at (/keybindings): {self.keymap.warnings[0]}")

    def look_at_keybindings(self) -> bool:
        """Bind the file's keys again if it changed (True: it did)."""
        stamp = _stamp(claude_config_dir() / "keybindings.json")
        if self._node is None or stamp == self._stamp:
            return False
        self._stamp = stamp
        restore_keys(self._saved)
        self._bind()
        if not self.keymap.refused and not self.keymap.warnings:
            self.app.notice("info", f"keybindings.json read again: {len(self.keymap.bindings)} "
                                    f"key(s) and {len(self.keymap.chords)} chord(s) of yours bound")
        return True

    # -- chords (ui/input/chords.py's host) ---------------------------------------------

    def take_key(self, event: Any) -> bool:
        """True when a chord took the key (the app then gives it to nothing else)."""
        from textual import events

        return self._node is not None and isinstance(event, events.Key) and self.chords.take(event.key)

    def chord_hint(self, text: str) -> None:
        from agent_tui.ui.widgets.status_line import HintSlot

        self.app.status.set_hint(text, HintSlot.CHORD)

    def notice(self, level: str, text: str) -> None:
        self.app.notice(level, text)

    def chord_context(self) -> frozenset[str]:
        if len(self._node.screen_stack) > 1:  # a picker or a dialog has the keys
            return frozenset()
        return frozenset({"app", "input"} if self.app.prompt.has_focus else {"app"})

    def run_chord(self, chord: ChordBinding) -> None:
        """Its action, queued behind the keys already on their way (the text typed first)."""
        node = self._node if chord.whose == "app" else self.app.prompt
        node.call_later(node.run_action, chord.action)

    def chord_timer(self, seconds: float, callback: Any) -> Any:
        return self._node.set_timer(seconds, callback)

    def toggle_vim(self) -> bool:
        """Vim mode on or off, kept for the next session in your own settings
        (``editorMode`` in agent-tui's user settings file)."""
        from agent_tui.paths import user_config_dir
        from agent_tui.settings.local_rules import save_key

        on = self.app.prompt.vim is None
        self.app.prompt.set_vim(on)
        problem = save_key(user_config_dir() / "settings.json", "editorMode",
                           "vim" if on else "normal")
        if problem:
            self.app.notice("warning", f"vim mode not saved: {problem}")
        return on

    # -- output styles ---------------------------------------------------------------

    def _styles(self) -> Any:
        from agent_tui.core.memory.output_styles import load_output_styles

        return load_output_styles(self.app.workspace())

    def open_output_style_picker(self) -> None:
        from agent_tui.ui.screens.picker import PickerScreen, PickItem

        session = self.app.host.session
        current = getattr(getattr(getattr(session, "deps", None), "config", None),
                          "output_style", None) or "Default"
        items = [PickItem(s.name, Text(f"{clean(s.name):<16} {s.scope:<9} "
                                       f"{first_line(s.description, 80)}"))
                 for s in self._styles().styles]

        def chosen(name: str | None) -> None:
            if name is not None:
                error = self.set_output_style(name)
                if error is not None:
                    self.app.notice("warning", error)

        if not self.app.picker_slot.is_open:
            self.app.picker_slot.open(PickerScreen(
                "output style", "How the model writes. Saved for this project "
                "(.claude/settings.local.json).", items, current=current), chosen)

    def open_plugin_options(self, spec: str) -> None:
        from agent_tui.mcp_catalog.elicitation import ElicitAction, ElicitAnswer
        from agent_tui.ui.commands.plugins_page import option_form, save_form
        from agent_tui.ui.screens.elicitation import ElicitationScreen

        try:
            plugin_id, schema, form = option_form(spec)
        except ValueError as exc:
            self.app.notice("warning", str(exc))
            return

        def answered(answer: ElicitAnswer | None) -> None:
            if answer is not None and answer.action is ElicitAction.ACCEPT:
                self.app.notice(*save_form(plugin_id, schema, answer.content or {}))

        if not self.app.picker_slot.is_open:
            self.app.picker_slot.open(ElicitationScreen(
                form, title=f"plugin {clean(plugin_id)}", border="plugin options"), answered)

    def open_plugin_review(self, plugin_id: str, lines: list[str], then: Callable[[bool | None], None]) -> None:
        from agent_tui.ui.screens.plugin_review import PluginReviewScreen

        if self.app.picker_slot.is_open:
            self.app.notice("warning", f"close what is open, then /plugin enable {clean(plugin_id)} again")
            return
        self.app.picker_slot.open(PluginReviewScreen(plugin_id, lines), then)

    def set_output_style(self, name: str) -> str | None:
        from agent_tui.core.memory.prompt import build_system_prompt

        session = self.app.host.session
        if session is None or not hasattr(session, "deps"):
            return "the session is still starting"
        if self.app.running:
            return "a turn is running: choose the output style when it has ended"
        styles = self._styles()
        style = styles.find(name)
        if style is None and name.lower() != "default":
            return (f"no output style {name!r}: there are "
                    f"{', '.join(s.name for s in styles.styles)}")
        cfg = session.deps.config
        if cfg.system_replaced_by is None or style is not None:
            cfg.system = build_system_prompt(
                cfg.workspace, session.memory_files, replaced_by=cfg.system_replaced_by,
                appended=cfg.system_appended, style=style)
        cfg.output_style = style.name if style is not None else None
        shown = style.name if style is not None else "Default"
        saved = save_local_setting(self.app.workspace(), "outputStyle", shown)
        self.app.notice("info", f"output style: {shown}" + (
            " (saved in .claude/settings.local.json)" if saved is None else f" (not saved: {saved})"))
        return None

    # -- keybindings -------------------------------------------------------------------

    def keybindings_page(self) -> RenderableType:
        out = Text()
        where = self.keymap.file or "~/.claude/keybindings.json (none)"
        out.append(f"from {where}\n\n", style="dim")
        mine = {b.key: b for b in self.keymap.bindings}
        out.append("keys in force\n", style="bold")
        seen: set[str] = set()
        for binding in [*APP_BINDINGS, *INPUT_BINDINGS]:
            if not isinstance(binding, Binding):
                continue
            key, action, what = binding.key, binding.action, binding.description
            for one in key.split(","):
                if one in mine or one in seen:
                    continue
                seen.add(one)
                out.append(f"  {one:<16} {what or action}\n")
        yours_all: list[tuple[str, KeyBinding | ChordBinding]] = [
            *((b.key, b) for b in self.keymap.bindings),
            *((" ".join(c.keys), c) for c in self.keymap.chords)]
        for key, yours in yours_all:
            out.append(f"  {key:<16} {yours.what}", style="bold")
            out.append(f"  (yours: {clean(yours.written)})\n", style="dim")
        if self.keymap.warnings:
            out.append("\nto look at\n", style="bold")
            for line in self.keymap.warnings:
                out.append(f"  {clean(line)}\n")
        if self.keymap.refused:
            out.append("\nnot taken\n", style="bold")
            for line in self.keymap.refused:
                out.append(f"  {clean(line)}\n")
        vim = self.app.prompt.vim
        out.append(f"\nvim mode: {vim.mode if vim is not None else 'off'} (/vim)\n", style="dim")
        return out


def save_local_setting(workspace: Path, key: str, value: str) -> str | None:
    """Set ``key`` in the project's ``.claude/settings.local.json``; why not, or None
    (``settings/local_rules.py``: never through a link, a FIFO or over a file that is not
    a JSON object)."""
    from agent_tui.settings.local_rules import save_local_key

    return save_local_key(workspace, key, value) or None
