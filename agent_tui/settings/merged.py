"""What the settings files make together: the merged value of each key with a shape of
its own, and the file being merged into it.

The keys' rows (:mod:`.keys`, :mod:`.policies`) merge each file's values into
:class:`Merged`; :class:`agent_tui.settings.LoadedSettings` is these fields plus the
plain keys (``schema.Keys``).
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from agent_tui.protocol.model_base import DeferredModel
from agent_tui import containment_settings as cs
from agent_tui.permissions import Rule
from agent_tui.protocol import PermissionMode
from agent_tui.settings.claude_json import ProjectApproval


class HooksSource(DeferredModel):
    """One file's ``hooks`` value, as written, and where each part of it is."""

    file: Path
    project: bool  # from the project's file: runs only once the project is trusted
    value: Any
    where: dict[tuple[Any, ...], tuple[int, int]] = Field(default_factory=dict)


class Merged(DeferredModel):
    """The merged value of each key with a shape of its own (one field or more each)."""

    allow: list[Rule] = Field(default_factory=list)
    ask: list[Rule] = Field(default_factory=list)
    deny: list[Rule] = Field(default_factory=list)
    default_mode: PermissionMode | None = None
    # permissions.disableBypassPermissionsMode, from any file (a restriction)
    disable_bypass: str | None = None
    # permissions.additionalDirectories of the user's files, as written (the wiring
    # resolves them against the workspace, as --add-dir): never a project's
    additional_directories: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    # the env of the user's files and --settings only: what the user's hooks get
    user_env: dict[str, str] = Field(default_factory=dict)
    limits: cs.Limits = Field(default_factory=cs.Limits)
    sandbox: cs.Sandbox = Field(default_factory=cs.Sandbox)
    # sandbox.enabled as the user's files and --settings say (a project's file may turn
    # the sandbox on, but only the user makes sandboxed commands run unasked)
    user_sandbox: bool = False
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    # providers entries (as written, each checked): the user's files and --settings only
    providers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    hooks: list[HooksSource] = Field(default_factory=list)  # each file's, in load order
    web_fetch_allow_private: bool = False
    web_search_enabled: bool = False  # webSearch.enabled: offer the web_search tool
    # the file each plain key's value came from, by field name
    sources: dict[str, Path] = Field(default_factory=dict)
    # which of the project's .mcp.json servers the user approved (their files only)
    mcpjson: ProjectApproval = Field(default_factory=ProjectApproval)

    @field_validator("allow", "ask", "deny", mode="before")
    @classmethod
    def _rules(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [Rule.parse(v) if isinstance(v, str) else v for v in value]
        return value


@dataclass(frozen=True)
class Source:
    """The file being merged."""

    path: Path
    project: bool  # one of the project's files (trusted or not)
    # the folder its ``/path`` rules are relative to (None: the project root)
    settings_root: str | None = None
    claude_file: bool = False  # one of Claude Code's: its defaultMode words are Claude Code's
    # (line, column) of each part of its ``hooks``, by the path below the ``hooks`` key
    hooks_where: dict[tuple[Any, ...], tuple[int, int]] = field(default_factory=dict)
