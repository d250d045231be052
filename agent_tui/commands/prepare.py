"""One use of a custom command, made ready for the session: ``/name args`` in, a
:class:`~agent_tui.core.commands.command_run.CommandRun` out, with what is worth saying.

The arguments go in (``expand.py``), each ``@path`` the body names is read now and
goes after the prompt as ``<file path="...">`` (inside the workspace only, symlinks
checked, as the file tools read; a deny rule on reading it is obeyed; at most
:data:`MAX_FILE_BYTES`; a missing, binary or refused file is said and left out), and
the command's ``allowed-tools`` and ``model`` become its turn's policy and model.
The ``!`` lines are left to the session, which runs them first.
"""

from __future__ import annotations

from pathlib import Path

from agent_tui.commands.allowed import CommandPolicy, allowed_rules
from agent_tui.commands.expand import expand, mentions
from agent_tui.commands.files import CommandFile
from agent_tui.core.commands.command_run import CommandRun
from agent_tui.plugins.command_options import command_options
from agent_tui.core.calls.permission import PermissionPolicy
from agent_tui.core.calls.tool import InvalidInput, ToolSet
from agent_tui.protocol import Verdict
from agent_tui.protocol.tool_names import FileAccess, access_guard
from agent_tui.files.workspace import FileTooLarge, Workspace, WorkspaceError
from agent_tui.units import format_bytes

MAX_FILE_BYTES = 256 * 1024  # as a file attached with @ in the TUI


def _denied(path: str, policy: PermissionPolicy | None, tools: ToolSet | None) -> str:
    """The reason a deny rule gives for reading ``path`` ("" when none does)."""
    tool = tools.get(access_guard(FileAccess.READS)) if tools is not None else None
    if tool is None or policy is None:
        return ""
    try:
        ruling = policy.check(tool, tool.parse({"path": path}))
    except InvalidInput:
        return ""
    return ruling.reason or "denied" if ruling.verdict is Verdict.DENY else ""


def read_mention(root: Path, path: str, policy: PermissionPolicy | None,
                 tools: ToolSet | None) -> tuple[str | None, str]:
    """(the ``<file>`` block, "") or (None, why it is left out)."""
    denied = _denied(path, policy, tools)
    if denied:
        return None, f"@{path}: {denied} (not inlined)"
    try:
        data = Workspace(root).read_bytes(path, limit=MAX_FILE_BYTES)
    except FileNotFoundError:
        return None, f"@{path}: no such file (not inlined)"
    except IsADirectoryError:
        return None, f"@{path}: a folder, not a file (not inlined)"
    except FileTooLarge:
        return None, f"@{path}: larger than {format_bytes(MAX_FILE_BYTES)} (not inlined)"
    except (WorkspaceError, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, f"@{path}: {reason} (not inlined)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = "\0"
    if "\0" in text[:8192]:
        return None, f"@{path}: a binary file (not inlined)"
    return f'<file path="{path}">\n{text.rstrip(chr(10))}\n</file>', ""


def prepare(command: CommandFile, args: str, *, workspace: Path,
            policy: PermissionPolicy | None = None,
            tools: ToolSet | None = None) -> tuple[CommandRun, list[str]]:
    """The run, and what to tell the user now (problems of the file, files left out)."""
    plugin = command.path_name.split(":")[0] if command.scope.startswith("plugin") else None
    expanded = expand(command, args, command_options(plugin) if plugin else None)
    said = list(command.notes)
    blocks = []
    for path in mentions(expanded.text_only()):
        block, why = read_mention(Path(workspace), path, policy, tools)
        if block is not None:
            blocks.append(block)
        else:
            said.append(f"/{command.name}: {why}")
    turn_policy = None
    if command.allowed_tools and policy is not None:
        rules, problems = allowed_rules(command.allowed_tools, command.source)
        said.extend(problems)
        if rules:
            turn_policy = CommandPolicy(policy, rules, Path(workspace), command.name)
    files = "".join(f"\n\n{block}" for block in blocks)

    def compose(outputs: list[str]) -> str:
        return expanded.compose(outputs) + files

    return CommandRun(name=command.name, steps=expanded.steps, compose=compose,
                      policy=turn_policy, model=command.model, args=args,
                      source=command.scope.split(":")[0]), said
