"""Where custom commands are, what each file says, and the name each is typed as.

Folders, in the order a name is looked up (the first file of a name wins):
``$XDG_CONFIG_HOME/agent-tui/commands/``, ``~/.claude/commands/``,
``<workspace>/.agent-tui/commands/`` and ``<workspace>/.claude/commands/``: the user's
command wins over a project's of the same name, with a notice (as in Claude Code).
``review.md`` is ``/review``. A file in a subfolder is named as Claude Code 2.1.x names
it: ``frontend/test.md`` is ``/frontend:test``, shown with ``(project:frontend)``; it can
also be typed ``/test`` (``short``) where that is unambiguous: no other command (a
``test.md`` elsewhere, or a built-in command) has that name.
An enabled plugin's ``commands/deploy.md`` is ``/PLUGIN:deploy`` (``/deploy`` too
when no other has it), after every folder above.

Front matter keys: ``description`` (else the body's first line), ``argument-hint``,
``allowed-tools`` (Claude Code's rules: a string split at commas, or a list),
``model``, ``disable-model-invocation``. Another key is named in a problem (and
ignored); a malformed line is a problem with its file and line, the rest still read;
a front matter never closed, an empty prompt, a file too large or not UTF-8 text is
skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agent_tui.commands.line import is_command_name
from agent_tui.core.memory.memory import claude_user_dir
from agent_tui.paths import source_read, user_config_dir
from agent_tui.plugins import plugin_folders
from agent_tui.config_file import read_config
from agent_tui.frontmatter import read_front_matter_leniently, split_top_level

MAX_BYTES = 64 * 1024  # a prompt file bigger than this is refused
MAX_FILES = 500  # per folder: a huge folder must not stall the menu
KNOWN_KEYS = frozenset({"description", "argument-hint", "allowed-tools", "model",
                        "disable-model-invocation"})
ARGUMENTS = "$ARGUMENTS"
PLUGIN = "plugin:"  # the scope of a plugin's folder: "plugin:NAME"


class CommandFile(BaseModel):
    name: str  # as typed after "/": "frontend:test" for frontend/test.md
    path_name: str  # "frontend:test": always accepted too
    short: str = ""  # "test": also accepted, where no other command has that name
    description: str
    argument_hint: str = ""
    allowed_tools: list[str] = Field(default_factory=list)
    model: str | None = None
    body: str
    body_line: int = 1  # the file's line the body starts on
    source: str  # the file
    scope: str  # "project", "user", "project:frontend"
    notes: list[str] = Field(default_factory=list)  # its problems, said again at each use

    @property
    def takes_arguments(self) -> bool:
        return ARGUMENTS in self.body or any(f"${n}" in self.body for n in range(10))


class LoadedCommands(BaseModel):
    commands: list[CommandFile] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)

    def find(self, name: str) -> CommandFile | None:
        for command in self.commands:
            if name in (command.name, command.path_name) or (command.short and name == command.short):
                return command
        return None


def command_dirs(workspace: Path, user_dir: Path | None = None,
                 claude_dir: Path | None = None) -> list[tuple[str, Path]]:
    """(scope, folder), in the order a name is looked up."""
    user = user_dir if user_dir is not None else user_config_dir()
    claude = claude_dir if claude_dir is not None else claude_user_dir()
    return [(scope, folder) for scope, folder in (  # the user's first: a cloned
        ("user", user / "commands"),  # repository's /commit never replaces theirs
        ("user", claude / "commands"),
        *((f"{PLUGIN}{name}", folder) for name, folder in plugin_folders("commands", claude_dir)),
        ("project", workspace / ".agent-tui" / "commands"),
        ("project", workspace / ".claude" / "commands"),
    ) if scope.startswith(PLUGIN) or source_read(scope)]


def _first_line(body: str) -> str:
    for line in body.split("\n"):
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:80]
    return ""


def _tools(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [t for t in split_top_level(str(value or "")) if t]


def load_command(path: Path, parts: tuple[str, ...], scope: str) -> tuple[CommandFile, list[str]]:
    """One file as a command, and its problems; raises OSError or ValueError (skipped)."""
    text = read_config(path, limit=MAX_BYTES).decode("utf-8")  # UnicodeDecodeError: ValueError
    found = read_front_matter_leniently(text)
    if not found.closed:
        raise ValueError(f"line {found.problems[0][0]}: {found.problems[0][1]}")
    problems = [f"{path}:{line}: {what}" for line, what in found.problems]
    if not found.body.strip():
        raise ValueError("empty prompt")
    meta = found.meta
    notes = []
    for key in meta:
        if key not in KNOWN_KEYS:
            notes.append(f"{path}:{found.lines[key]}: front matter key {key!r} is not supported (ignored)")
    if meta.get("disable-model-invocation") is False:
        notes.append(f"{path}:{found.lines['disable-model-invocation']}: disable-model-invocation: "
                     "false has no effect: the model never runs commands in agent-tui")
    model = meta.get("model")
    namespace = ":".join(parts[:-1])
    return CommandFile(
        name=":".join(parts), path_name=":".join(parts),
        description=str(meta.get("description") or _first_line(found.body)),
        argument_hint=found.raw.get("argument-hint", ""),  # "[pr] [priority]" is text
        allowed_tools=_tools(meta.get("allowed-tools")),
        model=str(model).strip() if model and str(model).strip() != "inherit" else None,
        body=found.body, body_line=found.body_line, source=str(path),
        scope=f"{scope}:{namespace}" if namespace else scope, notes=problems + notes,
    ), problems + notes


def load_commands(workspace: Path, user_dir: Path | None = None, claude_dir: Path | None = None,
                  taken: frozenset[str] = frozenset(),
                  last_good: Mapping[str, CommandFile] | None = None) -> LoadedCommands:
    """Every custom command, and what was wrong with the files. ``taken``: names a
    subfolder's command may not have (the built-in commands). ``last_good``: by file,
    the version to keep of a file that no longer reads (an edit that broke it)."""
    by_path: dict[str, CommandFile] = {}
    problems: list[str] = []
    for scope, folder in command_dirs(Path(workspace), user_dir, claude_dir):
        try:
            paths = sorted(folder.rglob("*.md"))[:MAX_FILES] if folder.is_dir() else []
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror or exc}")
            continue
        for path in paths:
            parts = path.relative_to(folder).with_suffix("").parts
            file_scope = scope
            if scope.startswith(PLUGIN):  # a plugin's command is /PLUGIN:NAME
                file_scope, parts = "plugin", (scope.removeprefix(PLUGIN), *parts)
            if not is_command_name(":".join(parts)):
                continue
            mine = by_path.get(":".join(parts))
            if mine is not None:
                if scope == "project" and mine.scope.startswith("user"):
                    problems.append(f"{path}: /{':'.join(parts)} is also your own command "
                                    f"({mine.source}): yours is used (a project's command "
                                    "never replaces yours)")
                continue
            try:
                command, said = load_command(path, parts, file_scope)
            except (OSError, ValueError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                kept = (last_good or {}).get(str(path))
                if kept is None:
                    problems.append(f"{path}: {reason} (skipped)")
                    continue
                problems.append(f"{path}: {reason} (its last good version is kept)")
                command = kept.model_copy(update={"name": ":".join(parts), "short": ""})
                said = []
            by_path[command.path_name] = command
            problems.extend(said)
    return LoadedCommands(commands=_named(list(by_path.values()), taken), problems=problems)


def _named(commands: list[CommandFile], taken: frozenset[str]) -> list[CommandFile]:
    """A subfolder's command may also be typed by its file's name when no other
    command has it."""
    short: dict[str, int] = {}
    for command in commands:
        last = command.path_name.rsplit(":", 1)[-1]
        short[last] = short.get(last, 0) + 1
    top = {c.path_name for c in commands if ":" not in c.path_name}
    named = []
    for command in commands:
        last = command.path_name.rsplit(":", 1)[-1]
        if ":" in command.path_name and short[last] == 1 and last not in top and last not in taken:
            command = command.model_copy(update={"short": last})
        named.append(command)
    return named
