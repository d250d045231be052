"""docs/scripts.md runs as written: each ``sh`` example is run by bash in a fresh
workspace (the offline model, no key), must succeed, and must print the ``text`` block
that follows it, when there is one; the result object it shows has the real shape."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.protocol import ResultUsage, RunResult

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "scripts.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(PAGE.read_text(encoding="utf-8"))]


def examples() -> list[tuple[str, str | None]]:
    """Each sh block, with the text block right after it (what it prints), if any."""
    found = blocks()
    out = []
    for i, (lang, body) in enumerate(found):
        if lang == "sh":
            after = found[i + 1] if i + 1 < len(found) else ("", "")
            out.append((body, after[1] if after[0] == "text" else None))
    return out


def test_the_page_has_examples_with_their_output():
    runs = examples()
    assert len(runs) >= 8 and sum(shown is not None for _, shown in runs) >= 6


@pytest.mark.skipif(shutil.which("jq") is None, reason="the examples read JSON with jq")
@pytest.mark.parametrize("index", range(len(examples())))
def test_each_example_runs_as_written(tmp_path, index):
    script, shown = examples()[index]
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(AGENT_TUI_HOME=str(tmp_path / "home"), AGENT_TUI_SCRIPTED_DELAY="0",
               XDG_CONFIG_HOME=str(tmp_path / "config"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    out = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=workspace, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"{script}\n{out.stderr}"
    if shown is not None:
        assert out.stdout == shown, script


def test_the_result_shown_has_the_shape_produced():
    [shown] = [json.loads(body) for lang, body in blocks() if lang == "json"]
    assert list(shown) == list(RunResult.model_fields)
    assert list(shown["usage"]) == list(ResultUsage.model_fields)
    RunResult.model_validate(shown)
