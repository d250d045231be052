"""What a permission prompt shows of the call it asks about, read as a person reads it:
a command as text with the model's description of it, a fetch as its address, an MCP
tool's (and any other tool's) arguments as a list of ``name: value`` lines, never as
raw JSON. Everything shown passes through ``safe_text.clean``.

A long call is folded, and the fold says what it hides (so nothing is cut unseen): a
command past ``MAX_COMMAND_LINES`` lines or ``MAX_COMMAND_CHARS`` characters, an
argument past ``MAX_VALUE`` characters, a list past ``MAX_ARGS`` arguments.
``whole=True`` shows all of it (ctrl+o in the prompt)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.text import Text

from agent_tui.protocol.tool_names import MCP_PREFIX, RuleSubject, claude_name, facts
from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.render.states import role_style

MAX_ARGS = 12  # arguments listed; the rest are counted
MAX_VALUE = 300  # characters of one value
MAX_COMMAND_LINES = 12
MAX_COMMAND_CHARS = 1000
CALL_ROWS = 14  # rows a call is given in the prompt before it folds (its max-height there)


def title(name: str, *, new_file: bool = False) -> str:
    """The prompt's heading: "Bash command", "Edit file", "Create file", "MCP tool"."""
    if name.startswith(MCP_PREFIX):
        return "MCP tool"
    if new_file:
        return "Create file"
    given = facts(name)
    return given.prompt_title if given and given.prompt_title else f"Tool {clean(claude_name(name))}"


def _value(value: Any, whole: bool = False) -> str:
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(value)
    text = clean(text).replace("\n", " ⏎ ")
    if whole or len(text) <= MAX_VALUE:
        return text
    return text[:MAX_VALUE] + f"… ({len(text) - MAX_VALUE} more characters)"


def arguments(tool_input: dict[str, Any], variables: dict[str, str], skip: tuple[str, ...] = (),
              whole: bool = False) -> Text:
    """``name: value`` lines, the names muted."""
    out = Text()
    items = [(k, v) for k, v in tool_input.items() if k not in skip]
    for key, value in items if whole else items[:MAX_ARGS]:
        out.append("\n" if out else "")
        out.append(f"{clean(str(key))}: ", style=role_style(variables, "text-muted"))
        out.append(_value(value, whole))
    if len(items) > MAX_ARGS and not whole:
        out.append(f"\n… {len(items) - MAX_ARGS} more", style=role_style(variables, "text-muted"))
    return out


def _folded_command(command: str, rows: int) -> tuple[str, str]:
    """The command as a fold of about ``rows`` rows shows it, and what the fold hides
    ("" if nothing)."""
    lines = command.split("\n")
    shown = "\n".join(lines[:rows])[:MAX_COMMAND_CHARS * rows // MAX_COMMAND_LINES]
    if shown == command:
        return command, ""
    hidden_lines = len(lines) - shown.count("\n") - 1
    hidden = [f"{hidden_lines} more line{'s' * (hidden_lines != 1)}"] if hidden_lines else []
    cut = len(command) - len(shown) - hidden_lines  # the newlines are not characters shown
    hidden.append(f"{cut} more characters")
    return shown, "… " + ", ".join(hidden) + " (ctrl+o shows the whole command)"


def _command(tool_input: dict[str, Any], variables: dict[str, str], whole: bool, rows: int) -> Text:
    command = clean(str(tool_input.get("command", ""))).expandtabs(4)
    shown, hidden = (command, "") if whole else _folded_command(command, rows)
    out = Text(shown, style="bold")
    if hidden:
        out.append("\n" + hidden, style=role_style(variables, "warning"))
    description = tool_input.get("description")
    if isinstance(description, str) and description.strip():
        out.append("\n" + clean(description.strip()), style=role_style(variables, "text-muted"))
    extras = []
    if tool_input.get("run_in_background"):
        extras.append("runs in the background")
    if isinstance(tool_input.get("timeout_ms"), int):
        extras.append(f"stopped after {tool_input['timeout_ms'] / 1000:g} s")
    if extras:
        out.append("\n" + ", ".join(extras), style=role_style(variables, "text-muted"))
    return out


def body(name: str, tool_input: dict[str, Any], variables: dict[str, str], *, whole: bool = False,
         rows: int = MAX_COMMAND_LINES) -> Text:
    """The call, for a prompt that shows no diff and no plan: folded, or ``whole``. A
    command's fold may be made smaller than ``MAX_COMMAND_LINES`` (``rows``) to fit."""
    given = facts(name)
    subject = given.rule_subject if given is not None else RuleSubject.NONE
    if subject is RuleSubject.COMMAND and isinstance(tool_input.get("command"), str):
        return _command(tool_input, variables, whole, max(1, min(rows, MAX_COMMAND_LINES)))
    if subject is RuleSubject.DOMAIN and isinstance(tool_input.get("url"), str):
        out = Text(clean(tool_input["url"]), style="bold")
        rest = arguments(tool_input, variables, skip=("url",), whole=whole)
        return out.append("\n").append_text(rest) if rest else out
    if name.startswith(MCP_PREFIX):
        server, _, tool = name[len(MCP_PREFIX):].partition("__")
        out = Text(f"{clean(tool or server)}", style="bold")
        out.append(f"  from the MCP server {clean(server)}", style=role_style(variables, "text-muted"))
        rest = arguments(tool_input, variables, whole=whole)
        return out.append("\n").append_text(rest) if rest else out.append("\n(no arguments)")
    return arguments(tool_input, variables, whole=whole)


def folds(name: str, tool_input: dict[str, Any], variables: dict[str, str]) -> bool:
    """Whether the prompt folds this call: its whole shows more than the fold."""
    return body(name, tool_input, variables).plain != body(name, tool_input, variables, whole=True).plain


def is_command(name: str, tool_input: dict[str, Any]) -> bool:
    """Whether the call is shown as a command (its fold can shrink to fit the window)."""
    given = facts(name)
    return given is not None and given.rule_subject is RuleSubject.COMMAND and isinstance(
        tool_input.get("command"), str)


@dataclass
class CallFold:
    """How much of a call the prompt shows: folded (a command's fold made smaller to fit
    the window) or, after ctrl+o, whole."""

    name: str
    tool_input: dict[str, Any]
    variables: dict[str, str]
    whole: bool = False
    rows: int = MAX_COMMAND_LINES

    def text(self) -> Text:
        return body(self.name, self.tool_input, self.variables, whole=self.whole, rows=self.rows)

    def folds(self, width: int, console: Console) -> bool:
        """Whether the call is folded (or was, before it was shown whole): its whole
        shows more, or wrapped at ``width`` it is taller than ``CALL_ROWS``."""
        if folds(self.name, self.tool_input, self.variables):
            return True
        folded = body(self.name, self.tool_input, self.variables)
        return width > 0 and len(folded.wrap(console, width)) > CALL_ROWS

    def smaller(self, over: int) -> bool:
        """Fold a command by ``over`` rows more, if it is folded and can be; whether it was."""
        if over <= 0 or self.whole or self.rows <= 1 or not is_command(self.name, self.tool_input):
            return False
        if not folds(self.name, self.tool_input, self.variables):
            return False
        self.rows = max(1, self.rows - over)
        return True

    def again(self) -> bool:
        """Fold as at first (the window changed); whether that changes it."""
        changed, self.rows = self.rows != MAX_COMMAND_LINES, MAX_COMMAND_LINES
        return changed
