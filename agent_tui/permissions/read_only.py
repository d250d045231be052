"""Which parsed commands only look.

:func:`is_read_only`: Claude Code runs ``ls``, ``cat notes.txt``, ``grep``, ``git status``,
``git log``, ``git diff``, ``find . -name``, ``echo``, ``pwd``, ``head``, ``wc -l`` without a
rule. A command is read-only here when its parse is certain, nothing in it writes a
file through a redirection, nothing runs through another command, and every simple
command is a program of :data:`READ_ONLY` used without the options that write or run
(``find -delete``/``-exec``, ``sort -o``, ``git diff --output``, ``rg --pre``...).
Where the files it reads lie is the policy's to judge (:func:`outside_candidates`).
"""

from __future__ import annotations


from agent_tui.permissions.shell_model import ParsedCommand, SimpleCommand

#: Programs that only read, with the options that would make them write or run.
READ_ONLY: dict[str, frozenset[str]] = {
    **{name: frozenset() for name in (
        "ls", "pwd", "echo", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "which",
        "type", "file", "stat", "du", "df", "whoami", "id", "uname", "basename", "dirname",
        "realpath", "readlink", "true", "false", "test", "[", "diff", "cut", "tr", "nl", "cmp",
        "comm", "tac", "rev", "column", "printenv", "uptime", "strings", "od", "md5sum",
        "sha1sum", "sha256sum", "sha512sum", "cd", "jq", "less", "more")},
    "find": frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0",
                       "-fprintf", "-fls"}),
    "rg": frozenset({"--pre", "--pre-glob", "--search-zip", "-z"}),
    "sort": frozenset({"-o", "--output"}),
    "tree": frozenset({"-o"}),
    "date": frozenset({"-s", "--set"}),
}
#: git subcommands that only read, and the options that write or run.
GIT_READ_ONLY = frozenset({"status", "log", "diff", "show", "rev-parse", "ls-files", "blame",
                           "describe", "shortlog", "grep", "ls-tree", "cat-file", "reflog"})
_GIT_WRITING = ("--output", "--ext-diff", "-o", "--open-files-in-pager", "-O")
def is_read_only(parsed: ParsedCommand) -> bool:
    """Whether the command only reads (see the module's docstring)."""
    if not parsed.certain or not parsed.commands:
        return False
    return all(_reads_only(command) for command in parsed.commands)


def _reads_only(command: SimpleCommand) -> bool:
    if command.runs or command.assignments or any(r.writes_file for r in command.redirects):
        return False
    if not command.words:
        return True
    program = command.words[0].text
    args = command.argv[1:]
    if program == "git":
        return _git_reads_only(args)
    if program == "hostname":
        return not args
    if program == "uniq":
        return len([a for a in args if not a.startswith("-")]) <= 1
    if program == "xxd":
        return "-r" not in args and len([a for a in args if not a.startswith("-")]) <= 1
    writing = READ_ONLY.get(program)
    if writing is None:
        return False
    return not any(_has_option(arg, writing) for arg in args)


def _git_reads_only(args: tuple[str, ...]) -> bool:
    if not args or args[0] not in GIT_READ_ONLY:
        return False  # `git -c x=y ...`, `git -C dir ...`: options before the subcommand
    return not any(_has_option(arg, frozenset(_GIT_WRITING)) for arg in args[1:])


def _has_option(arg: str, options: frozenset[str]) -> bool:
    if arg in options or arg.split("=", 1)[0] in options:
        return True
    # a short option glued to its value or to other flags (`-ofile`, `-zn`)
    return any(len(o) == 2 and arg.startswith(o) and not arg.startswith("--") for o in options)


def outside_candidates(parsed: ParsedCommand) -> list[str]:
    """The arguments of a read-only command that may name a place outside the
    workspace (absolute, ``~``, ``..``) or that are not known until it runs."""
    found: list[str] = []
    for command in parsed.every():
        for word in (*command.words[1:], *(r.target for r in command.redirects)):
            text = word.text.split("=", 1)[-1] if word.text.startswith("-") else word.text
            if not word.static or text.startswith(("/", "~")) or ".." in text:
                found.append(text if word.static else "")
    return found
