"""No module under tests/ imports a test file (a ``test_*.py``): what several test files
share lives in conftest.py (fixtures) and in tests/harness.py and the other helper
modules whose names do not start with ``test_``. A test file that imports another one
runs the other's module code, ties the two together and hides what is shared.

Every import counts, wherever it stands (at the top or inside a test), parsed with
``ast``: nothing is imported or run. The checker is tested on planted files too."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def _is_test_module(dotted: str) -> bool:
    return dotted.split(".")[-1].startswith("test_")


def _package(path: Path, root: Path) -> list[str]:
    return [root.name, *path.parent.relative_to(root).parts]


def imported_test_modules(path: Path, root: Path) -> list[str]:
    """The test modules ``path`` imports (absolute or relative, as dotted names)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package(path, root)
                package = package[:len(package) - (node.level - 1)]
                base = ".".join([*package, *([base] if base else [])])
            if _is_test_module(base):
                found.append(base)
            found += [f"{base}.{alias.name}" for alias in node.names
                      if _is_test_module(alias.name)]
    return found


def files_importing_tests(root: Path) -> dict[str, list[str]]:
    """Every module under ``root`` that imports a test module, with what it imports."""
    bad = {}
    for path in sorted(root.rglob("*.py")):
        if "__snapshots__" in path.parts:
            continue
        names = imported_test_modules(path, root)
        if names:
            bad[str(path.relative_to(root))] = names
    return bad


def test_no_module_under_tests_imports_a_test_file() -> None:
    assert files_importing_tests(TESTS) == {}


def test_the_checker_finds_every_way_to_import_a_test_file(tmp_path: Path) -> None:
    root = tmp_path / "tests"
    (root / "sub").mkdir(parents=True)
    (root / "harness.py").write_text("import os\nfrom tests.harness_more import x\n")
    (root / "test_a.py").write_text("from tests.test_b import helper\n")
    (root / "test_c.py").write_text("def test_x():\n    import tests.test_b\n")
    (root / "test_d.py").write_text("from tests import test_b\n")
    (root / "test_e.py").write_text("from .test_b import helper\n")
    (root / "sub" / "test_f.py").write_text("from ..test_b import helper\nfrom . import test_g\n")
    (root / "helper.py").write_text("from tests.test_b import helper\n")
    assert files_importing_tests(root) == {
        "helper.py": ["tests.test_b"],
        "sub/test_f.py": ["tests.test_b", "tests.sub.test_g"],
        "test_a.py": ["tests.test_b"],
        "test_c.py": ["tests.test_b"],
        "test_d.py": ["tests.test_b"],
        "test_e.py": ["tests.test_b"],
    }
