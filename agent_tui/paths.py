"""Where agent-tui keeps its state: ``$AGENT_TUI_HOME``, else the XDG state dir.

Folders are created 0700; files written there are 0600.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def state_home() -> Path:
    explicit = os.environ.get("AGENT_TUI_HOME")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "agent-tui"


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) owner-only; tighten it if it already exists.

    Missing parents are made 0700 too (``mkdir(parents=True)`` would give them the
    umask's 0755); parents that exist are left as they are.
    """
    missing = []
    parent = path
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def folder_bytes(folder: Path) -> int:
    """Bytes the files under ``folder`` take (links not followed; vanished files skipped)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/agent-tui``, else ``~/.config/agent-tui``."""
    xdg = (os.environ if environ is None else environ).get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "agent-tui"


def settings_files(workspace: Path, *, user_dir: Path | None = None) -> list[Path]:
    """The settings files, in merge order: the user's, then the project's."""
    user = user_dir if user_dir is not None else user_config_dir()
    return [user / "settings.json", Path(workspace) / ".agent-tui" / "settings.json"]
