"""What a parsed command is made of: words, redirections, simple commands, the parse.

The shapes :mod:`.shell_parse` builds and every judge reads (rules, paths, read-only).
Immutable and cheap: a command is parsed once per call (and cached), then judged
several times.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word after quote removal.

    ``text`` is the word as the program receives it when ``static``; a word with an
    expansion or a substitution in it keeps its source text there and is not static.
    ``pattern``: an unquoted ``*``, ``?``, ``[``, ``{`` or a leading ``~``, which the
    shell may expand into other words (a glob, a brace expansion, a home folder).
    """

    text: str
    static: bool = True
    pattern: bool = False


#: Redirection operators that write to their target.
WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
#: Targets an output redirection may name without writing a file.
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


@dataclass(frozen=True, slots=True)
class Redirect:
    """``op`` as written (``>``, ``>>``, ``<``, ``&>``, ``<<<``, ``<<``...) and its target
    (a file, a descriptor, or the here-string's / here-document's text)."""

    op: str
    target: Word

    @property
    def reads_file(self) -> bool:
        return self.op in {"<", "<>"} or (self.op == "<&" and not self.target.text.isdigit()
                                          and self.target.text != "-")

    @property
    def writes_file(self) -> bool:
        """Whether it writes a file (not ``/dev/null``, not a descriptor: ``2>&1``)."""
        if self.op not in WRITE_OPS:
            return False
        if self.op == ">&" and (self.target.text.isdigit() or self.target.text == "-"):
            return False
        return not (self.target.static and self.target.text in HARMLESS_TARGETS)


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command: a program and its arguments (``words``; none for a lone
    redirection such as ``> file``), the variables set before it, its redirections.

    ``runs`` holds what it runs in turn: the command behind a wrapper (``sudo rm x``
    runs ``rm x``), the commands of a ``bash -c`` script, of ``eval``'s words, of a
    here-document fed to a shell. ``context`` says where it stands (``""`` at the top,
    else ``subshell``, ``command substitution``, ``bash -c``...).
    """

    words: tuple[Word, ...]
    assignments: tuple[tuple[str, Word], ...] = ()
    redirects: tuple[Redirect, ...] = ()
    source: str = ""
    context: str = ""
    runs: tuple[SimpleCommand, ...] = field(default=())

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words)

    @property
    def program(self) -> str:
        """The program's name without its folder (``/bin/rm`` is ``rm``), or ``""``."""
        return self.words[0].text.rsplit("/", 1)[-1] if self.words else ""

    def walk(self) -> Iterator[SimpleCommand]:
        """This command, then everything it runs, depth first."""
        yield self
        for inner in self.runs:
            yield from inner.walk()


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """A command line as the shell will run it.

    ``commands``: every simple command written in it, in order, wherever it stands
    (pipelines, lists, subshells, groups, ``if``/``for``/``while``/``case`` bodies,
    ``$()``, backticks, ``<()``, function bodies), each with what it runs in turn.
    ``doubts``: why the parse cannot be trusted to show everything the shell will run
    (a parse error, an expansion where a program's name goes, ``eval``...); empty when
    the parse is complete and certain.
    """

    source: str
    commands: tuple[SimpleCommand, ...]
    doubts: tuple[str, ...] = ()

    @property
    def certain(self) -> bool:
        return not self.doubts

    def every(self) -> Iterator[SimpleCommand]:
        """Every simple command, written or run through another, depth first."""
        for command in self.commands:
            yield from command.walk()
