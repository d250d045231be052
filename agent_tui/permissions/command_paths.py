"""Which files a command names, for ``Read(...)`` and ``Edit(...)`` deny rules.

A deny rule on reading a file also binds the commands that read it, and one on
editing a file the commands that write it. The programs judged are listed here
(:data:`READERS`, :data:`WRITERS`); a program not listed is not judged (a script,
``python3 -c``, ``make``: they may read anything). For a judged program every
argument is taken for a path (``grep SECRET .env`` names ``.env``, and ``SECRET``
too), so is the value of ``--opt=value``, ``if=``/``of=`` (``dd``), ``@file``
(``curl -d @.env``) and the target of a redirection (``< .env`` reads, ``> f``
writes), whatever the program. Globs, brace expansions and ``~`` are expanded
against the file system as the shell would (:func:`expand`).
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

from agent_tui.permissions.shell_model import ParsedCommand, SimpleCommand, Word

#: Programs whose arguments name files they read (or copy, move, link, send away).
READERS = frozenset({
    "cat", "tac", "nl", "head", "tail", "less", "more", "most", "bat", "batcat", "view",
    "grep", "egrep", "fgrep", "rgrep", "zgrep", "zegrep", "zfgrep", "rg", "ag", "ack",
    "base64", "base32", "basenc", "xxd", "od", "hexdump", "hd", "strings",
    "cut", "sort", "uniq", "wc", "diff", "cmp", "comm", "paste", "join", "fold", "fmt", "pr",
    "rev", "column", "expand", "unexpand", "look", "split", "csplit", "iconv",
    "cp", "mv", "ln", "install", "rsync", "scp", "sed", "awk", "gawk", "mawk", "nawk", "dd",
    "tar", "zip", "gzip", "gunzip", "zcat", "bzip2", "bzcat", "xz", "xzcat", "unxz", "zstd",
    "jq", "yq", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum",
    "openssl", "gpg", "curl", "wget", "nc", "source", ".", "vi", "vim", "nvim", "nano",
    "emacs", "ed", "ex",
})
#: Programs whose arguments name files they write, move, remove or change.
WRITERS = frozenset({
    "cp", "mv", "ln", "install", "rsync", "scp", "tee", "sed", "awk", "gawk", "dd", "tar",
    "zip", "unzip", "gzip", "gunzip", "bzip2", "xz", "touch", "rm", "rmdir", "unlink",
    "truncate", "shred", "chmod", "chown", "chgrp", "mkdir", "patch", "sort", "uniq",
    "split", "csplit", "curl", "wget", "vi", "vim", "nvim", "nano", "emacs", "ed", "ex",
})
#: Changing folders changes what a relative path names.
_CHDIRS = frozenset({"cd", "pushd"})
_MAX_MATCHES = 1000


@dataclass(frozen=True, slots=True)
class NamedFiles:
    """The files a command line names: read, written, and the folders relative paths
    may be taken from (the workspace first, then each ``cd``)."""

    reads: tuple[Word, ...]
    writes: tuple[Word, ...]
    folders: tuple[Word, ...]


def named_files(parsed: ParsedCommand) -> NamedFiles:
    reads: list[Word] = []
    writes: list[Word] = []
    folders: list[Word] = []
    for command in parsed.every():
        program = command.program
        args = _path_words(command)
        if program in READERS:
            reads += args
        if program in WRITERS:
            writes += args
        if program == "xargs":  # the file names come from its input
            fed = Word("the names xargs reads", static=False)
            reads += [fed] if any(r.program in READERS for r in command.runs) else []
            writes += [fed] if any(r.program in WRITERS for r in command.runs) else []
        if program in _CHDIRS and args:
            folders.append(args[-1])
        reads += [r.target for r in command.redirects if r.reads_file]
        writes += [r.target for r in command.redirects if r.writes_file]
    return NamedFiles(tuple(reads), tuple(writes), tuple(folders))


def _path_words(command: SimpleCommand) -> list[Word]:
    found: list[Word] = []
    for word in command.words[1:]:
        text = word.text
        if "=" in text and (text.startswith("-") or re.match(r"[a-z]+=", text)):
            found.append(Word(text.split("=", 1)[1], word.static, word.pattern))
        elif not text.startswith("-") or text == "-":
            found.append(word)
        if text.startswith("@") and len(text) > 1:
            found.append(Word(text[1:], word.static, word.pattern))
    return found


def expand(word: Word, folder: str) -> list[str]:
    """The paths a static word may name: ``~`` expanded, brace expansions spelled out,
    globs matched against the files under ``folder`` (and the pattern itself)."""
    text = os.path.expanduser(word.text) if word.text.startswith("~") else word.text
    if not word.pattern:
        return [text]
    found: list[str] = []
    for spelled in _braces(text)[:_MAX_MATCHES]:
        found.append(spelled)
        if any(c in spelled for c in "*?["):
            found += glob.glob(spelled, root_dir=folder, include_hidden=True)[:_MAX_MATCHES]
    return found


def _braces(text: str) -> list[str]:
    """Bash's brace expansion (``a{b,c}`` is ``ab ac``, ``{1..3}``), outermost first."""
    start = text.find("{")
    while start != -1:
        depth, end, commas = 0, -1, []
        for i in range(start, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    end = i
                    break
            elif text[i] == "," and depth == 1:
                commas.append(i)
        if end == -1:
            return [text]
        head, body, tail = text[:start], text[start + 1 : end], text[end + 1 :]
        options: list[str] | None
        if commas:
            cuts = [start, *commas, end]
            options = [text[a + 1 : b] for a, b in zip(cuts, cuts[1:])]
        else:
            options = _sequence(body)
        if options is not None:
            return [out for option in options for out in _braces(head + option + tail)]
        start = text.find("{", start + 1)
    return [text]


def _sequence(body: str) -> list[str] | None:
    match = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])", body)
    if match is None:
        return None
    a, b = match[1], match[2]
    if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
        lo, hi = int(a), int(b)
        step = 1 if hi >= lo else -1
        return [str(n) for n in range(lo, hi + step, step)][:_MAX_MATCHES]
    step = 1 if ord(b) >= ord(a) else -1
    return [chr(n) for n in range(ord(a), ord(b) + step, step)]


