"""Custom commands: Markdown files that are prompts, in Claude Code's format.

Looked for in ``<workspace>/.agent-tui/commands/``, ``$XDG_CONFIG_HOME/agent-tui/commands/``
and ``<workspace>/.claude/commands/`` (in that order: the first file of a name wins).
``review.md`` is ``/review``; ``git/log.md`` is ``/git:log``. Optional front matter::

    ---
    description: Review the change for bugs
    argument-hint: [file]
    ---
    Review $ARGUMENTS for bugs and say what you would change.

``$ARGUMENTS`` is replaced by what follows the command; when the file does not use it,
what follows is added at the end. A command is a prompt: it runs nothing by itself
(other front-matter keys, such as ``allowed-tools``, are ignored).
"""

from __future__ import annotations

from pathlib import Path

from agent_tui.paths import user_config_dir
from agent_tui.ui.commands.registry import ArgsNeed, Command, CommandKind, is_command_name

MAX_BYTES = 64 * 1024  # a prompt file bigger than this is refused
MAX_FILES = 500  # per folder: a huge folder must not stall the menu
ARGUMENTS = "$ARGUMENTS"


def command_dirs(workspace: Path, user_dir: Path | None = None) -> list[tuple[str, Path]]:
    """(scope, folder), in the order a name is looked up."""
    user = user_dir if user_dir is not None else user_config_dir()
    return [
        ("project", workspace / ".agent-tui" / "commands"),
        ("user", user / "commands"),
        ("claude", workspace / ".claude" / "commands"),
    ]


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """``key: value`` lines between two ``---`` lines at the top, and the body."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            break
    else:
        return {}, text  # no closing line: it is all body
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip().lower()] = value.strip().strip("\"'")
    return meta, "\n".join(lines[end + 1 :]).lstrip("\n")


def _first_line(body: str) -> str:
    for line in body.split("\n"):
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:80]
    return ""


def load_command(path: Path, name: str, scope: str) -> Command:
    """One file as a command; raises OSError or ValueError saying what is wrong."""
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES // 1024} KB")
    text = path.read_bytes().decode("utf-8")  # UnicodeDecodeError is a ValueError
    meta, body = split_front_matter(text)
    if not body.strip():
        raise ValueError("empty prompt")
    description = meta.get("description") or _first_line(body)
    hint = meta.get("argument-hint", "")
    uses = ARGUMENTS in body
    return Command(
        name=name, description=description, args=hint or ("ARGS" if uses else ""),
        need=ArgsNeed.REQUIRED if uses else ArgsNeed.OPTIONAL, kind=CommandKind.CUSTOM,
        source=str(path), scope=scope, template=body,
    )


def load_custom(workspace: Path, user_dir: Path | None = None) -> tuple[list[Command], list[str]]:
    """Every custom command, and what was wrong with the files that were skipped."""
    found: dict[str, Command] = {}
    problems: list[str] = []
    for scope, folder in command_dirs(workspace, user_dir):
        try:
            paths = sorted(folder.rglob("*.md"))[:MAX_FILES] if folder.is_dir() else []
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror or exc}")
            continue
        for path in paths:
            parts = path.relative_to(folder).with_suffix("").parts
            name = ":".join(parts)
            if not is_command_name(name) or name in found:
                continue
            try:
                found[name] = load_command(path, name, scope)
            except (OSError, ValueError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                problems.append(f"{path}: {reason} (skipped)")
    return list(found.values()), problems


def expand(command: Command, args: str) -> str:
    """The prompt ``command`` stands for, with ``args`` in it."""
    body = command.template.strip("\n")
    if ARGUMENTS in body:
        return body.replace(ARGUMENTS, args)
    return f"{body}\n\n{args}" if args else body
