"""A marketplace's plugin from a git source, as Claude Code's marketplaces write them:
``url``, ``github`` and ``git-subdir`` (a ``ref`` or ``sha`` pinned), cloned with no
prompt and copied into Claude Code's cache without the clone's ``.git``; a source that
is not supported, or a ref, sha or URL that could read as an option, is a clear
refusal and nothing is installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_tui.cli.plugin_command import plugin_main
from agent_tui.commands.files import load_commands
from agent_tui.plugins.manifest import PluginError
from agent_tui.plugins.sources import fetch, git_url
from tests.plugins_support import home  # noqa: F401  (a fixture: HOME of its own)

KIT = Path(__file__).parent / "plugin_market" / "plugins" / "kit"


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                          text=True)
    return done.stdout.strip()


def _repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository holding the kit plugin at its root and under tools/kit; its first commit."""
    repo = tmp_path / "repo"
    shutil.copytree(KIT, repo, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(KIT, repo / "tools" / "kit", ignore=shutil.ignore_patterns("__pycache__"))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "commands" / "later.md").write_text("Added later.\n")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two")
    return repo, first


def test_git_sources_install_like_a_folder_and_pin_what_they_say(home: Path, tmp_path: Path) -> None:
    repo, first = _repo(tmp_path)
    market = tmp_path / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    url = f"file://{repo}"
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps({
        "name": "remote", "owner": {"name": "t"}, "plugins": [
            {"name": "kit", "source": {"source": "url", "url": url, "sha": first}},
            {"name": "sub", "source": {"source": "git-subdir", "url": url, "path": "tools/kit",
                                       "ref": "main"}},
            {"name": "npmkit", "source": {"source": "npm", "package": "kit"}}]}))
    ask = lambda question: False  # noqa: E731
    assert plugin_main(["marketplace", "add", str(market)], ask=ask) == 0
    assert plugin_main(["install", "kit@remote", "--yes"], ask=ask) == 0
    cache = home / ".claude" / "plugins" / "cache" / "remote"
    (kit,) = (cache / "kit").iterdir()
    assert (kit / ".claude-plugin" / "plugin.json").is_file() and not (kit / ".git").exists()
    assert not (kit / "commands" / "later.md").exists()  # the pinned commit's files
    assert load_commands(tmp_path).find("kit:greet") is not None
    assert plugin_main(["install", "sub@remote", "--yes"], ask=ask) == 0
    (sub,) = (cache / "sub").iterdir()
    assert (sub / "commands" / "greet.md").is_file() and not (sub / "tools").exists()
    assert plugin_main(["install", "npmkit@remote", "--yes"], ask=ask) == 1
    assert not (cache / "npmkit").exists()


@pytest.mark.parametrize("source, why", [
    ({"source": "github", "repo": "--upload-pack=evil"}, "not OWNER/NAME"),
    ({"source": "url", "url": "--upload-pack=touch /tmp/x"}, "not a git URL"),
    ({"source": "url", "url": "file:///x", "ref": "--upload-pack=evil"}, "not a branch"),
    ({"source": "url", "url": "file:///x", "sha": "HEAD; rm"}, "not a commit"),
])
def test_what_could_read_as_an_option_is_refused_before_git_runs(tmp_path: Path, source,
                                                                 why) -> None:
    with pytest.raises(PluginError, match=why):
        fetch(source, tmp_path / "clone")
    assert not (tmp_path / "clone").exists()


def test_a_git_subdir_path_stays_inside_the_clone(tmp_path: Path) -> None:
    repo, _ = _repo(tmp_path)
    with pytest.raises(PluginError, match="not a folder of the repository"):
        fetch({"source": "git-subdir", "url": f"file://{repo}", "path": "../../.."},
              tmp_path / "clone")
    assert git_url({"source": "github", "repo": "acme/kit"}) == "https://github.com/acme/kit.git"
