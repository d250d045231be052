"""The type checker's settings, checked on planted code.

``make test`` runs mypy over the package beside the tests (as ``make typecheck`` does),
so a new type error fails the suite. Here the settings themselves are tested: the project's
``[tool.mypy]`` runs on a small package shaped like ours, in a temporary folder, and
must find what strict mode finds, in every part of the package, and a real error
anywhere.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

UNTYPED = "def helper(x):\n    return x\n"
WRONG = "def count() -> int:\n    return 'three'\n"


def _mypy(tmp_path: Path, files: dict[str, str]) -> tuple[int, str]:
    """mypy with the project's settings on a planted package ``agent_tui`` in tmp_path."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    pkg = tmp_path / "agent_tui"
    for folder in ("", "core", "protocol", "ui"):
        (pkg / folder).mkdir(parents=True, exist_ok=True)
        (pkg / folder / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).write_text(text)
    # the same settings, but for the plugins (the planted code has no pydantic models)
    # and the cache and files, given on the command line
    kept = {k: v for k, v in config.items()
            if k not in ("overrides", "plugins", "cache_dir", "files")}
    text = "[tool.mypy]\n" + _toml(kept)
    for override in config.get("overrides", []):
        text += "[[tool.mypy.overrides]]\n" + _toml(override)
    (tmp_path / "pyproject.toml").write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "agent_tui"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    return done.returncode, done.stdout + done.stderr


def _toml(table: dict[str, object]) -> str:
    def value(v: object) -> str:
        if isinstance(v, bool):
            return str(v).lower()
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return '"' + str(v) + '"'

    return "".join(f"{key} = {value(v)}\n" for key, v in table.items())


def test_make_test_type_checks_beside_the_tests_and_fails_on_an_error() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^typecheck: .*\n\t\$\(PY\) -m mypy$", makefile, re.M)
    recipe = makefile.partition("\ntest: ")[2].partition("\n\n")[0]
    assert "$(PY) -m mypy > $(VENV)/typecheck.log 2>&1 & typecheck=$$!" in recipe
    assert recipe.rstrip().endswith("test $$typed -eq 0 && test $$tests -eq 0")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(dep.startswith("mypy==") for dep in extras["optional-dependencies"]["test"])


def test_strict_everywhere(tmp_path: Path) -> None:
    code, out = _mypy(tmp_path, {
        "core/planted.py": UNTYPED, "protocol/planted.py": UNTYPED, "ui/planted.py": UNTYPED,
    })
    assert code == 1, out
    for part in ("core", "protocol", "ui"):
        assert f"agent_tui/{part}/planted.py:1: error: Function is missing a type annotation" in out


def test_a_wrong_type_fails_anywhere(tmp_path: Path) -> None:
    code, out = _mypy(tmp_path, {"ui/planted.py": WRONG})
    assert code == 1, out
    assert "agent_tui/ui/planted.py:2: error: Incompatible return value type" in out


def test_an_ignore_that_hides_nothing_fails(tmp_path: Path) -> None:
    code, out = _mypy(tmp_path, {"ui/planted.py": "x: int = 1  # type: ignore[assignment]\n"})
    assert code == 1, out
    assert 'Unused "type: ignore" comment' in out


def test_clean_planted_code_passes(tmp_path: Path) -> None:
    code, out = _mypy(tmp_path, {"core/planted.py": "def helper(x: int) -> int:\n    return x\n"})
    assert code == 0, out
