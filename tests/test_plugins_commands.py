"""A plugin command's ``${user_config.KEY}`` (and ``${CLAUDE_PLUGIN_ROOT}``): the
prompt gets a plain value's text as in Claude Code, never a sensitive one; a ``!``
line gets the value as a variable of its environment (a real shell runs it: a quote
or ``$(...)`` in the value is never parsed), and a sensitive or unset option in a
``!`` line keeps the whole command from running, said, with nothing sent."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_tui.commands.files import load_commands
from agent_tui.commands.prepare import prepare
from agent_tui.tools.bash import BashTool
from tests.fake_api import Reply
from tests.harness import provider_for, start_session
from tests.plugins_support import home, inline_plugin  # noqa: F401

HOSTILE = "eu'; touch pwned-quote; echo '$(touch pwned-subst)`touch pwned-tick`"


@pytest.fixture
def kit(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "state"))
    yield from inline_plugin(tmp_path, "kit", {
        "commands/deploy.md":
            "Deploy to ${user_config.region} with ${user_config.api_key} (${user_config.nope}), "
            "tools in ${CLAUDE_PLUGIN_ROOT}, state in ${CLAUDE_PLUGIN_DATA}.\n"
            "Said: !`printf '%s|%s' \"${user_config.region}\" \"${CLAUDE_PLUGIN_ROOT}\"`\n",
        "commands/leak.md": "Key: !`echo ${user_config.api_key} > leaked`\n",
        "commands/unset.md": "Retries: !`echo ${user_config.retries}`\n",
    }, {"region": HOSTILE, "api_key": "s3cret"})


def test_the_prompt_gets_plain_values_and_a_line_gets_variables(kit: Path, tmp_path: Path) -> None:
    command = load_commands(tmp_path).find("kit:deploy")
    assert command is not None
    run, _said = prepare(command, "", workspace=tmp_path)
    [step] = run.steps
    assert step.command == ("printf '%s|%s' \"${CLAUDE_PLUGIN_OPTION_REGION}\" "
                            "\"${CLAUDE_PLUGIN_ROOT}\"")
    assert step.env == {"CLAUDE_PLUGIN_OPTION_REGION": HOSTILE, "CLAUDE_PLUGIN_ROOT": str(kit)}
    data = Path(os.environ["HOME"]) / ".claude" / "plugins" / "data" / "kit-inline"
    assert not step.refused
    assert run.compose(["OUT"]) == (
        f"Deploy to {HOSTILE} with [sensitive option 'api_key' not available here] "
        f"(${{user_config.nope}}), tools in {kit}, state in {data}.\nSaid: OUT")
    assert data.is_dir()


@pytest.mark.asyncio
async def test_a_real_shell_expands_the_value_and_never_parses_it(kit: Path, tmp_path: Path,
                                                                   fake_api) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    fake_api.enqueue(Reply.text("deployed"))
    running = start_session(provider_for(fake_api), [BashTool(grace=0.5)], ws)
    commands = load_commands(ws)
    for name in ("kit:deploy", "kit:leak", "kit:unset"):
        command = commands.find(name)
        assert command is not None
        running.session.run_command(prepare(command, "", workspace=ws)[0])
        await running.idle()
    [sent] = [e.text for e in running.rec.of("turn_started")]
    assert sent.endswith(f"Said: {HOSTILE}|{kit}")
    assert not list(ws.glob("pwned*")) and not list(tmp_path.glob("pwned*"))
    notices = [n.text for n in running.rec.of("notice")]
    assert any("/kit:leak not run, nothing was sent" in n and "the sensitive option api_key "
               "of plugin kit@inline never goes into a command's shell line" in n for n in notices)
    assert any("/kit:unset not run" in n and "option retries has no value" in n
               and "agent-tui plugin config kit@inline" in n for n in notices)
    assert not (ws / "leaked").exists() and len(fake_api.requests) == 1
    assert "s3cret" not in json.dumps(fake_api.requests)
    await running.close()


def test_the_review_shows_a_line_naming_a_sensitive_option_as_refused(kit: Path) -> None:
    from agent_tui.plugins.manifest import read_plugin
    from agent_tui.plugins.review import review

    lines = review(read_plugin(kit))
    assert "  /kit:leak runs: echo ${user_config.api_key} > leaked  [refused, never run: names " \
           "the sensitive option api_key]" in lines
    assert "  /kit:unset runs: echo ${user_config.retries}" in lines
