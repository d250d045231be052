"""Where the log records of agent-tui and of the libraries it uses go.

``AGENT_TUI_LOG`` sets the level (default WARNING) and ``AGENT_TUI_LOG_FILE`` a file.
Without a file, each entry point says where: the ACP agent logs to stderr (its stdout
carries the protocol); the TUI to ``agent-tui.log`` in the state folder (0600), since
anything written to stderr would land on top of the screen (an SDK's warning, a
``warnings.warn``). Python's warnings are logged the same way.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from agent_tui.paths import private_dir

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(default_file: Path | None = None) -> Path | None:
    """Send every log record (and Python's warnings) to ``AGENT_TUI_LOG_FILE``, else to
    ``default_file``, else to stderr. Returns the file used, if any."""
    level = os.environ.get("AGENT_TUI_LOG", "WARNING").upper()
    explicit = os.environ.get("AGENT_TUI_LOG_FILE")
    target = Path(explicit) if explicit else default_file
    handler: logging.Handler
    if target is None:
        handler = logging.StreamHandler(sys.stderr)
    else:
        try:
            if explicit:
                target.parent.mkdir(parents=True, exist_ok=True)
            else:
                private_dir(target.parent)  # the state folder: 0700
            target.touch(mode=0o600, exist_ok=True)
            handler = logging.FileHandler(target, encoding="utf-8", delay=True)
        except OSError:
            target, handler = None, logging.NullHandler()  # no place to write: say nothing
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level, logging.WARNING))
    logging.captureWarnings(True)
    return target
