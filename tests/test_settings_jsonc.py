"""A settings file that is JSON but for comments and trailing commas is read, with a
warning that names the first of them: its deny rules and hooks are not lost for a
comma (Claude Code ignores such a file whole). Anything else that is not JSON is still
refused with its file, line and column."""

from __future__ import annotations

import json
from pathlib import Path

from agent_tui.settings import load_settings
from agent_tui.settings.jsonc import relax
from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.print_agent import env_for, events_of

COMMENTED = '''{
  // never let the agent delete or push
  "permissions": {
    "deny": [
      "Bash(rm:*)",
      "Bash(git push:*)", /* pushing is mine */
    ],
  },
  "theme": "light",
}
'''


def test_comments_and_trailing_commas_are_read_and_the_first_is_named(tmp_path: Path) -> None:
    user_dir = tmp_path / "config" / "agent-tui"
    user_dir.mkdir(parents=True)
    path = user_dir / "settings.json"
    path.write_text(COMMENTED)
    loaded = load_settings(tmp_path / "ws", user_dir=user_dir, trusted=True)
    assert [r.text for r in loaded.deny] == ["Bash(rm:*)", "Bash(git push:*)"]
    assert loaded.theme == "light" and loaded.files == [path]
    [problem] = loaded.problems
    assert problem.startswith(f"{path}:2:3: not strict JSON (2 comments and 3 trailing commas)")
    assert "Claude Code ignores the whole file" in problem


def test_a_rule_s_later_problem_keeps_its_true_line_and_column(tmp_path: Path) -> None:
    user_dir = tmp_path / "u"
    user_dir.mkdir()
    (user_dir / "settings.json").write_text(
        '{\n  // a note\n  "permissions": {"deny": ["Bsah(ls)",]}\n}\n')
    problems = load_settings(tmp_path / "ws", user_dir=user_dir, trusted=True).problems
    assert len(problems) == 2
    assert ":3:28: " in problems[1] and "Bsah" in problems[1]


def test_what_is_not_json_with_comments_either_is_still_refused_at_its_place(tmp_path: Path) -> None:
    user_dir = tmp_path / "u"
    user_dir.mkdir()
    path = user_dir / "settings.json"
    path.write_text('{\n  // a note\n  "theme": "light"\n  "model": "x"\n}\n')
    loaded = load_settings(tmp_path / "ws", user_dir=user_dir, trusted=True)
    assert loaded.files == [] and loaded.theme is None
    [problem] = loaded.problems
    assert problem.startswith(f"{path}:4:3: invalid JSON: Expecting ',' delimiter")


def test_strings_that_look_like_comments_or_commas_are_left_alone() -> None:
    text = '{"a": "x // y", "b": "/* z */", "c": "p,]", "d": "q\\",}"}'
    relaxed = relax(text)
    assert not relaxed.changed and relaxed.text == text
    assert json.loads(relaxed.text)["d"] == 'q",}'


def test_print_mode_keeps_a_commented_file_s_deny_rule(fake_api, tmp_path: Path) -> None:
    home, ws = tmp_path / "h", tmp_path / "ws"
    (home / ".claude").mkdir(parents=True)
    ws.mkdir()
    (home / ".claude" / "settings.json").write_text(COMMENTED)
    marker = ws / "deleted-everything"
    fake_api.enqueue(Reply.tool_use("bash", {"command": f"rm -f nothing; touch {marker}"}),
                     Reply.text("could not"))
    out = run_agent(
        ["-p", "clean up", "--output-format", "json", "--permission-mode", "auto",
         "--cwd", str(ws)],
        env=env_for(tmp_path, ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=fake_api.url,
                    HOME=str(home), XDG_CONFIG_HOME=str(tmp_path / "xdg")), timeout=90)
    assert out.returncode == 0, out.stderr
    [result] = events_of(out.stdout)
    assert not marker.exists()
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]
    assert "not strict JSON" in out.stderr


def test_claude_code_s_sandbox_network_object_is_named_and_the_network_stays_denied(
        tmp_path: Path) -> None:
    user_dir = tmp_path / "u"
    user_dir.mkdir()
    (user_dir / "settings.json").write_text(json.dumps({"sandbox": {
        "enabled": True, "network": {"allowedDomains": ["github.com"], "allowLocalBinding": True},
    }}, indent=2))
    loaded = load_settings(tmp_path / "ws", user_dir=user_dir, trusted=True)
    [problem] = loaded.problems
    assert ":4:5: sandbox.network: Claude Code's network object (allowLocalBinding, " \
           "allowedDomains) is not supported" in problem
    assert loaded.sandbox.enabled and loaded.sandbox.network.value == "deny"
