"""The built-in slash commands: one table for every front end.

Each command has its name, what it does, how its arguments are written and whether it
needs them. The TUI runs them all (``ui/commands/builtin.py`` gives each a handler and
checks that none is missing); ACP runs those that need no screen (``acp``:
``acp/commands.py``), offered to the editor with the same words.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ArgsNeed(StrEnum):
    NONE = "none"
    OPTIONAL = "optional"
    REQUIRED = "required"


@dataclass(frozen=True)
class Builtin:
    name: str
    description: str
    args: str = ""  # how the arguments are written ("[focus]", "NAME"); "" for none
    need: ArgsNeed = ArgsNeed.NONE
    acp: bool = False  # needs no screen: an ACP client runs it too

    @property
    def hint(self) -> str:
        """The arguments as an input hint ("focus" for "[focus]")."""
        return self.args.strip("[]")


_O, _R = ArgsNeed.OPTIONAL, ArgsNeed.REQUIRED

# In the menu's order.
BUILTINS: tuple[Builtin, ...] = (
    Builtin("help", "every key and every command"),
    Builtin("clear", "start a new conversation (the old one stays listed by `sessions`)", acp=True),
    Builtin("compact", "summarize the conversation so far, to free context", "[focus]", _O, acp=True),
    Builtin("model", "use another model (no name: choose from a list)", "[NAME]", _O, acp=True),
    Builtin("thinking", "thinking from the next request on", "off|adaptive|BUDGET", _R),
    Builtin("cost", "tokens and cost of this session, per turn"),
    Builtin("context", "what fills the model's context window", acp=True),
    Builtin("memory", "the AGENTS.md / CLAUDE.md files the agent follows"),
    Builtin("init", "ask the model to draft an AGENTS.md for this project (you review the write)"),
    Builtin("hooks", "the hooks in force and where each came from"),
    Builtin("resume", "open a saved session"),
    Builtin("rename", "name this session (shown by `sessions` and /resume)", "NAME", _R),
    Builtin("add-dir", "let the file tools use another folder too (as --add-dir)", "DIR", _R),
    Builtin("export", "write the conversation as Markdown (tool calls folded)", "[FILE]", _O),
    Builtin("rewind", "go back to an earlier message (Esc Esc)"),
    Builtin("theme", "switch the theme", "[NAME]", _O),  # the TUI lists its themes
    Builtin("permissions", "the permission rules in force and where each came from"),
    Builtin("mcp", "MCP servers: their state; log in, restart, disable, enable"),
    Builtin("skills", "the skills the model may use, and where each came from"),
    Builtin("agents", "the sub-agent types task can start, and where each came from"),
    Builtin("vim", "vim mode in the input on or off (editorMode in the settings)"),
    Builtin("output-style", "how the model writes: Default, Explanatory, Learning or yours", "[NAME]", _O),
    Builtin("keybindings", "the keys in force and those of ~/.claude/keybindings.json not taken"),
    Builtin("plugin", "Claude Code's plugins and marketplaces: add, install, enable, disable", "[ACTION ...]", _O),
    Builtin("quit", "stop what runs, then quit"),
)

ACP_BUILTINS: tuple[Builtin, ...] = tuple(b for b in BUILTINS if b.acp)
