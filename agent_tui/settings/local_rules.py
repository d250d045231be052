"""The rules a user chooses at a permission prompt to last ("Yes, and don't ask again
for: npm test *"), and their home: the project's ``.claude/settings.local.json``, where
Claude Code puts them.

:func:`lasting_rules` says which rules, if any, a call may be offered: for a command the
program and its subcommand (``Bash(npm test *)``), never wider, one per part of a
compound command (``npm test && npm run lint``: two), and nothing when
a part is not a plain command or a dangerous program runs (:func:`suggest_prefix`); for a web fetch its domain (``WebFetch(domain:example.com)``); for an
MCP tool its name (``mcp__server__tool``). A call an ask rule caught is offered none:
an allow rule would not stop the asking.

:func:`save_allow_rules` adds rules to ``permissions.allow`` of the file, created if
missing, in one atomic write (``atomic.py``), and keeps the file out of git as Claude
Code 2.1.197 does (observed): in a git repository, the line
``**/.claude/settings.local.json`` in the user's global git ignore
(``$XDG_CONFIG_HOME/git/ignore``, else ``~/.config/git/ignore``); the repository's own
``.gitignore`` is not touched. The file is only ever replaced by a file holding
everything it held plus the rules: a file that cannot be read, is not a JSON object of
the expected shape (comments included: they would be lost), is read-only or a symbolic
link is left as it is, and the result says why (the rule still applies for the
session: the core has it already).

Only the user's choice writes here, never the agent's tools (``.claude/`` is one of
the agent's own guard files, ``permissions/guard_files.py``).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent_tui.atomic import write_atomic
from agent_tui.permissions import InvalidRule, PermissionRules, parse_command
from agent_tui.permissions.shell_model import SimpleCommand
from agent_tui.permissions.shell_wrappers import SCRIPT_RUNNERS, SHELLS, WRAPPERS
from agent_tui.protocol.tool_names import RuleSubject, claude_name, facts

LOCAL_FILE = Path(".claude") / "settings.local.json"
IGNORE_LINE = "**/.claude/settings.local.json"

#: Programs never offered a lasting rule: they delete, take privileges, or run other
#: commands (a rule on them would allow whatever they are given).
DANGEROUS = frozenset(WRAPPERS) | SHELLS | SCRIPT_RUNNERS | frozenset({
    "rm", "rmdir", "shred", "dd", "mkfs", "sudo", "su", "doas", "pkexec", "chmod", "chown",
    "chgrp", "kill", "pkill", "killall", "reboot", "shutdown", "eval", "exec", "source",
    "bash", "sh", "zsh", "dash", "ksh", "fish", "env", "xargs", "nohup", "timeout", "nice",
    "command", "builtin", "time", "watch", "parallel", "ssh", "find", "git-shell",
})
#: Programs whose second word is a file, not a subcommand: offered the exact command only.
EXACT_ONLY = frozenset({
    "mv", "cp", "ln", "tee", "touch", "mkdir", "truncate", "install", "rsync", "scp", "curl",
    "wget", "tar", "unzip", "zip", "cat", "sed", "awk", "perl", "python", "python3", "node",
    "ruby", "php", "deno", "bun",
})
_PLAIN = re.compile(r"[A-Za-z0-9_./:@%+,=-]+")  # a word the shell takes as it is
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9_:-]*")  # `test`, `log`, `run`, `build:dev`
MAX_EXACT = 120  # longer commands are not offered as exact rules


def suggest_prefix(command: str) -> list[str]:
    """The rule specifiers to offer for a command, read through the shell grammar
    (``permissions.parse_command``): one per part, in order (``npm test *`` for ``npm
    test --watch``; the command itself when its second word is no subcommand: ``pytest
    -q``), a read-only one too (``| tail -5``: a rule allows a compound command only
    when one allows each part). Empty when any part may not have one: a dangerous program, a wrapper, a substitution, a
    subshell, a variable, a glob, a redirection, quoting, or a parse in doubt."""
    if "\n" in command:
        return []
    parsed = parse_command(command)
    if not parsed.certain or not parsed.commands:
        return []
    specs: list[str] = []
    for part in parsed.commands:
        if part.context:
            return []  # inside a subshell, a substitution, a function
        spec = _spec(part)
        if spec is None:
            return []
        if spec not in specs:
            specs.append(spec)
    return specs


def _spec(part: SimpleCommand) -> str | None:
    """One simple command's rule specifier, or None."""
    if part.runs or part.assignments or part.redirects or not part.words:
        return None
    if not all(w.static and not w.pattern and _PLAIN.fullmatch(w.text) for w in part.words):
        return None
    words = list(part.argv)
    program = words[0]
    if part.program in DANGEROUS or "=" in program or program.startswith("-"):
        return None
    if any(c in w for w in words for c in "*?"):
        return None
    if len(words) >= 2 and _SUBCOMMAND.fullmatch(words[1]) and program not in EXACT_ONLY:
        return f"{program} {words[1]} *"
    exact = " ".join(words)
    return exact if len(exact) <= MAX_EXACT else None


