"""A command file's body with its arguments in it, as Claude Code expands it.

- ``$ARGUMENTS`` is everything after the command name, as typed. ``$ARGUMENTS[0]``,
  ``$ARGUMENTS[1]`` .. are its words, split as a shell would, counted from 0 (Claude
  Code's current rule). ``$1`` .. ``$9`` are the words counted from 1, as command
  files have long been written (``/fix "the login page" high``: ``$1`` is ``the login
  page``), unless the file uses ``$0``: then ``$0`` .. ``$9`` count from 0, as Claude
  Code's newer skills do. A placeholder past the last word stays as written (as in
  Claude Code). A body without ``$ARGUMENTS`` gets what was typed after it as a last
  paragraph ``ARGUMENTS: ...``, as Claude Code appends it. Arguments are put in once:
  a ``$1`` inside an argument stays as typed.
- ``!`cmd``` runs ``cmd`` before the prompt is sent (arguments already in it): its
  output takes its place in the prompt. A fenced block opened with ```` ```! ```` is
  one such command (its lines run as one script), as in Claude Code. Here it becomes a step
  (:class:`~agent_tui.core.commands.command_run.ShellStep`, with the file and line); the
  session runs the steps (``core/commands/command_run.py``).
- ``@path`` names a workspace file whose content goes with the prompt (read by
  ``prepare.py``, under the file tools' rules).
- A plugin's command: ``${user_config.KEY}`` and ``${CLAUDE_PLUGIN_ROOT}`` as
  ``plugins/command_options.py`` puts them in, after the ``!`` lines are found (a
  value never starts one); in a ``!`` line they become variables of its environment.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from agent_tui.commands.files import ARGUMENTS, CommandFile
from agent_tui.core.commands.command_run import ShellStep
from agent_tui.plugins.command_options import CommandOptions

# ``!`cmd``` inline, or a fenced block opened with ```` ```! ```` (its lines are one
# command, run as a script), as Claude Code runs both.
_SHELL = re.compile(r"^```!\s*?\n(?P<block>.*?)\n?```[ \t]*$|!`(?P<inline>[^`]+)`", re.M | re.S)
_PLACEHOLDER = re.compile(r"\$ARGUMENTS(?:\[([0-9]+)\])?|\$([0-9])(?![0-9])")
_ZERO = re.compile(r"\$0(?![0-9])")  # a file that uses $0 counts $N from 0
_MENTION = re.compile(r"(?:^|(?<=\s))@([^\s`]+)")
_TRAILING = ".,;:!?)]}'\""


def split_args(args: str) -> list[str]:
    """The words of ``args`` as a shell splits them (plain spaces if the quotes do not
    balance)."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def substitute(text: str, args: str, words: list[str], first: int = 1) -> str:
    """``text`` with the arguments in; ``first``: the number ``$N`` of the first word."""
    def put(match: re.Match[str]) -> str:
        if match[1] is None and match[2] is None:
            return args
        index = int(match[1]) if match[1] is not None else int(match[2]) - first
        return words[index] if 0 <= index < len(words) else match[0]

    return _PLACEHOLDER.sub(put, text)


def counts_from(body: str) -> int:
    """The number ``$N`` of the first word in ``body``: 0 when the file uses ``$0``."""
    return 0 if _ZERO.search(body) else 1


def mentions(text: str) -> list[str]:
    """The ``@path`` mentions that look like paths (a ``/`` or a ``.`` in them)."""
    found = []
    for match in _MENTION.finditer(text):
        path = match[1].rstrip(_TRAILING)
        if ("/" in path or "." in path) and path not in found:
            found.append(path)
    return found


@dataclass
class Expanded:
    """The body with the arguments in: text pieces and the steps between them."""

    pieces: list[str | ShellStep] = field(default_factory=list)

    @property
    def steps(self) -> list[ShellStep]:
        return [p for p in self.pieces if isinstance(p, ShellStep)]

    def text_only(self) -> str:
        return "".join(p for p in self.pieces if isinstance(p, str))

    def compose(self, outputs: list[str]) -> str:
        """The prompt with each step's output in its place."""
        given = iter(outputs)
        out = []
        for piece in self.pieces:
            out.append(piece if isinstance(piece, str) else next(given, "").rstrip("\n"))
        return "".join(out).strip("\n")


def expand(command: CommandFile, args: str, options: CommandOptions | None = None) -> Expanded:
    """``options``: a plugin's command's values (None for any other command)."""
    body = command.body.strip("\n")
    lead = len(command.body) - len(command.body.lstrip("\n"))
    words = split_args(args)
    first = counts_from(body)
    done = Expanded()
    at = 0

    def text(piece: str) -> str:
        piece = substitute(piece, args, words, first)
        return options.in_text(piece) if options is not None else piece

    for match in _SHELL.finditer(body):
        done.pieces.append(text(body[at:match.start()]))
        where = f"{command.source}:{command.body_line + lead + body.count(chr(10), 0, match.start())}"
        given = match["block"] if match["block"] is not None else match["inline"]
        step = substitute(given, args, words, first).strip()
        if options is None:
            done.pieces.append(ShellStep(command=step, where=where))
        else:
            shell = options.in_shell(step)
            done.pieces.append(ShellStep(shell.command, where, env=shell.env, refused=shell.refused))
        at = match.end()
    done.pieces.append(text(body[at:]))
    if args.strip() and ARGUMENTS not in body:
        done.pieces.append(f"\n\nARGUMENTS: {args.strip()}")
    return done
