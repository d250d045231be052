"""A plugin hook's ``${user_config.KEY}`` in its shell command, as Claude Code's plugins
write it: the command reads ``$CLAUDE_PLUGIN_OPTION_KEY`` from its environment in the
placeholder's place (in single quotes, double quotes or none), so a value holding
quotes, ``$(...)`` and backticks is printed and never run (a real bash runs the
hooks); a sensitive value reaches the command the same way and never its text, its
status message, the problems or the review; an unset or undeclared option keeps that
hook from loading, said by name, and the plugin's other hooks load. The hooks get the
plugin's folders as Claude Code gives them (``CLAUDE_PLUGIN_ROOT``, ``CLAUDE_PLUGIN_DATA``)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_tui.cancel import CancelScope
from agent_tui.core.services.hooks_port import HookBase
from agent_tui.hooks.commands import CommandHooks
from agent_tui.hooks.config import load_hooks
from agent_tui.plugins import enabled_plugins
from agent_tui.plugins.manifest import read_plugin
from agent_tui.plugins.review import review
from agent_tui.plugins.shell_vars import as_variables
from agent_tui.protocol.states import HookEvent
from agent_tui.settings import load_settings
from tests.plugins_support import home, inline_plugin  # noqa: F401

HOSTILE = "eu'; touch pwned-quote; echo \"$(touch pwned-subst)`touch pwned-tick`"
SECRET = "s3'c\"r$(touch pwned-secret)`touch pwned-secret-tick`"
HOOKS = [
    ("single", "printf '%s\\n' 'at: ${user_config.region}' > \"$OUT.single\""),
    ("double", "printf '%s\\n' \"at: ${user_config.region}\" > \"$OUT.double\""),
    ("bare", "printf '<%s>' ${user_config.region} > \"$OUT.bare\""),
    ("secret", "printf '%s' \"${user_config.api_key}\" > \"$OUT.secret\""),
    ("unset", "echo ${user_config.retries} > \"$OUT.unset\""),
    ("undeclared", "echo ${user_config.nope} > \"$OUT.undeclared\""),
    ("folders", "printf '%s|%s|%s' \"$CLAUDE_PLUGIN_ROOT\" \"$CLAUDE_PLUGIN_DATA\" "
                "${CLAUDE_PLUGIN_DATA} > \"$OUT.folders\""),
]


@pytest.fixture
def hooked(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "state"))
    hooks = [{"type": "command", "command": command,
              **({"statusMessage": "using ${user_config.api_key}"} if name == "secret" else {})}
             for name, command in HOOKS]
    yield from inline_plugin(tmp_path, "hooked", {"hooks/hooks.json": json.dumps(
        {"hooks": {"UserPromptSubmit": [{"hooks": hooks}]}})}, {"region": HOSTILE, "api_key": SECRET})


def test_a_hook_reads_its_options_from_its_environment_and_runs_nothing_of_them(
        hooked: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    problems = enabled_plugins().problems
    loaded = load_hooks(load_settings(ws)).commands
    assert len(loaded) == 5
    secret = next(h for h in loaded if "secret" in h.command)
    assert secret.command == "printf '%s' \"${CLAUDE_PLUGIN_OPTION_API_KEY}\" > \"$OUT.secret\""
    assert secret.env["CLAUDE_PLUGIN_OPTION_API_KEY"] == SECRET
    # the secret is in no command's text, no status message and no problem
    assert "s3'c" not in json.dumps([h.model_dump(mode="json", exclude={"env"}) for h in loaded])
    assert "s3'c" not in json.dumps(problems)
    assert [p for p in problems if "hook" in p] == [
        "plugin hooked@inline: a UserPromptSubmit hook names ${user_config.retries}, which has no "
        "value (not loaded; set them with /plugin config hooked@inline in the TUI or: "
        "agent-tui plugin config hooked@inline)",
        "plugin hooked@inline: a UserPromptSubmit hook names ${user_config.nope}, which is not "
        "one of its options (its userConfig; not loaded)"]

    out = tmp_path / "out"
    hooks = CommandHooks(loaded, workspace=ws, env={"OUT": str(out)})
    asyncio.run(hooks.fire(HookEvent.USER_PROMPT_SUBMIT, HookBase(session_id="s", cwd=str(ws)),
                           CancelScope(), {"prompt": "hi"}))
    assert Path(f"{out}.single").read_text() == f"at: {HOSTILE}\n"
    assert Path(f"{out}.double").read_text() == f"at: {HOSTILE}\n"
    # unquoted, the value is split into words as Claude Code's text would be, never run
    assert Path(f"{out}.bare").read_text() == "".join(f"<{w}>" for w in HOSTILE.split())
    assert Path(f"{out}.secret").read_text() == SECRET
    assert not Path(f"{out}.unset").exists() and not Path(f"{out}.undeclared").exists()
    # its folders, in its environment and its text, as Claude Code gives them
    data = Path(os.environ["HOME"]) / ".claude" / "plugins" / "data" / "hooked-inline"
    assert Path(f"{out}.folders").read_text() == f"{hooked}|{data}|{data}"
    assert not list(ws.glob("pwned*")) and not list(tmp_path.glob("pwned*"))


def test_the_review_says_how_a_hook_gets_its_options_and_never_a_value(hooked: Path) -> None:
    lines = review(read_plugin(hooked))
    said = "\n".join(lines)
    assert "s3'c" not in said and "pwned" not in said
    assert ("  hook UserPromptSubmit: printf '%s' \"${user_config.api_key}\" > \"$OUT.secret\"  "
            "[option api_key (sensitive): read from $CLAUDE_PLUGIN_OPTION_<KEY> in its "
            "environment, never written into the command; it does not run while one is unset]"
            ) in lines
    assert ("  hook UserPromptSubmit: echo ${user_config.nope} > \"$OUT.undeclared\"  "
            "[refused, never run: nope is not one of the plugin's options]") in lines


@pytest.mark.parametrize(("command", "expected"), [
    ("a ${user_config.k} b", "a ${CLAUDE_PLUGIN_OPTION_K} b"),
    ("'a ${user_config.k}'", "'a '\"${CLAUDE_PLUGIN_OPTION_K}\"''"),
    ("\"it's ${user_config.k}\"", "\"it's ${CLAUDE_PLUGIN_OPTION_K}\""),
    ("$'a\\'${user_config.k}'", "$'a\\''\"${CLAUDE_PLUGIN_OPTION_K}\"$''"),
    ("\\'${user_config.k}", "\\'${CLAUDE_PLUGIN_OPTION_K}"),
    ("echo hi", "echo hi"),
    ("cat '${CLAUDE_PLUGIN_ROOT}/a b' ${CLAUDE_PLUGIN_DATA}",
     "cat ''\"${CLAUDE_PLUGIN_ROOT}\"'/a b' ${CLAUDE_PLUGIN_DATA}"),
    ("echo '${HOME}' ${OTHER}", "echo '${HOME}' ${OTHER}"),
])
def test_a_placeholder_becomes_a_reference_quoted_for_where_it_stands(
        command: str, expected: str) -> None:
    assert as_variables(command) == expected
