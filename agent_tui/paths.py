"""Where agent-tui keeps its state: ``$AGENT_TUI_HOME``, else the XDG state dir.

Folders are created 0700; files written there are 0600.
"""

from __future__ import annotations

import os
from pathlib import Path


def state_home() -> Path:
    explicit = os.environ.get("AGENT_TUI_HOME")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "agent-tui"


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) owner-only; tighten it if it already exists."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path
