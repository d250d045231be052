"""The MCP servers the user turned off (``/mcp``, disable), per project: they are
not started, in this session or the next, until enabled again. Kept in one
owner-only JSON file in the state folder: ``{"<workspace>": ["name", ...]}``."""

from __future__ import annotations

import json
from pathlib import Path

from agent_tui.atomic import write_atomic
from agent_tui.paths import private_dir

FILE = "mcp-disabled.json"


class DisabledServers:
    def __init__(self, path: Path, workspace: Path) -> None:
        self.path = path
        self.key = str(Path(workspace).resolve())

    def _read(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: [n for n in v if isinstance(n, str)] for k, v in data.items()
                if isinstance(v, list)} if isinstance(data, dict) else {}

    def names(self) -> set[str]:
        return set(self._read().get(self.key, []))

    def set(self, name: str, disabled: bool) -> None:
        data = self._read()
        names = set(data.get(self.key, []))
        names = names | {name} if disabled else names - {name}
        if names:
            data[self.key] = sorted(names)
        else:
            data.pop(self.key, None)
        private_dir(self.path.parent)
        write_atomic(self.path.parent, self.path.name, json.dumps(data, indent=1).encode(), mode=0o600)


__all__ = ["FILE", "DisabledServers"]
