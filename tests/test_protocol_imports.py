"""The protocol's names (Ops, Events, states) are imported from ``agent_tui.protocol``
alone: no other module passes them on, so there is one place to find each."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import agent_tui.protocol as protocol

ROOT = Path(__file__).resolve().parents[1]


def reexported_imports(base: Path, roots: list[Path]) -> list[str]:
    """``file:line: from M import N`` where M is not the protocol but N is an object
    the protocol defines."""
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                    continue
                if not node.module.startswith("agent_tui") or node.module.startswith("agent_tui.protocol"):
                    continue
                module = importlib.import_module(node.module)
                for alias in node.names:
                    ours = getattr(protocol, alias.name, None)
                    if ours is None or not getattr(ours, "__module__", "").startswith(
                            "agent_tui.protocol"):
                        continue  # not the protocol's own (e.g. the cancel reasons)
                    if getattr(module, alias.name, None) is ours:
                        found.append(f"{path.relative_to(base)}:{node.lineno}: "
                                     f"from {node.module} import {alias.name}")
    return found


def test_protocol_names_are_imported_from_the_protocol_only() -> None:
    assert reexported_imports(ROOT, [ROOT / "agent_tui", ROOT / "tests", ROOT / "bench"]) == []


def test_the_check_finds_a_protocol_name_taken_from_another_module(tmp_path: Path) -> None:
    (tmp_path / "planted.py").write_text("from agent_tui.core.calls.state import ToolState\n")
    assert reexported_imports(tmp_path, [tmp_path]) == [
        "planted.py:1: from agent_tui.core.calls.state import ToolState"]
