"""Slash commands: ``/`` at the start of the input.

``registry`` (what a command is, filtering and the nearest name; a line is parsed by
``agent_tui.commands.line``), ``custom`` (the Markdown commands ``agent_tui/commands/``
reads, as menu items), ``builtin`` (the commands the TUI itself runs). A slash command
is never sent to the model as a message: a custom one becomes the prompt it holds
(after its ``!`` lines, when it has some).
"""
