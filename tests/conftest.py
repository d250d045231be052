"""What every test shares: a home of its own, and nothing of the machine's settings.

Each test runs with ``HOME`` set to an empty folder of its own and without the
variables that would point the agent (or Claude Code's files it reads) somewhere else:
the ``XDG_*`` folders, ``AGENT_TUI_*``, ``ANTHROPIC_*``, ``CLAUDE_*``. So a test sees
no user settings, state, sessions or ``~/.claude`` of the machine it runs on, and tests
running side by side (``pytest -n``) never share a state folder. A test that wants one
sets it itself (``monkeypatch.setenv``).

The home is made under ``/var/tmp``, not ``/tmp``: a sandboxed command gets a private
``/tmp``, and the sandbox tests expect the home outside it, as it is on a user's machine.
"""

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import pytest  # noqa: E402

from tests.fake_api.fixtures import fake_api  # noqa: E402,F401  (a fixture)

ISOLATED_PREFIXES = ("AGENT_TUI_", "ANTHROPIC_", "CLAUDE_")
ISOLATED_NAMES = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
                  "CLAUDECODE")


@pytest.fixture(scope="session")
def _homes() -> Iterator[Path]:
    base = Path("/var/tmp") if os.path.isdir("/var/tmp") else Path(tempfile.gettempdir())
    root = Path(tempfile.mkdtemp(prefix="agent-tui-test-homes-", dir=base))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def _own_home(_homes: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = Path(tempfile.mkdtemp(prefix="home-", dir=_homes))
    monkeypatch.setenv("HOME", str(home))
    for name in list(os.environ):
        if name.startswith(ISOLATED_PREFIXES) or name in ISOLATED_NAMES:
            monkeypatch.delenv(name)
    return home
