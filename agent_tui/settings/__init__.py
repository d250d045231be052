"""Settings files: the user's and the project's ``settings.json``, read and merged.

Two files, the shape Claude Code uses (every key optional)::

    {
      "permissions": {
        "allow": ["bash(git status:*)", "read_file"],
        "ask":   ["write_file(*.lock)"],
        "deny":  ["bash(rm -rf:*)", "read_file(.env)"],
        "defaultMode": "accept-edits"
      },
      "model": "claude-sonnet-4-5",
      "theme": "dark",
      "env": {"PYTHONDONTWRITEBYTECODE": "1"},
      "hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "..."}]}]},
      "webFetch": {"allowPrivate": false}
    }

- user: ``$XDG_CONFIG_HOME/agent-tui/settings.json`` (default ``~/.config/agent-tui/``);
- project: ``<workspace>/.agent-tui/settings.json``;
- ``--settings FILE``: applied last, trusted like the user's own file.

Merging: permission rules from both files add up (a deny in either wins, by the rule
precedence of :mod:`agent_tui.permissions`); ``defaultMode``, ``model``,
``theme``: the project's value wins over the user's, and a command-line option over
both (the CLI applies that last step); ``env``: one mapping, the project's value wins
per variable; ``webFetch.allowPrivate`` (web_fetch may open loopback and private
addresses) is only taken from the user's file. ``env`` is handed to the commands the agent runs (not to the agent
itself); the agent's credentials and the process layer's ``AGENT_TUI_*`` tags cannot
be set there.

``hooks`` is kept as written, with where each part of it is in its file, for
``tools/hooks/`` to parse: a malformed hook is skipped alone, never the whole file.
Each file's hooks are kept apart with the file's name; a project's run only once the
user trusts the project (the CLI decides).

Loading never raises. A file that cannot be read, is not JSON, has an unknown key, a
value of the wrong type or a rule that does not parse is skipped *as a whole* (never
half-applied) and each of its problems is reported with the file, line and column;
the other file still applies.

A file's shape is :mod:`.schema`; what is wrong in one, and how it is worded,
:mod:`.problems`; here the files are read and merged.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from agent_tui import containment_settings as cs
from agent_tui.json_positions import offset_of, position_at, positions_of
from agent_tui.paths import settings_files, user_config_dir
from agent_tui.permissions import PermissionRules
from agent_tui.protocol import PermissionMode
from agent_tui.settings.problems import SettingsProblem, explain, json_type
from agent_tui.settings.schema import HooksSource, SettingsFile

#: Bigger than any sane settings file; a bound so a hostile workspace cannot make us
#: read a huge file at startup.
MAX_BYTES = 1 << 20

# -- the result ---------------------------------------------------------------------


class LoadedSettings(BaseModel):
    """The merged settings of the files that loaded, and what went wrong with the rest."""

    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    default_mode: PermissionMode | None = None
    model: str | None = None
    theme: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    limits: cs.Limits = Field(default_factory=cs.Limits)
    sandbox: cs.Sandbox = Field(default_factory=cs.Sandbox)
    context_window: int | None = None
    thinking: str | None = None
    effort: str | None = None
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    hooks: list[HooksSource] = Field(default_factory=list)  # each file's, in load order
    web_fetch_allow_private: bool = False
    files: list[Path] = Field(default_factory=list)  # the files that were applied
    problem_details: list[SettingsProblem] = Field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """Messages for the user, one per problem, each naming the file and line."""
        return [str(p) for p in self.problem_details]

    def permissions_rules(self) -> PermissionRules:
        # Every rule was parsed when its file was validated: this cannot fail.
        return PermissionRules(allow=self.allow, ask=self.ask, deny=self.deny)

    def apply(self, data: SettingsFile, path: Path, *, project: bool = False) -> None:
        """Merge one (valid) file over what is here: rules add up, scalars override.

        A project's file cannot grant itself ``auto`` mode, nor set variables that
        make every approved command run code of its choosing (``BASH_ENV``,
        ``PATH``...): a cloned repository is not trusted by being opened.
        """
        perms = data.permissions
        lists = ((self.allow, perms.allow), (self.ask, perms.ask), (self.deny, perms.deny))
        for mine, theirs in lists:
            mine.extend(r for r in theirs if r not in mine)
        if perms.default_mode is not None:
            if project and perms.default_mode == PermissionMode.AUTO:
                self.problem_details.append(SettingsProblem(file=path, message=(
                    "defaultMode auto is only taken from your user settings or the command "
                    "line: a project cannot grant itself auto mode (ignored)"), only_this=True))
            else:
                self.default_mode = PermissionMode(perms.default_mode)
        if data.model is not None:
            self.model = data.model
        if data.theme is not None:
            self.theme = data.theme
        for key in ("context_window", "effort"):
            if getattr(data, key) is not None:
                setattr(self, key, getattr(data, key))
        if data.thinking is not None:
            self.thinking = str(data.thinking)
        self.prices.update({name: p.model_dump() for name, p in data.prices.items()})
        for key, value in data.env.items():
            if project and key in PROJECT_ENV_REFUSED:
                self.problem_details.append(SettingsProblem(file=path, message=(
                    f"env {key} is only taken from your user settings: in a project's file "
                    "it could make every approved command run the project's code (ignored)"),
                    only_this=True))
                continue
            self.env[key] = value
        for refused in cs.merge(self.limits, self.sandbox, data.limits, data.sandbox, project):
            self.problem_details.append(SettingsProblem(file=path, message=refused, only_this=True))
        if data.hooks is not None:
            self.hooks.append(HooksSource(
                file=path, project=project, value=data.hooks, where=data._hooks_where,
            ))
        if data.web_fetch is not None:
            if project and data.web_fetch.allow_private:
                self.problem_details.append(SettingsProblem(file=path, message=(
                    "webFetch.allowPrivate is only taken from your user settings: a project "
                    "could point web_fetch at your local network (ignored)"), only_this=True))
            else:
                self.web_fetch_allow_private = data.web_fetch.allow_private
        self.files.append(path)


# Variables that decide what code a command runs: not from a project's file.
PROJECT_ENV_REFUSED = frozenset({
    "BASH_ENV", "ENV", "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PROMPT_COMMAND",
    "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS",
    "PERL5OPT", "RUBYOPT", "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
})


user_settings_dir = user_config_dir
settings_paths = settings_files


def load_settings(
    workspace: Path, *, user_dir: Path | None = None, extra: Sequence[Path] = ()
) -> LoadedSettings:
    """Read and merge the user's and the project's settings, then the ``extra`` files
    (``--settings``); never raises.

    A missing user or project file is no problem (a missing extra file is); a broken
    one is skipped whole and reported in ``problems``.
    """
    loaded = LoadedSettings()
    user_file, project_file = settings_paths(workspace, user_dir=user_dir)
    for path in (user_file, project_file, *extra):
        data, problems = read_settings_file(path)
        if data is None and not problems and path in extra:
            problems = [SettingsProblem(file=path, message="no such file")]
        loaded.problem_details.extend(problems)
        if data is not None:
            loaded.apply(data, path, project=path == project_file)
    return loaded


def read_settings_file(path: Path) -> tuple[SettingsFile | None, list[SettingsProblem]]:
    """One file: (its settings, []) when it is good or absent (``None`` when absent),
    else (None, its problems)."""
    try:
        raw = _read_bytes(path)
    except FileNotFoundError:
        return None, []
    except _Unreadable as exc:
        return None, [SettingsProblem(file=path, message=str(exc))]
    except OSError as exc:
        return None, [SettingsProblem(file=path, message=f"cannot read: {exc.strerror or exc}")]
    return parse_settings(raw, path)


def parse_settings(
    raw: bytes | str, path: Path
) -> tuple[SettingsFile | None, list[SettingsProblem]]:
    """Validate a settings file's content; ``path`` is only used in messages."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line, column = position_at(raw, exc.start, newline=b"\n")
            return None, [SettingsProblem(
                file=path, line=line, column=column, message="not valid UTF-8 text",
            )]
    else:
        text = raw.removeprefix("\ufeff")
    if not text.strip():
        return SettingsFile(), []  # an empty file is an empty object
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, [SettingsProblem(
            file=path, line=exc.lineno, column=exc.colno, message=f"invalid JSON: {exc.msg}",
        )]
    except RecursionError:
        return None, [SettingsProblem(file=path, message="invalid JSON: nested too deeply")]
    if not isinstance(value, dict):
        return None, [SettingsProblem(
            file=path, line=1, column=1,
            message=f"the file must hold a JSON object {{...}}, not {json_type(value)}",
        )]
    try:
        data = SettingsFile.model_validate(value)
    except ValidationError as exc:
        positions = positions_of(text)
        problems = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            offset = offset_of(positions, loc)
            line, column = position_at(text, offset) if offset is not None else (None, None)
            problems.append(SettingsProblem(
                file=path, line=line, column=column, message=explain(err),
            ))
        problems.sort(key=lambda p: (p.line or 0, p.column or 0))
        return None, problems
    if data.hooks is not None:
        data._hooks_where = {
            loc[1:]: position_at(text, offset)
            for loc, offset in positions_of(text).items() if loc[:1] == ("hooks",)
        }
    return data, []


# -- reading ------------------------------------------------------------------------


class _Unreadable(Exception):
    pass


def _read_bytes(path: Path) -> bytes:
    # O_NONBLOCK + fstat: a FIFO or device planted in a workspace must not hang startup.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise _Unreadable("is a directory, not a settings file")
        if not stat.S_ISREG(st.st_mode):
            raise _Unreadable("not a regular file")
        if st.st_size > MAX_BYTES:
            raise _Unreadable(f"too big for a settings file ({st.st_size} bytes)")
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_BYTES:
            raise _Unreadable("too big for a settings file")
        return b"".join(chunks)
    finally:
        os.close(fd)


