"""Settings files: Claude Code's and agent-tui's ``settings.json``, read and merged.

Five files, lowest to highest, then the command line (every key optional)::

    ~/.claude/settings.json                   (Claude Code's user file; $CLAUDE_CONFIG_DIR)
    $XDG_CONFIG_HOME/agent-tui/settings.json  (default ~/.config/agent-tui/)
    .claude/settings.json                     (the project's, shared)
    .agent-tui/settings.json                  (the project's, for agent-tui)
    .claude/settings.local.json               (the project's, personal)
    --settings FILE                           (applied last, trusted like the user's own)

The shape is Claude Code's::

    {
      "$schema": "https://json.schemastore.org/claude-code-settings.json",
      "permissions": {
        "allow": ["Bash(npm run test:*)", "Read"],
        "ask":   ["Bash(git push *)"],
        "deny":  ["Bash(rm -rf *)", "Read(./.env)", "Read(~/.ssh/**)"],
        "defaultMode": "acceptEdits"
      },
      "model": "claude-sonnet-4-5",
      "env": {"PYTHONDONTWRITEBYTECODE": "1"},
      "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "..."}]}]}
    }

plus agent-tui's own keys (``theme``, ``limits``, ``sandbox``, ``webFetch``,
``webSearch``...).

Merging: permission rules from every file add up (a deny in any wins, by the rule
precedence of :mod:`agent_tui.permissions`); ``defaultMode``, ``model``, ``theme``...:
the higher file's value wins, and a command-line option over all (the CLI applies
that last step); ``env``: one mapping, the higher file's value wins per variable.
``defaultMode`` takes Claude Code's words too (``default``, ``acceptEdits``,
``bypassPermissions``, ``plan``, ``dontAsk``: ``protocol.CLAUDE_MODE_NAMES``), and
``permissions.disableBypassPermissionsMode: "disable"`` in any file turns ``auto`` off
(the CLI refuses it, from the files or the command line).

The three project files are the project's: their deny and ask rules apply at once,
but they cannot grant themselves ``auto`` mode, set variables that make every
command run code of their choosing, open the sandbox or let web_fetch reach private
addresses, and their hooks run only once the user trusts the project (the CLI
decides); ``apiKeyHelper`` (a command that prints the API key) is taken from the
user's files and ``--settings`` only, and so are ``enableAllProjectMcpServers`` and
``enabledMcpjsonServers`` (which of the project's ``.mcp.json`` servers may start: a
repository cannot approve its own); ``disabledMcpjsonServers`` is taken from any file.
``env`` is handed to the commands the agent runs (not to the agent itself); the
agent's credentials and the process layer's ``AGENT_TUI_*`` tags cannot be set.

``hooks`` is kept as written, with where each part of it is in its file, for
``hooks/`` to parse: a malformed hook is skipped alone, never the whole file.

Loading never raises. A file that cannot be read, is not JSON or not an object is
skipped whole and reported with the file, line and column. Inside a good file, what
is wrong is skipped alone (:mod:`.lenient`): a key agent-tui does not know is named
in one notice, a bad value or a bad rule is reported with its line and column, and
the rest of the file applies.

A file's shape is :mod:`.schema`; what is wrong in one, and how it is worded,
:mod:`.problems`; how each key merges and what a project may not set, its row there
(:mod:`.keys`, :mod:`.policies`); here the files are read and merged.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import json
from collections.abc import Collection, Sequence
from pathlib import Path

from pydantic import ConfigDict, Field

from agent_tui.json_positions import position_at, positions_of
from agent_tui.paths import (
    project_settings_files,
    settings_files,
    user_config_dir,
)
from agent_tui.permissions import PermissionRules
from agent_tui.config_file import MAX_BYTES, Unreadable, read_config
from agent_tui.settings.jsonc import relax
from agent_tui.settings.keys import merge_file
from agent_tui.settings.lenient import validate_leniently
from agent_tui.settings.merged import Merged, Source
from agent_tui.settings.problems import SettingsProblem, json_type
from agent_tui.settings.untrusted import untrusted_message, withhold
from agent_tui.settings.schema import Keys, SettingsFile


# -- the result ---------------------------------------------------------------------


class LoadedSettings(Keys, Merged):
    """The merged settings of the files that loaded, and what went wrong with the rest.

    The plain keys are :class:`.schema.Keys`' fields, the others :class:`.merged.Merged`'s;
    each file is merged row by row (:mod:`.keys`)."""

    model_config = ConfigDict(populate_by_name=True)

    files: list[Path] = Field(default_factory=list)  # the files that were applied
    problem_details: list[SettingsProblem] = Field(default_factory=list)

    @property
    def auto_disabled_by(self) -> Path | None:
        """The file whose permissions.disableBypassPermissionsMode turns auto mode off."""
        return self.sources.get("disable_bypass")

    @property
    def api_key_helper_file(self) -> Path | None:
        """The file apiKeyHelper came from (a user's file or --settings, never a project's)."""
        return self.sources.get("api_key_helper")

    @property
    def problems(self) -> list[str]:
        """Messages for the user, one per problem, each naming the file and line."""
        return [str(p) for p in self.problem_details]

    def permissions_rules(self) -> PermissionRules:
        # Every rule was parsed when its file was read: this cannot fail.
        return PermissionRules(allow=self.allow, ask=self.ask, deny=self.deny)

    def apply(
        self, data: SettingsFile, path: Path, *, project: bool = False,
        settings_root: Path | None = None, claude_file: bool = False,
    ) -> None:
        """Merge one (valid) file over what is here, each key by its row
        (:mod:`.keys`, :mod:`.policies`): rules add up, scalars override.

        A project's file cannot grant itself ``auto`` mode, nor set variables that
        make every approved command run code of its choosing (``BASH_ENV``,
        ``PATH``...): a cloned repository is not trusted by being opened.
        ``settings_root`` is the folder the file's ``/path`` rules are relative to
        (None: the project root); ``claude_file``: one of Claude Code's files, where
        ``defaultMode`` words are Claude Code's.
        """
        source = Source(path=path, project=project, claude_file=claude_file,
                        settings_root=str(settings_root) if settings_root is not None else None,
                        hooks_where=data._hooks_where)
        for refused in merge_file(self, data, source):
            self.problem_details.append(SettingsProblem(file=path, message=refused, only_this=True))
        self.files.append(path)


user_settings_dir = user_config_dir

#: ``--setting-sources``' words (Claude Code's): the user's files, the project's shared
#: ones, its personal ``.claude/settings.local.json``.
SETTING_SOURCES = ("user", "project", "local")
settings_paths = settings_files


def load_settings(
    workspace: Path, *, user_dir: Path | None = None, claude_dir: Path | None = None,
    extra: Sequence[Path] = (), trusted: bool = False, sources: Collection[str] | None = None,
) -> LoadedSettings:
    """Read and merge the settings files in their order (:func:`settings_paths`), then
    the ``extra`` files (``--settings``); never raises.

    Unless ``trusted`` (:mod:`.trust`), a project's file only takes away: what it
    would grant is withheld (:func:`.trust.withhold`) and named in one notice per file.
    A missing file is no problem (a missing extra file is); a broken one is skipped
    whole, and a broken part of one skipped alone, each reported in ``problems``.
    ``sources`` (``--setting-sources``): only the files of these (:data:`SETTING_SOURCES`)
    are read; ``extra`` always is.
    """
    loaded = LoadedSettings()
    project = project_settings_files(workspace)
    files = settings_paths(workspace, user_dir=user_dir, claude_dir=claude_dir)
    claude_user_file = files[0]
    if sources is not None:
        files = [path for path in files if _source_of(path, project) in sources]
    for path in (*files, *extra):
        data, problems = read_settings_file(path)
        if data is None and not problems and path in extra:
            problems = [SettingsProblem(file=path, message="no such file")]
        loaded.problem_details.extend(problems)
        if data is not None and path in project and not trusted:
            data, withheld = withhold(data)
            if withheld:
                loaded.problem_details.append(SettingsProblem(
                    file=path, message=untrusted_message(withheld), only_this=True))
        if data is not None:
            mine = path in project or path in extra
            loaded.apply(data, path, project=path in project,
                         settings_root=None if mine else path.parent,
                         claude_file=path == claude_user_file or path.parent.name == ".claude")
    return loaded


def _source_of(path: Path, project: list[Path]) -> str:
    if path == project[-1]:  # .claude/settings.local.json
        return "local"
    return "project" if path in project else "user"


def read_settings_file(path: Path) -> tuple[SettingsFile | None, list[SettingsProblem]]:
    """One file: (its good settings, the problems of what was skipped), ``None`` when
    it is absent (no problems) or cannot be used at all (its problems)."""
    try:
        raw = read_config(path, limit=MAX_BYTES)
    except FileNotFoundError:
        return None, []
    except Unreadable as exc:
        return None, [SettingsProblem(file=path, message=str(exc))]
    except OSError as exc:
        return None, [SettingsProblem(file=path, message=f"cannot read: {exc.strerror or exc}")]
    return parse_settings(raw, path)


def parse_settings(
    raw: bytes | str, path: Path
) -> tuple[SettingsFile | None, list[SettingsProblem]]:
    """Validate a settings file's content; ``path`` is only used in messages.

    (None, problems) when the content is no JSON object; else the settings that are
    good and a problem for each part skipped."""
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
    relaxed: list[SettingsProblem] = []
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        lenient = relax(text)  # comments and trailing commas: read, and said
        value = None
        if lenient.changed:
            try:
                value = json.loads(lenient.text)
            except json.JSONDecodeError as after:
                exc = after  # what is wrong besides them
            except RecursionError:
                pass
        if value is None:
            return None, [SettingsProblem(
                file=path, line=exc.lineno, column=exc.colno, message=f"invalid JSON: {exc.msg}",
            )]
        line, column, what = lenient.describe(text)
        relaxed.append(SettingsProblem(
            file=path, line=line, column=column, only_this=True,
            message=f"not strict JSON ({what}): read all the same; Claude Code ignores the "
                    "whole file until they are removed"))
        text = lenient.text
    except RecursionError:
        return None, [SettingsProblem(file=path, message="invalid JSON: nested too deeply")]
    if not isinstance(value, dict):
        return None, [SettingsProblem(
            file=path, line=1, column=1,
            message=f"the file must hold a JSON object {{...}}, not {json_type(value)}",
        )]
    data, problems = validate_leniently(value, text, path)
    problems = relaxed + problems
    if data.hooks is not None:
        data._hooks_where = {
            loc[1:]: position_at(text, offset)
            for loc, offset in positions_of(text).items() if loc[:1] == ("hooks",)
        }
    return data, problems
