"""Workspace trust: whether a folder's own files may grant anything.

A cloned repository is not trusted by being opened. Until the user says so, a
project's settings files can only take away: their deny and ask rules apply and their
hooks run (guards always run), while what would grant (allow rules, ``env``,
``sandbox``, ``defaultMode``, ``additionalDirectories``, ``providers``, ``apiKeyHelper``, MCP
approvals, ``statusLine``) is ignored and named in a notice (``settings/__init__``).

A folder is trusted (:func:`decide`) when:

- the command line says so (``--trust``: this run only);
- agent-tui's own record holds it: ``trusted-folders.json`` in the state folder,
  owner-only, one entry per absolute path, written when the user answers yes in the
  TUI's dialog (:func:`remember`);
- Claude Code's record does: ``~/.claude.json`` ``projects[<abs path>]
  .hasTrustDialogAccepted: true``.

A folder with none of the files that would change what runs (:func:`project_files`)
needs no answer: nothing of its own is there to trust.

Trust is per folder, never inherited by a subfolder: the record is keyed by the exact
resolved path, as Claude Code's is.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import json
import time
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field

from agent_tui.atomic import write_atomic
from agent_tui.paths import claude_state_file, private_dir
from agent_tui.config_file import read_config_text
from agent_tui.settings.claude_json import CLAUDE_JSON_BYTES

RECORD_FILE = "trusted-folders.json"

#: A project's files and folders whose presence would change what runs (the trust
#: dialog is shown only when one is there).
PROJECT_PATHS = (".claude", ".agent-tui", ".mcp.json", "CLAUDE.md")


class TrustSource(StrEnum):
    """Why a folder is (or is not) trusted."""

    FLAG = "--trust"
    RECORD = "agent-tui's record"
    CLAUDE_CODE = "Claude Code's record (~/.claude.json)"
    NOTHING_TO_TRUST = "nothing of the project's own to trust"
    UNTRUSTED = "untrusted"


class Trust(BaseModel):
    workspace: Path
    source: TrustSource
    project: list[Path] = Field(default_factory=list)  # what of its own the folder holds

    @property
    def trusted(self) -> bool:
        return self.source is not TrustSource.UNTRUSTED

    @property
    def needs_answer(self) -> bool:
        """Whether the TUI should ask (untrusted, and something of its own is there)."""
        return not self.trusted


def project_files(workspace: Path) -> list[Path]:
    """The project's own configuration the folder holds (lstat: a dangling link counts)."""
    found = []
    for name in PROJECT_PATHS:
        path = workspace / name
        try:
            path.lstat()
        except OSError:
            continue
        found.append(path)
    return found


def decide(
    workspace: Path, *, flag: bool, state: Path, claude_json: Path | None = None,
) -> Trust:
    """Whether ``workspace`` is trusted, and by what (the first source that says yes)."""
    folder = _key(workspace)
    found = project_files(Path(folder))
    if flag:
        return Trust(workspace=Path(folder), source=TrustSource.FLAG, project=found)
    if folder in _own_record(state):
        return Trust(workspace=Path(folder), source=TrustSource.RECORD, project=found)
    if _claude_code_trusts(claude_json or claude_state_file(), folder):
        return Trust(workspace=Path(folder), source=TrustSource.CLAUDE_CODE, project=found)
    if not found:
        return Trust(workspace=Path(folder), source=TrustSource.NOTHING_TO_TRUST)
    return Trust(workspace=Path(folder), source=TrustSource.UNTRUSTED, project=found)


def remember(workspace: Path, state: Path) -> None:
    """Record the user's yes for ``workspace`` (owner-only file in ``state``)."""
    folders = _own_record(state)
    folders[_key(workspace)] = {"trustedAt": int(time.time())}
    data = json.dumps({"folders": folders}, indent=2, sort_keys=True).encode() + b"\n"
    write_atomic(private_dir(state), RECORD_FILE, data, mode=0o600, exact_mode=True)


def _key(workspace: Path) -> str:
    return str(Path(workspace).resolve())


def _own_record(state: Path) -> dict[str, object]:
    try:
        data = json.loads(read_config_text(state / RECORD_FILE))
    except (OSError, ValueError, RecursionError):
        return {}  # absent or broken: nothing is trusted (the next yes rewrites it)
    folders = data.get("folders") if isinstance(data, dict) else None
    return dict(folders) if isinstance(folders, dict) else {}


def _claude_code_trusts(path: Path, folder: str) -> bool:
    try:
        data = json.loads(read_config_text(path, limit=CLAUDE_JSON_BYTES))
    except (OSError, ValueError, RecursionError):
        return False
    projects = data.get("projects") if isinstance(data, dict) else None
    entry = projects.get(folder) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True
