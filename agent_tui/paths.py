"""Where agent-tui keeps its state: ``$AGENT_TUI_HOME``, else the XDG state dir.

Folders are created 0700; files written there are 0600.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


#: ``--setting-sources`` (Claude Code's): the places read, of ``user``, ``project`` and
#: ``local``; None reads them all (:func:`use_setting_sources`).
_SOURCES: frozenset[str] | None = None


def use_setting_sources(sources: frozenset[str] | None) -> None:
    """Read only these sources' memory files, sub-agents, skills and commands, from now
    on in this process (the settings files are chosen by ``settings.load_settings``)."""
    global _SOURCES
    _SOURCES = sources


def source_read(source: str) -> bool:
    """Whether the files of ``source`` (``user``, ``project``, ``local``) are read."""
    return _SOURCES is None or source in _SOURCES


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


def claude_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Claude Code's own folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    explicit = (os.environ if environ is None else environ).get("CLAUDE_CONFIG_DIR")
    return Path(explicit).expanduser() if explicit else Path.home() / ".claude"


def claude_state_file(environ: Mapping[str, str] | None = None) -> Path:
    """Claude Code's ``.claude.json`` (its MCP servers of the user and local scopes, its
    record of the projects): in ``$CLAUDE_CONFIG_DIR`` when that is set, else
    ``~/.claude.json`` (beside the folder, not in it)."""
    explicit = (os.environ if environ is None else environ).get("CLAUDE_CONFIG_DIR")
    return (Path(explicit).expanduser() if explicit else Path.home()) / ".claude.json"


def project_settings_files(workspace: Path) -> list[Path]:
    """The project's settings files, in merge order (lowest first)."""
    root = Path(workspace)
    return [
        root / ".claude" / "settings.json",
        root / ".agent-tui" / "settings.json",
        root / ".claude" / "settings.local.json",
    ]


def settings_files(
    workspace: Path, *, user_dir: Path | None = None, claude_dir: Path | None = None
) -> list[Path]:
    """The settings files, in merge order (lowest first): Claude Code's user file, the
    user's agent-tui file, then the project's (:func:`project_settings_files`)."""
    user = user_dir if user_dir is not None else user_config_dir()
    claude = claude_dir if claude_dir is not None else claude_config_dir()
    return [claude / "settings.json", user / "settings.json", *project_settings_files(workspace)]