def lasting_rules(name: str, tool_input: Mapping[str, Any], *, asked_by_rule: bool = False) -> list[str]:
    """The allow rules (Claude Code's text) to offer for this call; empty: none."""
    if asked_by_rule:
        return []
    given = facts(name)
    subject = given.rule_subject if given is not None else RuleSubject.NONE
    if subject is RuleSubject.COMMAND:
        command = tool_input.get("command")
        specs = suggest_prefix(command) if isinstance(command, str) else []
        return [f"{claude_name(name)}({spec})" for spec in specs]
    if subject is RuleSubject.DOMAIN:
        url = tool_input.get("url")
        host = _host(url) if isinstance(url, str) else None
        return [f"{claude_name(name)}(domain:{host})"] if host else []
    if name.startswith("mcp__") and re.fullmatch(r"mcp__[A-Za-z0-9_-]+", name):
        return [name]
    return []


def _host(url: str) -> str | None:
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    if not host or not re.fullmatch(r"[a-z0-9.-]+", host.lower()):
        return None
    return host.lower().rstrip(".")


def shown(rule: str) -> str:
    """What a rule allows, as the prompt's choice says it: ``npm test *``, ``example.com``."""
    inner = rule[rule.find("(") + 1:-1] if rule.endswith(")") and "(" in rule else rule
    return inner.removeprefix("domain:")


@dataclass(frozen=True)
class Saved:
    """What became of rules saved to the project's file."""

    path: Path
    rules: tuple[str, ...]
    problem: str = ""  # empty: saved (or there already)

    @property
    def ok(self) -> bool:
        return not self.problem

    def notice(self) -> str:
        names = ", ".join(self.rules)
        if self.ok:
            return f"{names} saved to {LOCAL_FILE}: not asked again, in later sessions too"
        return f"{names} applies for this session only: {self.problem}"


def save_allow_rules(workspace: Path, rules: Sequence[str],
                     env: Mapping[str, str] | None = None) -> Saved:
    """Add ``rules`` to ``permissions.allow`` of ``workspace``'s settings.local.json."""
    path = workspace / LOCAL_FILE
    result = Saved(path, tuple(rules))
    try:
        PermissionRules(allow=list(rules))
    except InvalidRule as exc:
        return Saved(path, tuple(rules), f"not a rule ({exc})")
    def add(data: dict[str, Any]) -> bool:
        allow = data.setdefault("permissions", {}).setdefault("allow", [])
        new = [rule for rule in rules if rule not in allow]
        allow.extend(new)
        return bool(new)

    problem = _write(workspace / LOCAL_FILE, add)
    if problem:
        return Saved(path, tuple(rules), f"{LOCAL_FILE} {problem}; it was left as it is")
    if _in_git(workspace):
        _ignore_in_git(os.environ if env is None else env)
    return result


