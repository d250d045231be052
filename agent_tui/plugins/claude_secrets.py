"""The sensitive plugin options Claude Code kept, read (never written) so that a user's
plugins work on the first start.

On Linux Claude Code has no keychain: its "secure storage" is the plain file
``~/.claude/.credentials.json`` (``$CLAUDE_CONFIG_DIR/.credentials.json``), written
0600, and a plugin's sensitive values are in it under ``pluginSecrets["PLUGIN@MARKETPLACE"]``
as text (observed in Claude Code 2.1.197's code). The same file holds the user's login:
only ``pluginSecrets`` is read from it, and only when it is the user's own regular
file (no symlink, owned by this user, no access for group or others). Anything else
is a reason, said once by the plugin that misses a value, and nothing is read.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from agent_tui.plugins.records import MAX_BYTES, RecordError

CREDENTIALS = ".credentials.json"


def credentials_path(claude_dir: Path) -> Path:
    return claude_dir / CREDENTIALS


def claude_secrets(claude_dir: Path, plugin_id: str) -> dict[str, Any]:
    """``pluginSecrets[plugin_id]`` of Claude Code's file; raises RecordError (why it
    was not read). An absent file is empty."""
    path = credentials_path(claude_dir)
    try:  # opened first, then checked: what is checked is what is read
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise RecordError(f"{path}: not read: {exc.strerror or exc} (a symlink is not followed)") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            raise RecordError(f"{path}: not a regular file of at most {MAX_BYTES // 1024} KB; not read")
        if info.st_uid != os.getuid():
            raise RecordError(f"{path}: not owned by you; not read")
        if info.st_mode & 0o077:
            raise RecordError(f"{path}: others may read it (mode {stat.S_IMODE(info.st_mode):o}; "
                              "chmod 600 it); not read")
        data = file.read(MAX_BYTES + 1)
    try:
        table = json.loads(data.decode("utf-8")).get("pluginSecrets")
    except (ValueError, AttributeError, RecursionError):
        raise RecordError(f"{path}: not a JSON object; not read") from None
    entry = table.get(plugin_id) if isinstance(table, dict) else None
    return entry if isinstance(entry, dict) else {}
