"""What ctrl+e shows in a permission prompt: the call explained in plain words, built
from what agent-tui knows of it, without a model call. For a command, the shell
grammar's parse (``permissions.parse_command``): each program and what it is known to
do, the files it writes or deletes, the paths outside the workspace, what the parse
cannot tell; for an edit the file and whether it is new; for a fetch the domain; for
an MCP tool its server. Then why it asks (the rule or the mode). It says what the rules
see, never a model's opinion, and says so; an unknown program is said to be unknown.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rich.text import Text

from agent_tui.permissions import is_read_only, parse_command
from agent_tui.permissions.command_paths import named_files
from agent_tui.permissions.shell_model import ParsedCommand, SimpleCommand, Word
from agent_tui.permissions.shell_wrappers import SHELLS, WRAPPERS
from agent_tui.protocol import PermissionRequested
from agent_tui.protocol.tool_names import (
    MCP_PREFIX,
    FileAccess,
    FileChange,
    RuleSubject,
    facts,
    facts_of,
)
from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.render.states import role_style
from agent_tui.ui.screens.approval_choices import leaves_plan

NOT_AN_OPINION = "Read from the call by agent-tui's rules, not a model's opinion."
MAX_PARTS = 8  # commands described one by one; the rest are counted
MAX_PATHS = 6
MAX_DOUBTS = 3
MAX_WORDS = 60  # characters of a command shown in its line

#: What a program is known to do, in words; a warning when it is a risk.
_DOES: dict[str, tuple[str, bool]] = {
    **{p: ("deletes files", True) for p in ("rm", "rmdir", "unlink", "shred")},
    **{p: ("runs a command as another user (root, usually)", True)
       for p in ("sudo", "su", "doas", "pkexec")},
    **{p: ("changes files' permissions or owners", True) for p in ("chmod", "chown", "chgrp")},
    **{p: ("stops processes", True) for p in ("kill", "pkill", "killall")},
    **{p: ("erases or formats a disk or file", True) for p in ("dd", "mkfs", "truncate")},
    **{p: ("runs the text it is given as commands", True) for p in ("eval", "source", ".")},
    **{p: ("sends or fetches data over the network", True)
       for p in ("curl", "wget", "nc", "ncat", "ssh", "scp", "rsync", "ftp", "telnet")},
    **{p: ("writes, copies or moves files", False)
       for p in ("cp", "mv", "ln", "tee", "touch", "mkdir", "install", "patch")},
    **{p: ("runs the project's own scripts or code: what they do is up to them", False)
       for p in ("npm", "pnpm", "yarn", "bun", "npx", "cargo", "make", "go", "pytest", "tox",
                 "python", "python3", "node", "deno", "ruby", "perl", "gradle", "mvn", "uv")},
    **{p: ("prints text", False) for p in ("echo", "printf")},
    "sed": ("edits text; with -i it rewrites the files it is given", False),
    **{p: ("changes the folder the next commands run in", False) for p in ("cd", "pushd")},
    **{p: ("installs packages (their install scripts may run)", False)
       for p in ("pip", "pip3", "apt", "apt-get", "brew", "gem")},
}
_GIT: dict[str, tuple[str, bool]] = {
    "push": ("sends commits to a remote repository", True),
    "reset": ("moves the branch and may discard uncommitted changes", True),
    "clean": ("deletes untracked files", True),
    "checkout": ("switches branches or overwrites files with another version", True),
    "restore": ("overwrites files with another version", True),
    "rebase": ("rewrites commits", True),
    "commit": ("records a commit", False),
    "add": ("stages changes for a commit", False),
    "pull": ("fetches from a remote and merges into the branch", False),
    "fetch": ("fetches from a remote", False),
    "clone": ("copies a repository from elsewhere", False),
    "init": ("makes a new repository", False),
}


def explain(request: PermissionRequested, workspace: Path | None, variables: dict[str, str]) -> Text:
    """The explanation, a few lines: what it does, the risks marked, why it asks."""
    lines = _lines(request, workspace)
    asks = _asks(request.rule or "")
    if asks:
        lines.append((asks, False))
    out = Text()
    for line, risky in lines:
        out.append("\n" if out else "")
        out.append("! " if risky else "· ", style=role_style(variables, "warning" if risky else "text-muted",
                                                             bold=risky))
        out.append(line)
    out.append("\n" + NOT_AN_OPINION, style=role_style(variables, "text-muted"))
    return out


def _asks(rule: str) -> str:
    """What made it ask, the mechanism in words (the prompt shows the reason itself)."""
    kind, _, what = rule.partition(":")
    what = clean(what)
    match kind:
        case "ask":
            return (f"An ask rule in the settings, {what}, matches it. An ask rule wins over "
                    "allow rules, so no lasting rule is offered.")
        case "deny":
            return (f"A deny rule on files, {what}, may bind it, and which files it touches is "
                    "only known when it runs: rather than refuse, it asks.")
        case "unsure":
            return (f"The rule {what} may bind it, and the parse cannot tell: rather than "
                    "guess, it asks.")
        case "guard":
            return (f"It writes in {what}, one of the agent's own guard files: they can widen "
                    "what the agent may do, so writing them asks in every mode but auto.")
        case "hook":
            return (f"A {what} hook of the settings asks for your word on it, even where the "
                    "rules would allow it.")
        case "mode" if what == "ask":
            return "No rule allows it, and in the ask mode anything that writes or runs asks."
        case "mode" if what == "accept-edits":
            return ("No rule allows it; the accept-edits mode allows file edits in the workspace "
                    "only, so this asks.")
        case "mode" if what == "plan":
            return "The plan mode runs nothing that changes anything until you approve."
        case "mode":
            return f"No rule allows it, and the permission mode {what} asks."
    return ""


def _lines(request: PermissionRequested, workspace: Path | None) -> list[tuple[str, bool]]:
    name, tool_input = request.name, request.input
    given = facts(name)
    subject = given.rule_subject if given is not None else RuleSubject.NONE
    command = tool_input.get("command")
    if subject is RuleSubject.COMMAND and isinstance(command, str):
        return _command(command, tool_input, workspace)
    if given is not None and given.file_access is FileAccess.EDITS:
        return _edit(name, tool_input, workspace)
    if subject is RuleSubject.DOMAIN:
        url = clean(str(tool_input.get("url", "")))
        try:
            host = urlsplit(url).hostname or "an address it cannot read"
        except ValueError:
            host = "an address it cannot read"
        return [(f"Fetches {_short(url)} from {_short(host)}. The page's text goes to the model; "
                 "a page can hold instructions aimed at it.", False)]
    if leaves_plan(name):
        return [("Ends plan mode: the model starts making the changes of the plan.", False)]
    if name.startswith(MCP_PREFIX):
        server, _, tool = name[len(MCP_PREFIX):].partition("__")
        return [(f"Calls the tool {clean(tool or server)} of the MCP server {clean(server)}. "
                 "The server decides what it does; agent-tui cannot see inside it.", True)]
    return [(f"Runs the tool {clean(name)} with the arguments shown.", False)]


def _edit(name: str, tool_input: dict[str, Any], workspace: Path | None) -> list[tuple[str, bool]]:
    raw = tool_input.get("path") or tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(raw, str):
        return [(f"Runs {clean(name)}, which writes a file it does not name plainly.", True)]
    path = _short(clean(raw))
    folder = workspace or Path.cwd()
    try:
        exists = (folder / os.path.expanduser(raw)).exists()
    except (ValueError, OSError):  # a NUL byte, a name too long: no such file
        exists = False
    whole = facts_of(name).file_change is FileChange.WRITE
    verb = "Replaces the whole of" if whole and exists else (
        "Changes" if exists else "Creates the new file")
    lines = [(f"{verb} {path}.", False)]
    if _outside(raw, workspace):
        lines.append((f"{path} is outside the workspace.", True))
    return lines


def _command(command: str, tool_input: dict[str, Any], workspace: Path | None) -> list[tuple[str, bool]]:
    parsed = parse_command(command)
    lines = [_part(part) for part in list(parsed.every())[:MAX_PARTS]]
    more = sum(1 for _ in parsed.every()) - MAX_PARTS
    if more > 0:
        lines.append((f"… and {more} more commands.", False))
    lines += _files(parsed, workspace)
    lines += [(f"The parse is in doubt: {clean(doubt)}. The rules treat the whole command as "
               "unknown.", True) for doubt in parsed.doubts[:MAX_DOUBTS]]
    if not parsed.doubts and is_read_only(parsed):
        lines.append(("As a whole, the command only reads.", False))
    if tool_input.get("run_in_background"):
        lines.append(("It runs in the background: it goes on after the call returns.", False))
    return lines


def _part(part: SimpleCommand) -> tuple[str, bool]:
    shown = _short(clean(part.source or " ".join(part.argv)) or "(a redirection alone)")
    where = f" ({part.context})" if part.context else ""
    does, risky = _does(part)
    return f"{shown}{where}: {does}.", risky


def _does(part: SimpleCommand) -> tuple[str, bool]:
    program = part.program
    if not program:
        return "writes to a file or reads one, running nothing", False
    if program == "git" and len(part.argv) > 1:
        found = _GIT.get(part.argv[1])
        if found is not None:
            return found
    if program in _DOES:
        return _DOES[program]
    if program in SHELLS:
        return ("runs a shell script" if part.runs else "runs the commands it reads from its input"), True
    if program in WRAPPERS or part.runs:
        return "runs another command (described next)", True
    if is_read_only(ParsedCommand(part.source, (replace(part, redirects=()),))):
        return "only reads", False
    return f"runs the program {clean(program)}; agent-tui does not know what it does", False


#: Programs whose file arguments are what they write: all of them, all after the first
#: (a mode, an owner), the last (a copy's destination).
_WRITES_ALL = frozenset({"touch", "mkdir", "truncate", "tee"})
_WRITES_AFTER_FIRST = frozenset({"chmod", "chown", "chgrp"})
_WRITES_LAST = frozenset({"cp", "mv", "ln", "install", "rsync", "scp"})
_DELETES = frozenset({"rm", "rmdir", "unlink", "shred"})
_OUTPUT_OPTIONS = frozenset({"-o", "-O", "--output", "--output-document"})


def _targets(part: SimpleCommand) -> tuple[list[Word], list[Word]]:
    """What one command deletes and what it writes, where its program is known."""
    written = [r.target for r in part.redirects if r.writes_file]
    program, words = part.program, list(part.words[1:])
    names = [w for w in words if not w.text.startswith("-")]
    if program in _DELETES:
        return names, written
    if program in _WRITES_ALL:
        written += names
    elif program in _WRITES_AFTER_FIRST:
        written += names[1:]
    elif program in _WRITES_LAST:
        written += names[-1:] if len(names) > 1 else []
    elif program in ("sed", "perl") and any(w.text.startswith("-i") for w in words):
        scripted = any(w.text in ("-e", "-f") for w in words)
        written += names if scripted else names[1:]
    elif program in ("curl", "wget"):
        written += [after for word, after in zip(words, words[1:]) if word.text in _OUTPUT_OPTIONS]
    return [], written


def _files(parsed: ParsedCommand, workspace: Path | None) -> list[tuple[str, bool]]:
    deleted: list[Word] = []
    written: list[Word] = []
    for part in parsed.every():
        gone, wrote = _targets(part)
        deleted += gone
        written += wrote
    lines: list[tuple[str, bool]] = []
    if [w for w in deleted if w.static]:
        lines.append(("Deletes: " + _listed([w for w in deleted if w.static]) + ".", True))
    if [w for w in written if w.static]:
        lines.append(("Writes: " + _listed([w for w in written if w.static]) + ".", False))
    named = named_files(parsed)
    unknown = [w for w in (*deleted, *written, *named.reads, *named.writes) if not w.static]
    if unknown:
        lines.append(("Names files only known when it runs: " + _listed(unknown) + ".", True))
    outside = [w for w in _path_words(parsed) if _outside(w.text, workspace)]
    if outside:
        lines.append(("Names paths outside the workspace: " + _listed(outside) + ".", True))
    if named.folders:
        lines.append(("Changes folder (" + _listed(list(named.folders)) +
                      "): relative paths are taken from there.", False))
    return lines


def _path_words(parsed: ParsedCommand) -> list[Word]:
    """Every word that reads as a path leaving the folder: absolute, from a home
    folder, or through ``..`` (option values too: ``--file=/etc/x``)."""
    found: list[Word] = []
    for part in parsed.every():
        words = [*part.words[1:], *(r.target for r in part.redirects)]
        for word in words:
            text = word.text.split("=", 1)[1] if word.text.startswith("-") and "=" in word.text else word.text
            if word.static and "://" not in text and (text.startswith(("/", "~")) or ".." in text):
                found.append(Word(text, word.static, word.pattern))
    return found


def _listed(words: list[Word]) -> str:
    names = list(dict.fromkeys(_short(clean(w.text)) for w in words))
    extra = f" and {len(names) - MAX_PATHS} more" if len(names) > MAX_PATHS else ""
    return ", ".join(names[:MAX_PATHS]) + extra


def _short(text: str) -> str:
    return text if len(text) <= MAX_WORDS else text[:MAX_WORDS] + "…"


def _outside(text: str, workspace: Path | None) -> bool:
    """Whether a path names a place outside the workspace (links followed); a path
    that cannot be resolved (a NUL byte in it) counts as outside."""
    if workspace is None or text in ("", "-") or text.startswith("/dev/"):
        return False
    try:
        root = os.path.realpath(workspace)
        path = os.path.realpath(os.path.join(root, os.path.expanduser(text)))
    except (ValueError, OSError):
        return True
    return os.path.commonpath([root, path]) != root
