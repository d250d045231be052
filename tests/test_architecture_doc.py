"""docs/architecture.md names every module of the package, so a newcomer finds its room."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_is_listed_in_the_architecture_page() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    package = ROOT / "agent_tui"
    missing = [
        str(p.relative_to(package)) for p in sorted(package.rglob("*.py"))
        if "__pycache__" not in p.parts and f"`{p.relative_to(package)}`" not in page
    ]
    assert missing == [], "add a line for each to docs/architecture.md"
