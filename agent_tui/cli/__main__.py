"""``python -m agent_tui.cli``: the command line, as the ``agent-tui`` script runs it."""

from agent_tui.cli import run

run()