def _in_git(workspace: Path) -> bool:
    """Whether the workspace is inside a git repository (Claude Code touches the git
    ignore only then)."""
    here = workspace.absolute()
    return any((folder / ".git").exists() for folder in (here, *here.parents))


def save_local_key(workspace: Path, key: str, value: Any) -> str:
    """Set a top-level ``key`` of the project's settings.local.json (``outputStyle``),
    with the same care as the rules; an empty answer, or what stopped it."""
    return save_key(workspace / LOCAL_FILE, key, value)


def save_key(path: Path, key: str, value: Any) -> str:
    """Set a top-level ``key`` of a settings file (the user's ``editorMode`` too), with
    the same care as the rules; an empty answer, or what stopped it."""
    def put(data: dict[str, Any]) -> bool:
        changed = bool(data.get(key) != value)
        data[key] = value
        return changed

    problem = _write(path, put)
    return f"{path} {problem}; it was left as it is" if problem else ""


def _write(path: Path, change: Callable[[dict[str, Any]], bool]) -> str:
    """Change the file's object (``change`` says whether it did); an empty answer, or
    what stopped it. The folder is opened once, never through a link, and the file read
    and replaced inside it."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if folder.is_symlink():
            return "is in a folder that is a symbolic link (not followed)"
        return f"could not be created ({exc.strerror or exc})"
    try:
        data, mode, problem = _read(dir_fd, path.name)
        if problem:
            return problem
        if not change(data):
            return ""
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        try:
            write_atomic(dir_fd, path.name, text.encode("utf-8"),
                         mode=mode if mode is not None else 0o644, exact_mode=mode is not None)
        except OSError as exc:
            return f"could not be written ({exc.strerror or exc})"
        return ""
    finally:
        os.close(dir_fd)


def _read(dir_fd: int, name: str) -> tuple[dict[str, Any], int | None, str]:
    """The file's object, its mode (None: there is no file) and a problem, if any."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                     dir_fd=dir_fd)  # a FIFO is not waited on: refused below
    except FileNotFoundError:
        return {}, None, ""
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return {}, None, "is a symbolic link (not followed)"
        return {}, None, f"could not be read ({exc.strerror or exc})"
    with os.fdopen(fd, "rb") as file:
        st = os.fstat(file.fileno())
        if not stat.S_ISREG(st.st_mode):
            return {}, None, "is not a regular file"
        if not st.st_mode & stat.S_IWUSR:
            return {}, None, "is read-only"
        try:
            raw = file.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return {}, None, f"could not be read ({getattr(exc, 'strerror', None) or exc})"
    mode = stat.S_IMODE(st.st_mode)
    if not raw.strip():
        return {}, mode, ""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, None, (f"is not plain JSON (line {exc.lineno}, column {exc.colno}: "
                          f"{exc.msg}; comments count, they would be lost)")
    problem = _shape(data)
    return (data if not problem else {}), mode, problem


def _shape(data: Any) -> str:
    if not isinstance(data, dict):
        return "does not hold a JSON object"
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        return '"permissions" is not an object'
    allow = permissions.get("allow", [])
    if not isinstance(allow, list):
        return '"permissions.allow" is not a list'
    return ""


def _ignore_in_git(env: Mapping[str, str]) -> None:
    """Claude Code's way to keep the file out of every repository: one line in the
    user's global git ignore. Best effort: the rule is saved either way."""
    config = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or str(Path.home()), ".config")
    folder = Path(config) / "git"
    target = folder / "ignore"
    try:
        old = target.read_text(encoding="utf-8") if target.exists() else ""
        if IGNORE_LINE in old.splitlines():
            return
        folder.mkdir(parents=True, exist_ok=True)
        text = old + ("" if not old or old.endswith("\n") else "\n") + IGNORE_LINE + "\n"
        write_atomic(folder, "ignore", text.encode("utf-8"), mode=0o644)
    except (OSError, UnicodeDecodeError):
        return
