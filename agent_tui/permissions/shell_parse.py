"""Parsing a command line with bash's grammar (tree-sitter-bash) for the permission judges.

:func:`parse_command` gives a :class:`~.shell_model.ParsedCommand`: every simple
command the line holds, wherever it stands, its words after quote removal (``r''m``,
``"r"m``, ``$'\\x72m'`` and ``\\rm`` are all ``rm``), with what each runs in turn
(:mod:`.shell_wrappers`: wrappers, ``bash -c``, ``eval``, a shell fed a here-document),
parsed again, recursively. What the parse cannot vouch for is named in ``doubts``:

- the grammar did not parse it all (a syntax error, an unbalanced quote), or the line
  holds characters bash and the grammar read differently (CR, VT, FF, NUL, Unicode
  line breaks);
- an expansion, a glob or a brace expansion where a program's name goes (``$x``,
  ``r?``, ``{rm,x}``), ``$IFS``, ``${x@P}``;
- arithmetic that reads a variable (``$((x))``, ``${a[i]}``, ``${x:n}``, ``[[ x -eq y ]]``,
  ``let``: bash evaluates a variable's text there, and ``a[$(cmd)]`` in it runs cmd);
- setting a variable that changes what runs (``PATH=``, ``PAGER=``, ``LD_PRELOAD=``...:
  any upper-case name but a few harmless ones);
- ``eval``, ``trap``, ``alias`` and other builtins that run text or rename commands,
  a function definition, process substitution, a shell reading its input;
- nesting deeper than the judge follows, or a construct it does not know.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import tree_sitter
import tree_sitter_bash

from agent_tui.permissions.shell_model import ParsedCommand, Redirect, SimpleCommand, Word
from agent_tui.permissions.shell_quotes import ansi_c, unquoted
from agent_tui.permissions.shell_wrappers import inner

_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
_PARSER_LOCK = threading.Lock()

#: How deep scripts inside scripts (``bash -c "bash -c '...'"``) and wrappers are followed.
MAX_DEPTH = 8

#: Characters bash and the grammar do not read alike (the grammar takes CR, VT and FF
#: for blanks, so ``a\r# ; rm x`` would hide ``rm x`` in a comment), and Unicode breaks.
_JOINED_LINES = re.compile(r"[^\s\\]\\\n[^\s]")
_ODD_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")
#: Characters outside the Basic Multilingual Plane: the grammar's lexer (tree-sitter-bash
#: 0.25.1) reads past its tables on some of them and crashes the process (``{`` then
#: U+D0000, say), so the parser is given a stand-in (U+FFFD) for each; the words keep
#: the stand-in, and a rule naming such a character does not match (stricter). Planes
#: 4 to 16 (unassigned, tags that hide text, private use) also cast doubt.
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_FAR_PLANES = re.compile("[\U00040000-\U0010ffff]")

#: Builtins that run text, rename commands or read variables as code.
DOUBTFUL_BUILTINS = frozenset({"eval", "trap", "alias", "enable", "let", "fc", "hash", "bind",
                               "mapfile", "readarray", "complete", "compgen"})
#: Upper-case variables that change no program's behaviour in a way that runs code.
HARMLESS_VARIABLES = frozenset({
    "CI", "COLUMNS", "DEBUG", "FORCE_COLOR", "LANG", "LANGUAGE", "LC_ALL", "LC_COLLATE",
    "LC_CTYPE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "LINES", "NO_COLOR", "NODE_ENV",
    "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "RUST_BACKTRACE", "RUST_LOG", "TERM", "TZ",
    "VERBOSE", "PYTHONHASHSEED", "CLICOLOR", "CLICOLOR_FORCE",
})
_ARITH_REFS = frozenset({"variable_name", "simple_expansion", "expansion", "subscript",
                         "command_substitution", "word"})
_ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})
_PLAIN_EXPANSION = re.compile(
    r"\$\{[#!]?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(?:\[(?:[0-9]+|[@*])\])?"
    r"(?:(?::?[-=+?]|##?|%%?|//?|\^\^?|,,?)[^}]*)?\}", re.DOTALL)
_SUBSTRING = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:[\s0-9:-]*\}")
#: Nodes that only hold statements: walked through.
_CONTAINERS = frozenset({"program", "list", "pipeline", "subshell", "negated_command",
                         "do_group", "if_statement", "elif_clause", "else_clause",
                         "while_statement", "ERROR"})
#: Tokens and nodes with nothing to judge.
_SKIPPED = frozenset({"comment", "heredoc_body", "heredoc_start", "heredoc_end",
                      "heredoc_content", "file_descriptor"})
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})


@lru_cache(maxsize=256)
def parse_command(text: str) -> ParsedCommand:
    """Parse a command line as bash would read it (see the module's docstring)."""
    try:
        return _Parse(text, 0).result()
    except RecursionError:  # thousands of nested substitutions: judged as unknown
        return ParsedCommand(text, (), ("nested deeper than the judge follows",))


class _Parse:
    """One parse: the walk over the grammar's tree, collecting commands and doubts."""

    def __init__(self, text: str, depth: int) -> None:
        self.text = text
        self.depth = depth
        self.commands: list[SimpleCommand] = []
        self.doubts: list[str] = []
        self.fed_text: list[Word] = []  # here-strings, here-documents, echo's words
        self.shell_reads_input = False

    def result(self) -> ParsedCommand:
        if self.depth > MAX_DEPTH:
            return ParsedCommand(self.text, (), ("nested deeper than the judge follows",))
        if _ODD_CHARS.search(self.text):
            self.doubt("it holds control characters bash and the parser read differently")
        if _FAR_PLANES.search(self.text):
            self.doubt("it holds characters of the unused Unicode planes (tags, private use)")
        source = _ASTRAL.sub("\ufffd", self.text)  # never what crashes the grammar's lexer
        with _PARSER_LOCK:  # one parser, and the policy may be asked from several threads
            tree = _PARSER.parse(source.encode("utf-8", "surrogatepass"))
        if tree.root_node.has_error:
            self.doubt("it does not parse as a whole (a syntax error or an unbalanced quote)")
        self.visit(tree.root_node, "")
        if _JOINED_LINES.search(self.text):  # bash joins `r\<newline>m` into `rm`
            self.doubt("a line continuation inside a word")
            self.commands += self.script(Word(self.text.replace("\\\n", "")), "joined lines")
        if self.shell_reads_input:
            self.doubt("a shell reads commands from its input")
            for fed in self.fed_text:
                self.commands += self.script(fed, "shell input")
        return ParsedCommand(self.text, tuple(self.commands), tuple(dict.fromkeys(self.doubts)))

    def doubt(self, why: str) -> None:
        self.doubts.append(why)

    # -- statements ---------------------------------------------------------------

    def visit(self, node: tree_sitter.Node, ctx: str) -> None:
        kind = node.type
        if not node.is_named or kind in _SKIPPED:
            return
        if kind == "command":
            self.commands.append(self.command(node, ctx, ()))
        elif kind == "redirected_statement":
            self.redirected(node, ctx)
        elif kind in {"variable_assignment", "variable_assignments"}:
            self.assignments(node, ctx)
        elif kind in {"declaration_command", "unset_command"}:
            self.commands.append(self.declaration(node, ctx))
        elif kind == "test_command":
            self.test(node, ctx)
        elif kind == "compound_statement":
            self.compound(node, ctx)
        elif kind == "function_definition":
            self.doubt("it defines a function")
            self.children(node.child_by_field_name("body"), "function body")
        elif kind == "c_style_for_statement":
            self.arithmetic(node)
            self.children(node, ctx)
        elif kind in {"for_statement", "case_statement"}:
            self.loop_or_case(node, ctx)
        elif kind == "case_item":
            self.case_item(node, ctx)
        elif kind in _CONTAINERS:
            self.children(node, ctx if kind != "subshell" else "subshell")
        elif kind in _REDIRECTS:
            self.commands.append(SimpleCommand((), (), (self.redirect(node, ctx),),
                                               _text(node), ctx))
        else:
            self.doubt(f"the judge does not know the construct {kind!r}")
            self.children(node, ctx)

    def children(self, node: tree_sitter.Node | None, ctx: str) -> None:
        for child in node.children if node is not None else ():
            self.visit(child, ctx)

    def redirected(self, node: tree_sitter.Node, ctx: str) -> None:
        body = node.child_by_field_name("body")
        redirect_nodes = [c for c in node.children if c.type in _REDIRECTS]
        redirects = tuple(self.redirect(r, ctx) for r in redirect_nodes)
        if body is not None and body.type == "command":
            self.commands.append(self.command(body, ctx, redirects))
        else:
            if body is not None:
                self.visit(body, ctx)
            self.commands.append(SimpleCommand((), (), redirects, _text(node), ctx))

    def compound(self, node: tree_sitter.Node, ctx: str) -> None:
        if node.children and node.children[0].type == "((":
            self.arithmetic(node)
            return
        self.children(node, ctx)

    def loop_or_case(self, node: tree_sitter.Node, ctx: str) -> None:
        variable = node.child_by_field_name("variable")
        if variable is not None:
            self.check_name(_text(variable))
        for child in node.children:
            if child.type in {"do_group", "case_item"}:
                self.visit(child, ctx)
            elif child.is_named:
                self.word(child, ctx)  # the list or the word: substitutions run

    def case_item(self, node: tree_sitter.Node, ctx: str) -> None:
        for index, child in enumerate(node.children):
            if node.field_name_for_child(index) == "value":
                self.word(child, ctx)  # a pattern: substitutions in it run
            else:
                self.visit(child, ctx)

    def test(self, node: tree_sitter.Node, ctx: str) -> None:
        if any(_text(n) in _ARITH_TEST_OPS for n in _descendants(node, {"test_operator"})):
            self.doubt("an arithmetic test reads a variable's text as code")
        self.scan(node, ctx)

    def assignments(self, node: tree_sitter.Node, ctx: str) -> None:
        targets = [node] if node.type == "variable_assignment" else list(node.named_children)
        for target in targets:
            self.assignment(target, ctx)

    def assignment(self, node: tree_sitter.Node, ctx: str) -> tuple[str, Word]:
        name_node = node.child_by_field_name("name")
        name = _text(name_node) if name_node is not None else _text(node).split("=", 1)[0]
        self.check_name(name)
        if name_node is not None and name_node.type == "subscript":
            self.arithmetic(name_node)
        value = node.child_by_field_name("value")
        return name, self.word(value, ctx) if value is not None else Word("")

    def check_name(self, name: str) -> None:
        if not name.islower() and name not in HARMLESS_VARIABLES:
            self.doubt(f"it sets {name}, which can change what runs")

    def declaration(self, node: tree_sitter.Node, ctx: str) -> SimpleCommand:
        words = [Word(node.children[0].type)]
        for child in node.named_children:
            if child.type == "variable_assignment":
                name, value = self.assignment(child, ctx)
                words.append(Word(f"{name}={value.text}", value.static))
            else:
                words.append(self.word(child, ctx))
        return self.simple(tuple(words), (), (), _text(node), ctx)

    # -- simple commands ----------------------------------------------------------

    def command(self, node: tree_sitter.Node, ctx: str,
                outer: tuple[Redirect, ...]) -> SimpleCommand:
        words: list[Word] = []
        assignments: list[tuple[str, Word]] = []
        redirects = list(outer)
        for child in node.children:
            if child.type == "variable_assignment":
                assignments.append(self.assignment(child, ctx))
            elif child.type in _REDIRECTS:
                redirects.append(self.redirect(child, ctx))
            elif child.type == "command_name":
                words.append(self.word(child.named_children[0], ctx))
            elif child.is_named and child.type not in _SKIPPED:
                words.append(self.word(child, ctx))
            elif child.type == "$":
                self.doubt("a $\"...\" string the judge cannot read")
        return self.simple(tuple(words), tuple(assignments), tuple(redirects), _text(node), ctx)

    def simple(self, words: tuple[Word, ...], assignments: tuple[tuple[str, Word], ...],
               redirects: tuple[Redirect, ...], source: str, ctx: str,
               depth: int = 0) -> SimpleCommand:
        if words:
            self.check_program(words[0])
        runs: list[SimpleCommand] = []
        for found in inner(words):
            if depth >= MAX_DEPTH:
                self.doubt("wrappers nested deeper than the judge follows")
                break
            if found.reads_input:
                self.shell_reads_input = True
            elif found.script is not None:
                runs += self.script(found.script, found.via)
            elif found.words:
                runs.append(self.simple(found.words, (), (), " ".join(w.text for w in found.words),
                                        f"through {found.via}", depth + 1))
        if words and words[0].text in {"echo", "printf"}:
            self.fed_text.append(Word(" ".join(w.text for w in words[1:])))
        return SimpleCommand(words, assignments, redirects, source, ctx, tuple(runs))

    def check_program(self, name: Word) -> None:
        if not name.static:
            self.doubt(f"the program's name is an expansion ({name.text})")
        elif name.pattern and not name.text.startswith("~") and name.text != "[":
            self.doubt(f"the program's name is a pattern the shell expands ({name.text})")
        elif name.text in DOUBTFUL_BUILTINS:
            self.doubt(f"{name.text} runs text or changes what names mean")

    def script(self, text: Word, via: str) -> list[SimpleCommand]:
        """The commands of a script another command runs (``bash -c``, ``eval``...)."""
        if not text.static:
            self.doubt(f"{via} runs text that is only known when it runs ({text.text})")
        inner_parse = _Parse(text.text, self.depth + 1).result()
        self.doubts += [f"in what {via} runs: {d}" for d in inner_parse.doubts]
        return [SimpleCommand(c.words, c.assignments, c.redirects, c.source,
                              via if not c.context else f"{via}, {c.context}", c.runs)
                for c in inner_parse.commands]

    # -- words --------------------------------------------------------------------

    def redirect(self, node: tree_sitter.Node, ctx: str) -> Redirect:
        if node.type == "herestring_redirect":
            target = self.word(node.named_children[-1], ctx) if node.named_children else Word("")
            self.fed_text.append(target)
            return Redirect("<<<", target)
        if node.type == "heredoc_redirect":
            return self.heredoc(node, ctx)
        op = next((c.type for c in node.children if not c.is_named), "")
        dest = node.child_by_field_name("destination")
        return Redirect(op, self.word(dest, ctx) if dest is not None else Word("-"))

    def heredoc(self, node: tree_sitter.Node, ctx: str) -> Redirect:
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        quoted = start is not None and any(q in _text(start) for q in "'\"\\")
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        for child in node.named_children:  # the grammar hangs what follows `<<EOF` here
            if child.type not in _SKIPPED:
                self.visit(child, ctx)
        expands = body is not None and not quoted and bool(body.named_children)
        if body is not None and not quoted:
            self.scan(body, ctx)
        text = Word(_text(body) if body is not None else "", static=not expands)
        self.fed_text.append(text)
        return Redirect("<<", text)

    def word(self, node: tree_sitter.Node, ctx: str) -> Word:
        """A word after quote removal; substitutions inside it are walked as commands."""
        self.scan(node, ctx)
        return _word(node)

    def scan(self, node: tree_sitter.Node, ctx: str) -> None:
        """Find what runs or is evaluated inside a word: substitutions, arithmetic."""
        kind = node.type
        if kind in {"command_substitution", "process_substitution"}:
            if kind == "process_substitution":
                self.doubt("process substitution")
            where = "command substitution" if kind == "command_substitution" else kind
            self.children(node, where.replace("_", " "))
            return
        if kind == "arithmetic_expansion":
            self.arithmetic(node)
        elif kind == "expansion":
            self.expansion(node)
        elif kind == "simple_expansion" and _text(node) == "$IFS":
            self.doubt("it expands $IFS")
        for child in node.children:
            self.scan(child, ctx)

    def expansion(self, node: tree_sitter.Node) -> None:
        text = _text(node)
        if "IFS" in text:
            self.doubt("it expands $IFS")
        elif not (_PLAIN_EXPANSION.fullmatch(text) or _SUBSTRING.fullmatch(text)):
            self.doubt(f"an expansion the judge does not vouch for ({text})")
        elif "@P" in text:
            self.doubt("a prompt expansion runs the substitutions in a variable")

    def arithmetic(self, node: tree_sitter.Node) -> None:
        for found in _descendants(node, _ARITH_REFS):
            if found.type != "word" or not _text(found).isdigit():
                self.doubt("arithmetic reads a variable's text as code")
                return


def _word(node: tree_sitter.Node) -> Word:
    kind = node.type
    text = _text(node)
    if kind == "word":
        value, pattern = unquoted(text)
        return Word(value, True, pattern)
    if kind == "number":
        return Word(text)
    if kind == "raw_string":
        return Word(text[1:-1])
    if kind == "ansi_c_string":
        return Word(ansi_c(text[2:-1]))
    if kind in {"string", "translated_string"}:
        return _string(node)
    if kind == "concatenation":
        parts = [_word(c) for c in node.children if c.type != "$"]
        return Word("".join(p.text for p in parts), all(p.static for p in parts),
                    any(p.pattern for p in parts))
    if kind == "brace_expression":
        return Word(text, True, True)
    return Word(text, static=False)


def _string(node: tree_sitter.Node) -> Word:
    out: list[str] = []
    static = True
    for child in node.children:
        if child.type == "string_content":
            out.append(re.sub(r"\\([$`\"\\\n])", lambda m: "" if m[1] == "\n" else m[1],
                              _text(child)))
        elif child.is_named:
            static = False
            out.append(_text(child))
    return Word("".join(out), static)


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


def _descendants(node: tree_sitter.Node,
                 kinds: frozenset[str] | set[str]) -> list[tree_sitter.Node]:
    found: list[tree_sitter.Node] = []
    stack = list(node.children)
    while stack:
        child = stack.pop()
        if child.type in kinds:
            found.append(child)
        stack += child.children
    return found
