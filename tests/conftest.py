"""What every test shares: a home of its own, and nothing of the machine's settings.

Each test runs with ``HOME`` set to an empty folder of its own and without the
variables that would point the agent (or Claude Code's files it reads) somewhere else:
the ``XDG_*`` folders, ``AGENT_TUI_*``, ``ANTHROPIC_*``, ``CLAUDE_*``. So a test sees
no user settings, state, sessions or ``~/.claude`` of the machine it runs on, and tests
running side by side (``pytest -n``) never share a state folder. A test that wants one
sets it itself (``monkeypatch.setenv``).

The fixtures several test files use live here too (helpers that are not fixtures live
in tests/harness.py and the other modules under tests/ whose names do not start with
``test_``): ``fake_api``, ``agent`` (the TUI in tmux against the fake API) and
``make_manager`` (MCP managers, shut down after the test). A test file never imports
another one.

The home is made under ``/var/tmp``, not ``/tmp``: a sandboxed command gets a private
``/tmp``, and the sandbox tests expect the home outside it, as it is on a user's machine.
"""

import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import pytest  # noqa: E402
import pytest_asyncio  # noqa: E402

from agent_tui.core.calls.tool import ToolSet  # noqa: E402
from agent_tui.tools import know_the_tools  # noqa: E402
from agent_tui.mcp import McpManager, ServerConfig  # noqa: E402
from tests.fake_api import FakeAnthropicServer  # noqa: E402
from tests.fake_api.fixtures import fake_api  # noqa: E402,F401  (a fixture)
from tests.tmux_agent import REPO, Tmux, agent_command  # noqa: E402

know_the_tools()  # as the entry point does (agent_tui/cli)

ISOLATED_PREFIXES = ("AGENT_TUI_", "ANTHROPIC_", "CLAUDE_", "OPENAI_")
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


@pytest.fixture
def agent(fake_api: FakeAnthropicServer, tmp_path: Path) -> Iterator[tuple[Tmux, Path]]:
    """The TUI in its own tmux server, against the fake API, once its first frame shows;
    yields the tmux and the workspace. The test file skips without tmux (``needs_tmux``)."""
    workspace = tmp_path / "work"
    workspace.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    tmux = Tmux(f"agent-tui-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    env = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.url,
        "AGENT_TUI_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "AGENT_TUI_NOTIFY": "off",  # no bell from the tests
    }
    tmux.start(agent_command(workspace), env, workspace)
    try:
        tmux.wait_for("Type a message")  # the first frame, input placeholder shown
        yield tmux, workspace
    finally:
        tmux.quit()


@pytest_asyncio.fixture
async def make_manager(tmp_path: Path) -> AsyncIterator[Any]:
    """Makes started MCP managers (attached to a fresh ToolSet); shuts them all down."""
    made: list[McpManager] = []

    async def make(*configs: ServerConfig, **options: Any) -> tuple[McpManager, ToolSet]:
        options.setdefault("start_timeout_s", 60.0)
        manager = McpManager(list(configs), workspace=tmp_path, log_dir=tmp_path / "logs", **options)
        made.append(manager)
        tools = ToolSet()
        manager.attach(tools)
        manager.start()
        await manager.wait_started(60.0)
        return manager, tools

    yield make
    for manager in made:
        await manager.shutdown()


#: The files that take longest (agent processes, servers, terminals), run first: a worker
#: takes a whole file (``--dist loadfile``), so a long one taken last keeps the run going
#: on one core while the other has nothing left. Measured with ``--durations=0``; a file
#: missing here only runs in its usual place.
LONGEST_FIRST = (
    "test_chaos.py", "test_bench_smoke.py", "test_agent_sdk.py", "test_scripts_doc.py",
    "test_print_mode.py", "test_chaos_concurrent.py", "test_agent_sdk_examples.py",
    "test_mcp_oauth.py", "test_print_mcp_offers.py", "test_ui_mcp.py", "test_mcp.py",
    "test_ui_snapshots_daily.py", "test_mcp_reload.py", "test_ui_mcp_view.py",
    "test_ui_transcript.py", "test_print_flags.py", "test_ui_app.py", "test_fuzz_stream.py",
    "test_fuzz_journal.py", "test_approval_tmux.py", "test_acp_mcp.py", "test_trust.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: in order within
