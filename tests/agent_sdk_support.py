"""What the Agent SDK tests (Python and TypeScript) share: the executable an app's
``cli_path`` names, and the shapes of Claude Code's messages (``agent_sdk_shapes``)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from tests import forked_runs
from tests.forked_cli import launcher_command

AGENT_TUI = Path(sys.executable).parent / "agent-tui"


def cli_script(tmp_path: Path, fake_api: Any, *, forked: bool = True) -> Path:
    """What ``cli_path`` names: agent-tui with the fake API's address and a key, forked
    with the agent preloaded (tests/forked_cli.py) unless ``forked`` is false."""
    command = launcher_command() if forked and forked_runs.forked() else [str(AGENT_TUI)]
    script = tmp_path / "agent-tui-cli"
    script.write_text(
        "#!/bin/sh\n"
        f"export ANTHROPIC_BASE_URL='{fake_api.url}' ANTHROPIC_API_KEY=test-key "
        f"AGENT_TUI_HOME='{tmp_path / 'home'}'\n"
        f"exec {shlex.join(command)} \"$@\"\n"
    )
    script.chmod(0o755)
    return script


SHAPES = Path(__file__).parent / "agent_sdk_shapes"
_TYPES: dict[str, Any] = {"str": str, "int": int, "bool": bool, "null": type(None),
                          "list": list, "dict": dict, "number": (int, float)}


def shape(name: str) -> Any:
    """A shape from ``agent_sdk_shapes`` (its README says how one reads)."""
    return json.loads((SHAPES / f"{name}.json").read_text())


def mismatches(value: Any, shape: Any, where: str = "") -> list[str]:
    """Where ``value`` differs from ``shape``: none when it has that shape."""
    if isinstance(shape, str):
        names = shape.split("|")
        kinds = tuple(_TYPES[k] for k in names)
        wrong = not isinstance(value, kinds) or (isinstance(value, bool) and "bool" not in names)
        return [f"{where or '.'}: {value!r} is not {shape}"] if wrong else []
    if isinstance(shape, list):
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        return [m for i, item in enumerate(value)
                for m in mismatches(item, shape[0], f"{where}[{i}]")]
    if "const" in shape and len(shape) == 1:
        return [] if value == shape["const"] else [f"{where}: {value!r} != {shape['const']!r}"]
    if not isinstance(value, dict):
        return [f"{where}: not an object"]
    found: list[str] = []
    for key, inner in shape.items():
        name = key.removeprefix("?")
        if name in value:
            found += mismatches(value[name], inner, f"{where}.{name}")
        elif not key.startswith("?"):
            found.append(f"{where}.{name}: missing")
    return found
