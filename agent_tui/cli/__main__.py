"""``python -m agent_tui.cli``: the command line, as the ``agent-tui`` script runs it."""

import sys

from agent_tui.cli import main

sys.exit(main())
