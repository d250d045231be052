"""Claude Code's ``~/.claude.json``: the MCP servers it keeps, and its record of the
user's answer about a project's ``.mcp.json`` servers.

Claude Code rewrites this file on every run and keeps much in it that agent-tui does
not use. Only these parts are read (the file is never written, and nothing else in it
is ever named in a notice):

- ``mcpServers`` at the top: the user scope (every project);
- ``projects["<absolute project path>"]``: its ``mcpServers`` (the local scope: this
  project, private) and ``enableAllProjectMcpServers``, ``enabledMcpjsonServers``,
  ``disabledMcpjsonServers`` (which of the project's ``.mcp.json`` servers the user
  approved or rejected).

With ``$CLAUDE_CONFIG_DIR`` set the file is ``$CLAUDE_CONFIG_DIR/.claude.json``
(:func:`agent_tui.paths.claude_state_file`).
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agent_tui.config_file import read_config_text

#: Claude Code keeps history in this file: it grows larger than a settings file.
CLAUDE_JSON_BYTES = 64 << 20

#: The keys of a project's entry that are read (and, for the reload, compared).
_PROJECT_KEYS = ("mcpServers", "enableAllProjectMcpServers", "enabledMcpjsonServers",
                 "disabledMcpjsonServers")


class ProjectApproval(BaseModel):
    """Which of the project's ``.mcp.json`` servers the user approved: all of them
    (``enableAllProjectMcpServers``), those named (``enabledMcpjsonServers``); those in
    ``disabledMcpjsonServers`` never start. Only ever taken from the user's own files."""

    all: bool = False
    enabled: list[str] = Field(default_factory=list)
    disabled: list[str] = Field(default_factory=list)

    def joined(self, other: "ProjectApproval") -> "ProjectApproval":
        """Both answers: approved by either, and rejected by either."""
        return ProjectApproval(
            all=self.all or other.all,
            enabled=list(dict.fromkeys([*self.enabled, *other.enabled])),
            disabled=list(dict.fromkeys([*self.disabled, *other.disabled])))

    @property
    def approves_any(self) -> bool:
        return self.all or bool(self.enabled)

    def allows(self, name: str, *, trusted: bool = False) -> bool:
        """Whether the project's server ``name`` may start (``trusted``: the whole
        project is, as in auto mode; a rejected server still does not start)."""
        if name in self.disabled:
            return False
        return trusted or self.all or name in self.enabled


class ClaudeJson(BaseModel):
    """The parts of the file agent-tui reads (raw server entries: checked by the caller)."""

    path: Path
    user_servers: Any = None  # the top-level mcpServers, as written
    local_servers: Any = None  # this project's mcpServers, as written
    approval: ProjectApproval = Field(default_factory=ProjectApproval)
    problem: str | None = None  # why the file could not be used at all


def read_claude_json(path: Path, workspace: Path) -> ClaudeJson:
    """The file's parts for ``workspace``; a missing file is empty, never an error."""
    data, problem = _load(path)
    if data is None:
        return ClaudeJson(path=path, problem=problem)
    entry = _project_entry(data, workspace)
    return ClaudeJson(path=path, user_servers=data.get("mcpServers"),
                      local_servers=entry.get("mcpServers"), approval=_approval(entry))


def parts_digest(path: Path, workspace: Path) -> str:
    """A digest of only the parts read for ``workspace``: the file changes on every run
    of Claude Code, and a change elsewhere in it is no change here."""
    data, problem = _load(path)
    if data is None:
        parts: Any = {"problem": problem is not None}
    else:
        entry = _project_entry(data, workspace)
        parts = {"user": data.get("mcpServers"), "project": {k: entry.get(k) for k in _PROJECT_KEYS}}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _load(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    try:
        text = read_config_text(path, limit=CLAUDE_JSON_BYTES)
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read: {exc}"
    if not text.strip():
        return None, None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None, ("not valid JSON: its MCP servers (user and local scope) are not "
                      "loaded; the other MCP config files still are")
    if not isinstance(data, dict):
        return None, "expected a JSON object at the top level: its MCP servers are not loaded"
    return data, None


def _project_entry(data: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """This project's entry, keyed by its absolute path (as Claude Code writes it)."""
    projects = data.get("projects")
    if not isinstance(projects, dict):
        return {}
    for key in dict.fromkeys([str(workspace.resolve()), str(workspace.absolute())]):
        entry = projects.get(key)
        if isinstance(entry, dict):
            return entry
    return {}


def _approval(entry: dict[str, Any]) -> ProjectApproval:
    def names(key: str) -> list[str]:
        value = entry.get(key)
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    return ProjectApproval(all=entry.get("enableAllProjectMcpServers") is True,
                           enabled=names("enabledMcpjsonServers"),
                           disabled=names("disabledMcpjsonServers"))


__all__ = ["ClaudeJson", "ProjectApproval", "parts_digest", "read_claude_json"]
