"""The rules through the real agent: print mode, the fake API playing a hostile model
that hides a command behind an allowed one and reads a denied file through the shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.hooks_support import tool_results
from tests.print_agent import env_for


def test_a_hostile_model_cannot_walk_around_the_rules_in_print_mode(fake_api: Any,
                                                                   tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("SECRET=hunter2\n")
    (ws / "notes.txt").write_text("plain notes\n")
    fake_api.enqueue(
        Reply.tool_uses([
            ("bash", {"command": "ls #'\ntouch PWNED\n#'"}, "toolu_hidden"),
            ("bash", {"command": "ls r''m; touch PWNED2"}, "toolu_joined"),
            ("bash", {"command": "cat notes.txt | base64 -d 2>/dev/null; cat \".env\""},
             "toolu_secret"),
            ("bash", {"command": "ls -a"}, "toolu_ls"),
        ]),
        Reply.text("done"))
    home = tmp_path / "home"
    home.mkdir()
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    out = run_agent(["--cwd", str(ws), "-p", "look around", "--output-format", "json",
                     "--allowedTools", "Bash(ls:*)", "--disallowedTools", "Read(./.env)"],
                    env=env, timeout=90)
    assert out.returncode == 0, out.stderr
    assert not (ws / "PWNED").exists() and not (ws / "PWNED2").exists()
    told = {b["tool_use_id"]: json.dumps(b["content"]) for b in
            tool_results(fake_api.requests[-1])}
    assert "there is no one to ask" in told["toolu_hidden"]
    assert "no one to ask" in told["toolu_joined"]
    assert "denied by rule Read(./.env)" in told["toolu_secret"]
    assert "hunter2" not in json.dumps(told)
    assert "notes.txt" in told["toolu_ls"]  # what the rule allows still runs
    denials = {d["tool_use_id"] for d in json.loads(out.stdout)["permission_denials"]}
    assert denials == {"toolu_hidden", "toolu_joined", "toolu_secret"}
