"""The system prompt: built once per session, byte-identical for all its requests.

Nothing in it changes while the session runs (no clock, no live git state), so the
prompt cache finds it again on every request. It holds the coding-agent
instructions, the environment as it was at the session's start (workspace, platform,
shell, date, git branch and a short status) and the project memory
(``core/memory/memory.py``).
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path

from agent_tui.core.memory.memory import MemoryFile
from agent_tui.core.memory.output_styles import OutputStyle, style_section
from agent_tui.credentials import command_env

INSTRUCTIONS = """\
You are agent-tui, a coding agent. You work in the user's workspace through tools: \
you read and search files, edit them, and run commands. The user watches your tool \
calls live and can stop you at any moment.

# How to work
- Understand before you change: read the files involved and search the codebase \
(grep, glob) rather than guessing names or paths.
- Prefer the dedicated tools: read_file over cat, edit_file over sed, grep and glob \
over find or grep in bash. Use bash for builds, tests, git and other commands.
- Keep changes small and focused on what was asked. Follow the project's existing \
style, structure and conventions. Do not add files, dependencies or features nobody \
asked for.
- After a change, check it: run the relevant tests or the build when the project \
has them, and say what you ran and what happened.
- Be brief in what you write to the user. Lead with the answer or the result; name \
the files you changed.
- Ask when a request is ambiguous or a step is risky or destructive (deleting data, \
force-pushing, touching files outside the workspace).

# Interruptions and uncertain results
- A tool result may say that a call was interrupted, denied, not run, or that its \
result is unknown. Believe it: an interrupted command may have partly run, an unknown \
result may or may not have taken effect.
- Before redoing interrupted or uncertain work, check the current state (read the \
file, list the folder, run git status) and continue from what is really there.
- A denied call was not run: do not retry it unchanged; ask or take another way.
- When the user steers you mid-task, follow the newest instruction.

# Project instructions
Files named AGENTS.md or CLAUDE.md hold the project's and the user's instructions. \
Follow them; a folder's own file applies to work in that folder."""

INIT_PROMPT = """\
Draft an AGENTS.md for this project, at the workspace root. Explore first: the \
README, the build and test setup, the layout of the source folders, and any existing \
AGENTS.md or CLAUDE.md. Then write a short file (well under 200 lines) that tells a \
coding agent what it needs and cannot quickly infer: how to build, test and lint; the \
layout; conventions that matter; what to avoid. Write it with write_file so the user \
can review the change before it is made. If an AGENTS.md exists, improve it instead."""


#: The workspace's git config may name commands (``core.fsmonitor``, hooks): off for the
#: look at start-up, which runs before the user has said a word (the command line's
#: ``-c`` wins over every config file).
_SAFE_GIT = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
             "--no-optional-locks")


def _git(workspace: Path, *args: str) -> str:
    """``git`` at start-up: no command of the repository's, without the agent's key
    (``credentials.command_env``) and without ``GIT_*`` variables that could add config."""
    env = {k: v for k, v in command_env().items() if not k.startswith("GIT_")}
    try:
        out = subprocess.run(
            ["git", *_SAFE_GIT, "-C", str(workspace), *args],
            capture_output=True, text=True, timeout=2.0, stdin=subprocess.DEVNULL, env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def _runs_filters(workspace: Path) -> bool:
    """Whether the repository's config names filter commands, which ``git status``
    runs on files whose index entry looks stale: then the status is not read."""
    return bool(_git(workspace, "config", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$"))


def environment(workspace: Path, today: datetime.date | None = None) -> str:
    lines = [
        f"Workspace (the current directory of every command): {workspace}",
        f"Platform: {platform.system()} {platform.release()}",
        f"Shell: {os.environ.get('SHELL') or '/bin/sh'} (commands run under bash -c)",
        f"Today's date: {(today or datetime.date.today()).isoformat()}",
    ]
    branch = _git(workspace, "rev-parse", "--abbrev-ref", "HEAD")
    if branch and _runs_filters(workspace):
        lines.append(f"Git branch at session start: {branch}")
        lines.append("Git status at session start: not read (the repository's config names "
                     "filter commands, which git status would run)")
    elif branch:
        status = _git(workspace, "status", "--short")
        changed = status.splitlines()
        lines.append(f"Git branch at session start: {branch}")
        if changed:
            shown = "\n".join(changed[:20])
            more = f"\n... and {len(changed) - 20} more" if len(changed) > 20 else ""
            lines.append(f"Git status at session start ({len(changed)} changed):\n{shown}{more}")
        else:
            lines.append("Git status at session start: clean")
    else:
        lines.append("The workspace is not a git repository.")
    return "\n".join(lines)


def memory_section(memory: list[MemoryFile]) -> str:
    parts = []
    for item in memory:
        note = " (cut at 64 KiB)" if item.truncated else ""
        source = f' imported-from="{item.imported_from}"' if item.imported_from else ""
        parts.append(f'<memory path="{item.path}" scope="{item.scope}"{source}{note}>\n'
                     f'{item.text}\n</memory>')
    return "\n\n".join(parts)


def build_system_prompt(
    workspace: Path,
    memory: list[MemoryFile],
    today: datetime.date | None = None,
    *,
    replaced_by: str | None = None,
    appended: str = "",
    style: OutputStyle | None = None,
) -> str:
    """The instructions and the environment, or ``replaced_by`` instead of both
    (``--system-prompt``); then the memory files, the output style's text
    (``output_styles.py``), then ``appended`` (``--append-system-prompt``)."""
    if replaced_by is None:
        instructions = INSTRUCTIONS
        if style is not None and not style.keep_coding_instructions:  # a style's own way
            instructions = instructions[:instructions.index("# How to work")] + \
                instructions[instructions.index("# Interruptions"):]
        sections = [instructions, "# Environment\n" + environment(workspace, today)]
    else:
        sections = [replaced_by] if replaced_by.strip() else []
    if memory:
        sections.append("# Memory\n" + memory_section(memory))
    if style is not None and style.prompt.strip():
        sections.append(style_section(style))
    if appended.strip():
        sections.append(appended)
    return "\n\n".join(sections)
