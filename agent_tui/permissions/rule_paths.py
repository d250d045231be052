"""Where a path pattern of a ``Read(...)`` or ``Edit(...)`` rule is rooted, as Claude
Code reads it.

======================  ==============================================  =====================
written                 relative to                                     example
======================  ==============================================  =====================
``//path``              the filesystem's root                           ``Read(//etc/**)``
``~/path``              the home folder                                 ``Read(~/.ssh/**)``
``/path``               the settings file's root: the project for the   ``Edit(/src/**)``
                        project's files and the command line, the
                        folder of the file for the user's own files
``./path``, ``path``    the working directory (the workspace)           ``Read(./.env)``
======================  ==============================================  =====================

The rest is a gitignore-style glob (``globs.py``): a pattern with no ``/`` but a final
one matches at any depth below its root (``Read(.env)``, ``Read(*.pem)``).

Two readings keep an old or a mistaken rule from protecting less than it was meant
to: a rule written with agent-tui's own tool name (``read_file(/etc/**)``) keeps its
old meaning, ``/`` an absolute path; and a *deny* or *ask* rule's ``/path`` matches in
both places, below the settings root and from the filesystem's root.
"""

from __future__ import annotations

import os
from enum import StrEnum

from pydantic import ConfigDict

from agent_tui.protocol.model_base import DeferredModel


class PathRoot(StrEnum):
    CWD = "cwd"  # ./path, path
    FILESYSTEM = "filesystem"  # //path
    HOME = "home"  # ~/path
    SETTINGS = "settings"  # /path


class PathSpec(DeferredModel):
    """A rule's path pattern, split into its root and the glob below it."""

    model_config = ConfigDict(frozen=True)

    root: PathRoot
    pattern: str  # below the root: no leading "/" or "./"
    anchored: bool  # False: a bare name, matched at any depth below the root
    base: str | None = None  # HOME: the home folder; SETTINGS: the file's root (None: project)
    legacy: bool = False  # agent-tui's own tool name: "/path" is absolute, as it always was
    up: int = 0  # leading "../" steps: the pattern is below the root's parent (or above)

    def bases(self, workspace: str, *, broad: bool) -> list[str]:
        """The folders the pattern is tried below (``broad``: for deny and ask rules)."""
        bases = self._bases(workspace, broad=broad)
        if self.up:
            bases = [os.path.normpath(os.path.join(b, *([".."] * self.up))) for b in bases]
        return bases

    def _bases(self, workspace: str, *, broad: bool) -> list[str]:
        match self.root:
            case PathRoot.FILESYSTEM:
                return ["/"]
            case PathRoot.HOME:
                return [self.base or os.path.expanduser("~")]
            case PathRoot.CWD:
                return [workspace]
            case PathRoot.SETTINGS:
                mine = self.base or workspace
                if broad:
                    return [mine, "/"] if mine != "/" else ["/"]
                return ["/"] if self.legacy else [mine]


def parse_path_spec(spec: str, *, settings_root: str | None, legacy: bool) -> PathSpec:
    """Read a path specifier's root and pattern (never fails: every text is a pattern)."""
    text = spec.strip()
    if text.startswith("//"):
        return PathSpec(root=PathRoot.FILESYSTEM, pattern=_below(text[2:])[0], anchored=True)
    if text == "~" or text.startswith("~/"):
        home = os.path.expanduser("~")
        pattern, up = _below(text[1:])
        return PathSpec(root=PathRoot.HOME, pattern=pattern, anchored=True, base=home, up=up)
    if text.startswith("/"):
        pattern, up = _below(text)
        return PathSpec(
            root=PathRoot.SETTINGS, pattern=pattern, anchored=True,
            base=settings_root, legacy=legacy, up=up,
        )
    pattern, up = _below(text)
    body = pattern.rstrip("/")
    anchored = up > 0 or "/" in body  # gitignore: a slash at the start or in the middle
    if not anchored and pattern.endswith("/") and body:
        pattern = "**/" + pattern  # gitignore: "secrets/" is a folder of that name anywhere
    return PathSpec(root=PathRoot.CWD, pattern=pattern, anchored=anchored, up=up)


def _below(text: str) -> tuple[str, int]:
    """The pattern below a root ("" is everything there), without its leading ``./``
    and ``../`` steps, and how many ``../`` steps there were."""
    parts = text.split("/")
    up = 0
    while parts and parts[0] in ("", ".", ".."):
        if parts[0] == "..":
            up += 1
        parts = parts[1:]
    rest = "/".join(parts)
    return (rest if rest.strip("/") else "**"), up
