"""Custom commands: Markdown files that are prompts, in Claude Code's format.

Shared by every front end (the TUI's menu, print mode's ``-p "/name args"``), so it
stands below them: ``line`` (what a command line is), ``files`` (where the files are,
what each says, read with ``agent_tui.frontmatter``'s lenient reading, the name each
is typed as), ``expand`` (the
arguments, the ``!`cmd``` steps, the ``@path`` mentions), ``allowed`` (the policy of a
command's turn, from its ``allowed-tools``) and ``prepare`` (one use, ready for the
session: ``core/commands/command_run.py`` runs it).
"""
