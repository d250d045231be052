"""Where a marketplace's plugin comes from when it is not a folder of the marketplace:
Claude Code's git sources, fetched into a scratch folder for ``install.py`` to copy.

- ``{"source": "github", "repo": "OWNER/NAME"}`` clones ``https://github.com/OWNER/NAME.git``;
- ``{"source": "url", "url": "https://...git"}`` (or ``git@``, ``ssh://``, ``file://``)
  clones that repository;
- ``{"source": "git-subdir", "url": ..., "path": "tools/plugin"}`` clones it and takes the
  folder inside (never outside the clone);
- each may pin ``"ref"`` (a branch or tag) or ``"sha"`` (a commit).

The clone runs with no prompt, no hooks of the repository (a clone brings none), bounded
in time; a URL, ref or sha that could read as an option is refused. ``npm``, ``archive``
and ``command`` sources are named as not supported, never tried.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

from agent_tui.plugins.manifest import PluginError

GIT_TIMEOUT_S = 120.0
_OWNER_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_REF = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./-]*")
_SHA = re.compile(r"[0-9a-fA-F]{7,64}")
GIT_SCHEMES = ("https://", "http://", "git@", "ssh://", "file://")


def is_git_source(source: Any) -> bool:
    return isinstance(source, dict) and source.get("source") in ("github", "url", "git-subdir")


def git_url(source: dict[str, Any]) -> str:
    """The repository a git source names; raises PluginError."""
    kind = source.get("source")
    if kind == "github":
        repo = source.get("repo")
        if not isinstance(repo, str) or not _OWNER_REPO.fullmatch(repo):
            raise PluginError(f"github source: repo {repo!r} is not OWNER/NAME")
        return f"https://github.com/{repo}.git"
    url = source.get("url")
    if isinstance(url, str) and kind == "git-subdir" and _OWNER_REPO.fullmatch(url):
        return f"https://github.com/{url}.git"  # Claude Code's shorthand there
    if not isinstance(url, str) or not url.startswith(GIT_SCHEMES):
        raise PluginError(f"{kind} source: url {url!r} is not a git URL (https://, git@, "
                          "ssh:// or file://)")
    return url


def fetch(source: dict[str, Any], into: Path) -> Path:
    """Clone the source into ``into``; the plugin's folder in it. Raises PluginError."""
    url = git_url(source)
    ref, sha = source.get("ref"), source.get("sha")
    if ref is not None and (not isinstance(ref, str) or not _REF.fullmatch(ref)):
        raise PluginError(f"ref {ref!r} is not a branch or tag name")
    if sha is not None and (not isinstance(sha, str) or not _SHA.fullmatch(sha)):
        raise PluginError(f"sha {sha!r} is not a commit id")
    args = ["clone", "--quiet"] + (["--depth", "1"] if sha is None else [])
    args += ["--branch", ref] if ref else []
    git([*args, "--", url, str(into)], url)
    if sha is not None:
        git(["-C", str(into), "checkout", "--quiet", "--detach", sha], url)
    folder = into
    if source.get("source") == "git-subdir":
        sub = source.get("path")
        if not isinstance(sub, str) or not sub.strip():
            raise PluginError("git-subdir source: path is missing")
        folder = (into / sub).resolve()
        if not folder.is_relative_to(into.resolve()) or not folder.is_dir():
            raise PluginError(f"git-subdir source: {sub} is not a folder of the repository")
    return folder


def git(args: list[str], url: str) -> None:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, env=env,
                              timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PluginError(f"git {args[0]} {url}: {exc}") from None
    if done.returncode != 0:
        raise PluginError(f"git {args[0]} {url} failed: {done.stderr.strip()[-500:]}")
