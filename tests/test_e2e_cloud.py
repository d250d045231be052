"""End to end in a real terminal on a cloud account: the ``agent-tui`` TUI in tmux on
Google Vertex AI (the fake of :mod:`tests.fake_api.vertex`), where one Esc closes the
stream the SDK's Vertex client reads, and the next message goes out with the same
token."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest

from tests.fake_api import Reply
from tests.fake_api.vertex import FakeVertexServer
from tests.tmux_agent import REPO, Tmux, agent_command

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_one_esc_in_the_tui_closes_the_vertex_stream(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    with FakeVertexServer() as srv:
        srv.enqueue(Reply.stall("Streaming from Vertex", seconds=60),
                    Reply.text("The second answer."))
        key = srv.write_service_account(tmp_path / "key.json")
        tmux = Tmux(f"agent-tui-e2e-cloud-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        env = {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5",
               "GOOGLE_APPLICATION_CREDENTIALS": str(key), "NO_GCE_CHECK": "true",
               "ANTHROPIC_VERTEX_BASE_URL": srv.base_url, "AGENT_TUI_HOME": str(tmp_path / "home"),
               "PYTHONPATH": str(REPO), "AGENT_TUI_NOTIFY": "off"}
        tmux.start(agent_command(workspace), env, workspace)
        try:
            tmux.wait_for("Type a message")
            tmux.type("hello")
            tmux.keys("Enter")
            tmux.wait_for("Streaming from Vertex")
            tmux.keys("Escape")
            tmux.wait_for("turn cancelled")
            assert srv.wait_for_disconnect(15)  # the stream's connection was closed
            tmux.type("and now?")
            tmux.keys("Enter")
            tmux.wait_for("The second answer.")
        finally:
            tmux.quit()
        assert len(srv.routes) == 2 and srv.token_requests == 1
        assert srv.errors == []
