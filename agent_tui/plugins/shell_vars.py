"""A plugin's ``${user_config.KEY}`` in a shell command's text, turned into a reference
to ``$CLAUDE_PLUGIN_OPTION_KEY`` that the shell expands where the placeholder stood.

Claude Code writes the value itself into the text, where the shell parses it (a quote,
a ``$(...)`` or a backtick in the value, and it runs). Here no value is ever written:
the command reads the variable, which the caller puts in the command's environment.
Inside single quotes (where bash expands nothing) the reference closes the quotes,
stands in double quotes and opens them again (``'a ${user_config.K} b'`` becomes
``'a '"${CLAUDE_PLUGIN_OPTION_K}"' b'``), so it expands as the value did; in double
quotes and outside quotes it is ``${CLAUDE_PLUGIN_OPTION_K}`` (split and matched as
the value written there would be, but never run). Where the quoting is beyond this
reading (a quote inside ``$(...)`` inside double quotes, a heredoc), a reference may
stay unexpanded: the value is still never parsed. A ``!`` line's
``${CLAUDE_PLUGIN_ROOT}`` and ``${CLAUDE_PLUGIN_DATA}`` are quoted the same way.
"""

from __future__ import annotations

import re

from agent_tui.plugins.options import PLACEHOLDER, option_var

_SINGLE, _ANSI, _DOUBLE = "'", "$'", '"'
#: ``${user_config.KEY}`` (its variable is ``CLAUDE_PLUGIN_OPTION_KEY``) or a folder's.
_NAMED = re.compile(PLACEHOLDER.pattern + r"|\$\{(CLAUDE_PLUGIN_ROOT|CLAUDE_PLUGIN_DATA)\}")


def placeholder_keys(command: str) -> list[str]:
    """The keys ``command`` names, each once, in order."""
    return list(dict.fromkeys(m[1] for m in PLACEHOLDER.finditer(command)))


def as_variables(command: str) -> str:
    """``command`` with every ``${user_config.KEY}`` a reference to its variable, and
    ``${CLAUDE_PLUGIN_ROOT}`` and ``${CLAUDE_PLUGIN_DATA}`` quoted the same way (their
    variables are in a ``!`` line's environment)."""
    if "${" not in command:
        return command
    out: list[str] = []
    state: str | None = None  # None: outside quotes
    i = 0
    while i < len(command):
        found = _NAMED.match(command, i)
        if found:
            ref = "${" + (option_var(found[1]) if found[1] else found[2]) + "}"
            out.append({_SINGLE: f"'\"{ref}\"'", _ANSI: f"'\"{ref}\"$'"}.get(state or "", ref))
            i = found.end()
            continue
        char = command[i]
        if char == "\\" and state != _SINGLE:  # an escaped character: taken as it is
            out.append(command[i:i + 2])
            i += 2
            continue
        if state is None and command.startswith("$'", i):
            state, char = _ANSI, "$'"
        elif state is None and char in (_SINGLE, _DOUBLE):
            state = char
        elif char == (_SINGLE if state in (_SINGLE, _ANSI) else _DOUBLE) and state is not None:
            state = None
        out.append(char)
        i += len(char)
    return "".join(out)
