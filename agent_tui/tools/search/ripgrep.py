"""The two command lines a search can run: ripgrep's, or the Python fallback's.

ripgrep (``rg``) is a pinned dependency: the ``ripgrep`` package ships the binary as a
wheel, installed beside this Python. That binary is used first, so a search behaves the
same on every machine; without it (the package removed), the PATH's ``rg``; without
either, the fallback.

ripgrep's options are spelled out so that no user configuration changes what we parse
(``--no-config``), ignore files apply whether or not the folder is a git repository
(``--no-require-git``), hidden files are searched but ``.git`` never is, and errors
about single unreadable files stay out of the output (``--no-messages``). The user's
global git excludes are not read, so a search gives the same files on every machine
and with either back end.

The fallback is this package's :mod:`.fallback` run by the same Python as the agent,
in a child process like ripgrep: Esc ends it the same way, and a regular expression
that backtracks for ever cannot stall the agent.
"""

from __future__ import annotations

import sys

from agent_tui.tools.search.query import Query, SearchMode

_BASE = (
    "--no-config",
    "--no-messages",
    "--hidden",
    "--no-require-git",
    "--no-ignore-global",
    "--glob",
    "!.git",
)
_TYPE = "agentglob"
def rg_argv(rg: str, query: Query) -> list[str]:
    argv = [rg, *_BASE]
    includes = []
    for glob in query.globs:
        if glob.startswith("!"):
            argv += ["--glob", glob]  # excluding more never overrides an ignore file
        else:
            includes.append(glob)
    if includes and all("/" not in g for g in includes):
        # Only the files' names matter: a file type narrows the search and, unlike an
        # include --glob, keeps the ignore files in force. (Paths are filtered after.)
        argv += [*(a for g in includes for a in ("--type-add", f"{_TYPE}:{g}")), "--type", _TYPE]
    if query.mode is SearchMode.FILES:
        return [*argv, "--files", "--null", "--", query.target]
    if query.ignore_case:
        argv.append("--ignore-case")
    if query.mode is SearchMode.CONTENT:
        argv.append("--json")
        if query.context:
            argv += ["--context", str(query.context)]
    elif query.mode is SearchMode.COUNT:
        argv += ["--count", "--null"]
    else:
        argv += ["--files-with-matches", "--null"]
    return [*argv, "--regexp", query.pattern, "--", query.target]


def fallback_argv(query: Query) -> list[str]:
    return [sys.executable, "-m", "agent_tui.tools.search.fallback", query.to_json()]


def search_argv(query: Query, rg: str | None) -> list[str]:
    """The command line for ``query``: ripgrep's when ``rg`` is given, else the fallback's."""
    return rg_argv(rg, query) if rg is not None else fallback_argv(query)