#: Readers that always search folders, and those that do with ``-r``/``-R``/``-a``.
_SEARCHERS = frozenset({"rg", "ag", "ack", "tar", "zip", "rsync"})
_RECURSIVE_WITH_FLAG = frozenset({"grep", "egrep", "fgrep", "zgrep", "cp", "scp"})
_DEFAULT_HERE = frozenset({"rg", "ag", "ack", "grep", "egrep", "fgrep"})
_SHOW_HIDDEN = frozenset({"--hidden", "-.", "-u", "--unrestricted", "-a", "--all-types"})


def recursive_folders(parsed: ParsedCommand, folders: list[str]) -> list[tuple[str, bool]]:
    """The folders a recursive reader searches (``grep -r x .``, ``rg x``, ``cp -r d e``),
    each with whether it skips hidden files (``rg``, ``ag`` unless told otherwise)."""
    found: list[tuple[str, bool]] = []
    for command in parsed.every():
        program, args = command.program, command.argv[1:]
        if not (program in _SEARCHERS
                or (program in _RECURSIVE_WITH_FLAG and any(_recursive(a) for a in args))):
            continue
        names = [a for a in args if not a.startswith("-")]
        skips_hidden = program in {"rg", "ag"} and not any(
            a in _SHOW_HIDDEN or a.startswith("-uu") for a in args)
        for folder in folders:
            if program in _DEFAULT_HERE and not any(
                    os.path.exists(os.path.join(folder, os.path.expanduser(n))) for n in names):
                names.append(".")  # no path given: the searcher searches where it runs
            for name in names:
                path = os.path.normpath(os.path.join(folder, os.path.expanduser(name)))
                if os.path.isdir(path) and (path, skips_hidden) not in found:
                    found.append((path, skips_hidden))
    return found


def _recursive(arg: str) -> bool:
    if arg in {"--recursive", "--dereference-recursive", "--archive", "--directories=recurse"}:
        return True
    return arg.startswith("-") and not arg.startswith("--") and bool(set(arg[1:]) & set("rRa"))
