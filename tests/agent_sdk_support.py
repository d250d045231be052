"""What the Agent SDK tests (Python and TypeScript) share: the executable an app's
``cli_path`` names."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

AGENT_TUI = Path(sys.executable).parent / "agent-tui"


def cli_script(tmp_path: Path, fake_api: Any) -> Path:
    """What ``cli_path`` names: agent-tui with the fake API's address and a key."""
    script = tmp_path / "agent-tui-cli"
    script.write_text(
        "#!/bin/sh\n"
        f"export ANTHROPIC_BASE_URL='{fake_api.url}' ANTHROPIC_API_KEY=test-key "
        f"AGENT_TUI_HOME='{tmp_path / 'home'}'\n"
        f"exec '{AGENT_TUI}' \"$@\"\n"
    )
    script.chmod(0o755)
    return script
