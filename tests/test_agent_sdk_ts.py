"""The TypeScript Claude Agent SDK (npm ``@anthropic-ai/claude-agent-sdk``) drives agent-tui.

``pathToClaudeCodeExecutable`` names agent-tui (a script with the fake API's address);
one ``query()`` runs a command the app's ``canUseTool`` allows, then one it denies.

The package is not fetched here (no network in tests): ``.ci/run`` installs it, pinned in
``.ci/package-lock.json``, into ``.ci/node_modules`` (without the optional native Claude
Code binaries: the app runs agent-tui); ``AGENT_TUI_TS_SDK`` may name another folder
where it was installed. Without it, or without Node, the test is skipped and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fake_api.replies import Reply
from tests.agent_sdk_support import cli_script, mismatches, shape

SDK_FOLDER = os.environ.get("AGENT_TUI_TS_SDK") or str(Path(__file__).resolve().parents[1] / ".ci")
ENTRY = Path(SDK_FOLDER) / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "sdk.mjs"

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed"),
    pytest.mark.skipif(not SDK_FOLDER or not ENTRY.is_file(), reason=(
        "the TypeScript Agent SDK is not installed (.ci/run installs it from the npm "
        "registry; or set AGENT_TUI_TS_SDK to a folder where it was installed)")),
]

APP = """
const { query } = await import(process.env.SDK_ENTRY);
const asked = [];
const messages = [];
const answers = {};
const q = query({ prompt: "run two", options: {
    pathToClaudeCodeExecutable: process.env.CLI, cwd: process.env.WORKSPACE,
    canUseTool: async (name, input) => {
      asked.push([name, input]);
      return input.command.includes("no")
        ? { behavior: "deny", message: "the app says no" }
        : { behavior: "allow", updatedInput: input };
    } } });
for await (const m of q) {
  messages.push(m);
  if (m.type === "system" && m.subtype === "init" && !answers.usage) {
    answers.usage = await q.getContextUsage();
    answers.status = await q.mcpServerStatus();
    answers.rewind = await q.rewindFiles("not-a-message", { dryRun: true }).catch(e => String(e));
  }
}
console.log(JSON.stringify({ asked, messages, answers }));
"""


def test_the_typescript_sdk_runs_a_query_with_its_permission_callback(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch yes.txt && echo yes-from-ts"}),
                     Reply.tool_use("bash", {"command": "echo no > no.txt"}),
                     Reply.text("ts done"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    app = tmp_path / "app.mjs"
    app.write_text(APP)
    env = {**os.environ, "SDK_ENTRY": ENTRY.as_uri(), "WORKSPACE": str(workspace),
           "CLI": str(cli_script(tmp_path, fake_api))}
    ran = subprocess.run(["node", str(app)], env=env, capture_output=True, text=True, timeout=90)
    assert ran.returncode == 0, ran.stderr
    said = json.loads(ran.stdout.strip().splitlines()[-1])
    kinds = [m["type"] for m in said["messages"]]
    assert kinds[0] == "system" and kinds[-1] == "result"
    results = [b for m in said["messages"] if m["type"] == "user"
               for b in m["message"]["content"] if b["type"] == "tool_result"]
    assert [r["is_error"] for r in results] == [False, True]
    assert "yes-from-ts" in results[0]["content"] and "the app says no" in results[1]["content"]
    assert [a[0] for a in said["asked"]] == ["Bash", "Bash"]
    assert not (workspace / "no.txt").exists()
    assert said["messages"][-1]["result"] == "ts done"
    # the session's questions, answered in the TypeScript SDK's types
    answers = said["answers"]
    assert mismatches(answers["usage"], shape("context_usage")) == []
    assert answers["usage"]["maxTokens"] > 0 and answers["status"] == []
    assert "No file checkpoint found for this message" in answers["rewind"]
    assert fake_api.errors == []
