"""For the plugin tests: a HOME of the test's own, where Claude Code's plugin records go."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_tui.plugins import use_plugin_dirs
from agent_tui.plugins.options import read_user_config, save_values


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


PLUGIN = "vault@opts"
USER_CONFIG = {
    "api_key": {"type": "string", "title": "API key", "description": "Your key",
                "required": True, "sensitive": True},
    "region": {"type": "string", "title": "Region", "description": "Where",
               "options": ["eu", "us"], "default": "eu"},
    "retries": {"type": "number", "title": "Retries", "description": "How many",
                "min": 0, "max": 5},
}


def options_market(tmp_path: Path, user_config: Any = USER_CONFIG) -> Path:
    """A marketplace ``opts`` with ``vault`` (options, a hook, a server) and ``plain``."""
    market = tmp_path / "market"
    plugin = market / "vault"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(
        {"name": "opts", "plugins": [{"name": "vault", "source": "./vault"},
                                     {"name": "plain", "source": "./plain"}]}))
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(
        {"name": "vault", "version": "1.0.0", "userConfig": user_config}))
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [
            {"type": "command", "command": 'env | grep ^CLAUDE_PLUGIN_OPTION_ | sort > "$OUT"'},
            {"type": "command", "command": "printf '%s' 'key: ${user_config.api_key}' > \"$OUT.key\""},
        ]}]}}))
    (plugin / ".mcp.json").write_text(json.dumps({"mcpServers": {"api": {
        "command": "python3", "args": ["server.py", "--region", "${user_config.region}"],
        "env": {"TOKEN": "${user_config.api_key}"}}}}))
    (plugin / "agents").mkdir()
    (plugin / "agents" / "ops.md").write_text(
        "---\nname: ops\ndescription: d\n---\nWork in ${user_config.region} "
        "with ${user_config.api_key}; retries ${user_config.retries}; ${CLAUDE_PLUGIN_ROOT} "
        "on ${CLAUDE_PROJECT_DIR}.\n")
    (plugin / "skills" / "deploy").mkdir(parents=True)
    (plugin / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: d\n---\nDeploy to ${user_config.region} "
        "(key ${user_config.api_key}, ${user_config.nope}) with ${CLAUDE_PLUGIN_ROOT}/bin "
        "and ${CLAUDE_SKILL_DIR}/steps.md, state in ${CLAUDE_PLUGIN_DATA}.\n")
    (market / "plain" / "commands").mkdir(parents=True)
    (market / "plain" / "commands" / "hi.md").write_text("say hi")
    return market


INLINE_CONFIG = {**USER_CONFIG, "region": {"type": "string", "title": "t", "description": "d"}}


def inline_plugin(tmp_path: Path, name: str, files: dict[str, str],
                  values: dict[str, Any]) -> Iterator[Path]:
    """For a fixture: a ``--plugin-dir`` plugin ``name`` with ``files`` (path: text),
    INLINE_CONFIG's options, ``values`` set, loaded until the fixture ends."""
    root = tmp_path / name
    manifest = {".claude-plugin/plugin.json": json.dumps({"name": name, "userConfig": INLINE_CONFIG})}
    for path, text in {**manifest, **files}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    save_values(f"{name}@inline", read_user_config(INLINE_CONFIG, "plugin.json"), values)
    use_plugin_dirs([root])
    try:
        yield root
    finally:
        use_plugin_dirs([])
