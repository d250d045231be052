"""The hooks of a session, read again when a settings file changes, between turns.

:class:`HooksReload` watches every settings file hooks may come from (the five, and
``--settings``) with ``runtime/file_watch.py``: a stat each when a turn starts (the
turn asks, through the hooks port, before its first hook), never on a timer and never
inside a turn, so a turn runs with one set of hooks from its start to its end. Each
changed file is first shown to the ``ConfigChange`` hooks in force (the turn runs
them: ``core/hooks/hook_points.py``); a file they block keeps its old hooks. The
others' hooks are parsed again and put in force in the session's
:class:`CommandHooks` (``commands``), with one notice saying what changed.

A broken edit (the file is no longer JSON, or a hook entry in it is malformed, so
some entry would be skipped) keeps that file's last good hooks, and the notice says
why (file, line, column). A project's hooks run as the user's do: guards always run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_tui.paths import project_settings_files, settings_files
from agent_tui.core.services.hooks_port import SettingsChange
from agent_tui.protocol import Event, Notice, NoticeLevel
from agent_tui.settings import read_settings_file
from agent_tui.settings.problems import SettingsProblem
from agent_tui.settings.schema import HooksSource
from agent_tui.runtime.file_watch import FileWatch
from agent_tui.hooks.commands import CommandHooks
from agent_tui.hooks.config import HookCommand, parse_hooks

_LISTED = 3  # hooks named in a notice, then "and N more"


class HooksReload:
    """Keeps ``hooks.commands`` in step with the settings files, between turns."""

    def __init__(
        self,
        hooks: CommandHooks,
        workspace: Path,
        *,
        emit: Callable[[Event], None],
        extra: Sequence[Path] = (),
    ) -> None:
        self.hooks = hooks
        self.emit = emit
        self._project = set(project_settings_files(workspace))
        self._files = [*settings_files(workspace), *extra]
        # per file, its last good hooks (in force)
        self._good: dict[Path, list[HookCommand]] = {path: [] for path in self._files}
        for hook in hooks.commands:
            self._good.setdefault(hook.file, []).append(hook)
        self._warnings: list[str] = []
        self._watch = FileWatch(self._paths)
        self._watch.look()  # as they are now: what the session started with
        self._pending: list[Path] = []  # changed, not applied yet (the hooks decide first)
        hooks.settings = self

    def _paths(self) -> Iterator[Path]:
        yield from self._files

    def observe(self, event: Any) -> None:
        """The session's events (nothing to do: the turn asks, ``changed``/``apply``)."""

    def source(self, path: Path) -> str:
        """The file's ``ConfigChange`` source, in Claude Code's words (``--settings``
        counts as the user's)."""
        if path not in self._project:
            return "user_settings"
        return "local_settings" if path.name == "settings.local.json" else "project_settings"

    def changed(self) -> list[SettingsChange]:
        """The files changed since the last look, and those a cancelled turn left
        undecided: one stat each."""
        changes = self._watch.look()
        for path in [*changes.added, *changes.changed, *changes.removed]:
            if path not in self._pending:
                self._pending.append(path)
        return [SettingsChange(source=self.source(p), file_path=str(p)) for p in self._pending]

    def look(self) -> None:
        """Read the changed files again and put their hooks in force (no hook asked)."""
        self.changed()
        self.apply({})

    def apply(self, blocked: Mapping[str, str]) -> None:
        """Put the pending files' hooks in force, but those of ``blocked`` (path: the
        hook's reason), which keep their old hooks; one notice."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        before = list(self.hooks.commands)
        self._warnings = []
        broken: list[str] = []
        for path in pending:
            if str(path) in blocked:
                said = blocked[str(path)]
                broken.append(f"a ConfigChange hook blocked the change to {path}"
                              + (f" ({said})" if said else "") + ": its hooks stay as they were")
                continue
            hooks, why = self._read(path)
            if why is not None:
                broken.append(f"{why}: the hooks of this file stay as they were")
            else:
                self._good[path] = hooks
        now = [h for path in self._files for h in self._good.get(path, [])]
        self.hooks.commands = now
        parts = [_what_changed(before, now)]
        parts = [p for p in (*parts, *self._warnings, *broken) if p]
        if parts:
            level = NoticeLevel.WARNING if broken or self._warnings else NoticeLevel.INFO
            self.emit(Notice(level=level, text="; ".join(parts)))

    def _read(self, path: Path) -> tuple[list[HookCommand], str | None]:
        """The file's hooks now, or why the last good ones stay (a broken edit)."""
        data, problems = read_settings_file(path)
        if data is None:
            if problems:  # unreadable, not JSON, not an object
                return [], _why(problems[0])
            return [], None  # gone: its hooks go with it
        if data.hooks is None:
            return [], None
        source = HooksSource(file=path, project=path in self._project, value=data.hooks,
                             where=data._hooks_where)
        commands, problems = parse_hooks(source)
        skipped = [p for p in problems if p.message.endswith("(skipped)")]
        if skipped:
            return [], _why(skipped[0])
        self._warnings += [str(p) for p in problems]  # kept, with a word (as at start)
        return commands, None


def _why(problem: SettingsProblem) -> str:
    """Where and what, without the start's "(skipped)": nothing is skipped here."""
    shown = problem.model_copy(update={
        "message": problem.message.removesuffix(" (skipped)"), "only_this": True})
    return str(shown)


def _key(hook: HookCommand) -> tuple[str, str, str]:
    return str(hook.event), hook.matcher.text, hook.command


def _name(hook: HookCommand) -> str:
    matcher = f" [{hook.matcher.text}]" if hook.matcher.text else ""
    command = hook.command if len(hook.command) <= 80 else hook.command[:79] + "…"
    return f"{hook.event}{matcher} {command}"


def _some(hooks: list[HookCommand]) -> str:
    shown = ", ".join(_name(h) for h in hooks[:_LISTED])
    return shown + (f" and {len(hooks) - _LISTED} more" if len(hooks) > _LISTED else "")


def _what_changed(before: list[HookCommand], now: list[HookCommand]) -> str:
    old = {_key(h) for h in before}
    new = {_key(h) for h in now}
    added = [h for h in now if _key(h) not in old]
    removed = [h for h in before if _key(h) not in new]
    changed = [h for h in now if _key(h) in old and any(
        _key(b) == _key(h) and (b.timeout_s, b.on_failure) != (h.timeout_s, h.on_failure)
        for b in before)]
    parts = []
    if added:
        parts.append(f"added {_some(added)}")
    if removed:
        parts.append(f"removed {_some(removed)}")
    if changed:
        parts.append(f"changed {_some(changed)}")
    if not parts:
        return ""
    return f"hooks reloaded ({len(now)} in force): " + "; ".join(parts)
