"""What the TUI's first frame imports: the widgets it shows, not the models, the core
or the settings (``make bench`` times the frame; this says what is on its path).

A fresh interpreter imports the entry point and the app and builds the app as
``run_tui`` (ui/run.py) does, without running it; then says which of the modules the first frame
must not wait for were imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Imported after the first frame: by the core's thread, the preload, or on first use.
NOT_BEFORE_THE_FIRST_FRAME = (
    "pydantic",
    "agent_tui.protocol.events",
    "agent_tui.protocol.ops",
    "agent_tui.settings",
    "agent_tui.core.session.session",
    "agent_tui.core.services.deps",
    "agent_tui.commands.files",
    "agent_tui.files.workspace",
    "agent_tui.ui.link.event_dispatch",
    "agent_tui.ui.commands.reports",
)

PROBE = """
import json, sys
from pathlib import Path
from agent_tui.cli import main  # noqa: F401
from agent_tui.ui.app import AgentApp
app = AgentApp(lambda *a, **k: None, workspace=Path({workspace!r}))
watched = {watched!r}
print(json.dumps(sorted(m for m in sys.modules if m.startswith(watched))))
"""


def imported_before_the_first_frame(workspace: Path, watched: tuple[str, ...]) -> list[str]:
    code = PROBE.format(workspace=str(workspace), watched=watched)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_first_frame_imports_no_model_core_or_settings(tmp_path: Path) -> None:
    assert imported_before_the_first_frame(tmp_path, NOT_BEFORE_THE_FIRST_FRAME) == []


#: The entry point's own steps before it starts the TUI (the tools' facts, the options, the
#: wiring), with ``run_tui`` replaced by a look at what they imported.
MAIN_PROBE = """
import json, sys
import agent_tui.ui.app.run as run
seen = []
def run_tui(*args, **kwargs):
    seen.extend(sorted(m for m in sys.modules if m.startswith({watched!r})))
    return 0
run.run_tui = run_tui
from agent_tui.cli import main
main(["--cwd", {workspace!r}, "--provider", "scripted"])
print(json.dumps(seen))
"""


def test_the_entry_point_starts_the_tui_before_any_model_core_or_settings(tmp_path: Path) -> None:
    code = MAIN_PROBE.format(workspace=str(tmp_path), watched=NOT_BEFORE_THE_FIRST_FRAME)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, check=True, env=dict(env, AGENT_TUI_HOME=str(tmp_path / "home")))
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_the_probe_sees_what_is_imported(tmp_path: Path) -> None:
    # The models are one name away: asking the protocol for one imports them.
    assert "agent_tui.protocol.states" in imported_before_the_first_frame(
        tmp_path, ("agent_tui.protocol",))
    code = "import sys, agent_tui.protocol as p; p.UserMessage; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.strip() == "True"


def test_importing_a_protocol_module_by_name_loads_no_model() -> None:
    code = ("import sys\nfrom agent_tui.protocol import states, tool_names\n"
            "print('pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"
