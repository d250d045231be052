"""What a print-mode request imports of the Anthropic SDK: the client and the messages
API, not the SDK's every type (``make bench`` times ``-p``; this says what is on its path).

Each probe is a fresh interpreter: the test process has the SDK loaded already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.providers.anthropic_lazy import _plan, _Shape

ROOT = Path(__file__).resolve().parents[1]

#: Packages a request never reads; a plain ``import anthropic`` imports them all.
NOT_FOR_A_REQUEST = ("anthropic.lib.vertex", "anthropic.lib.bedrock", "anthropic.lib.aws",
                     "anthropic.resources.beta.organization")

NAMES = """
import anthropic, json
def name(value):
    what = getattr(value, '__qualname__', getattr(value, '__name__', type(value).__name__))
    return f"{getattr(value, '__module__', '')}.{what}"
# and two names a star import binds (``from .lib.vertex import *``): not in ``__all__``
names = [*anthropic.__all__, "AnthropicVertex", "AsyncAnthropicBedrock"]
print(json.dumps({n: name(getattr(anthropic, n)) for n in sorted(names)}))
"""


def probe(code: str) -> object:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_request_imports_the_client_not_every_type() -> None:
    loaded = probe(f"""
import json, sys
import agent_tui.providers.anthropic as p
from anthropic.resources.messages import AsyncMessages
p.anthropic.AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:9").messages
print(json.dumps([m for m in sys.modules if m.startswith("anthropic")]))
""")
    plain = probe("import anthropic, json, sys\n"
                  "print(json.dumps([m for m in sys.modules if m.startswith('anthropic')]))")
    assert isinstance(loaded, list) and isinstance(plain, list)
    assert [m for m in loaded if m.startswith(NOT_FOR_A_REQUEST)] == []
    assert len(loaded) < len(plain) / 2


def test_every_exported_name_is_the_one_a_plain_import_gives() -> None:
    lazy = probe("import agent_tui.providers.anthropic\n" + NAMES)
    plain = probe(NAMES)
    assert isinstance(plain, dict) and len(plain) > 50
    assert lazy == plain
    assert plain["AnthropicVertex"].endswith(".AnthropicVertex")


def test_an_init_that_does_more_than_bind_names_is_imported_plainly(tmp_path: Path) -> None:
    init = tmp_path / "pkg" / "__init__.py"
    init.parent.mkdir()
    init.write_text("from .a import A\nprint('side effect')\n")
    with pytest.raises(_Shape):
        _plan("pkg", init)
    init.write_text('"""Doc."""\nfrom __future__ import annotations\nfrom .a import A as B\n'
                    "from . import c\n__all__ = ['B']\n")
    _, table, _ = _plan("pkg", init)
    assert table == {"B": ("a", "A")}
