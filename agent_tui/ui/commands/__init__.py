"""Slash commands: ``/`` at the start of the input.

``registry`` (what a command is, how a line is parsed, filtering and the nearest name),
``custom`` (Markdown prompt files, Claude Code's format), ``builtin`` (the commands the
TUI itself runs). A slash command is never sent to the model as a message: a custom
one becomes the prompt it holds.
"""
