"""The ``@`` file picker on a 100,000-file tree: from the key to its first results.

Method: a tree of 100,000 empty files in 2,000 folders (made once per bench run, with
a ``.gitignore``), the app started on it with a session that does nothing and left a
second to settle, ``@`` typed, and the clock stopped when the picker holds results and
the screen has been refreshed. Each run is a fresh app: the file list is made from nothing every time.
The reference is ripgrep alone listing the same tree (spawn to its 50th path), the
floor of any picker that respects .gitignore this way. A second figure: a query
typed once the list is complete, to its ranked results.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_tui.files.ripgrep import find_rg
from bench.keys import _wait  # polls every 5 ms: the figures' resolution

FILES = 100_000
SIZE = (110, 32)


def make_tree(root: Path, files: int = FILES) -> Path:
    per_folder = 50
    folders = files // per_folder
    for n in range(folders):
        folder = root / f"pkg{n // 40}" / f"mod{n % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(per_folder):
            (folder / f"file_{k}_{n}.py").touch()
    (root / "ignored").mkdir(exist_ok=True)
    (root / "ignored" / "skip.py").touch()
    (root / ".gitignore").write_text("ignored/\n")
    return root


def idle_session(emit: Callable[[Any], None], tree: Path) -> Any:
    """A session that does nothing until it is shut down, on ``tree``."""
    from bench.memory import TranscriptSession

    session = TranscriptSession(emit, messages=0)  # no messages: it only waits
    session.workspace = tree
    session.policy = None
    session.background = []
    return session


async def picker_ms(tree: Path, query: str = "m3f7") -> dict[str, float]:
    """One fresh app: ms from ``@`` to its first results, and from a query (typed
    once the list is complete) to its ranked results."""
    from agent_tui.ui.app import AgentApp

    app = AgentApp(lambda emit: idle_session(emit, tree), cursor_blink=False, welcome=False, workspace=tree)
    async with app.run_test(size=SIZE) as pilot:
        await _wait(lambda: app.session is not None, 60, "the session")
        await asyncio.sleep(1.0)  # what follows the first frame (imports on a thread) is done
        # Typed into the input as a key would be (the pilot's press also waits for
        # the app to be idle, which the listing keeps it from being for a while).
        t0 = time.monotonic()
        app.prompt.insert("@")
        await _wait(lambda: bool(app.suggestions.items), 60, "first results")
        await app.suggestions.wait_for_refresh()
        open_ms = (time.monotonic() - t0) * 1000
        index = app.files.index
        assert index is not None
        await _wait(lambda: index.complete, 60, "the whole list")
        t1 = time.monotonic()
        app.prompt.insert(query)
        completion = app.prompt.completer
        await _wait(lambda: completion.shown_query == query, 60, "ranked results")
        await app.suggestions.wait_for_refresh()
        query_ms = (time.monotonic() - t1) * 1000
        listed = len(index.paths())
    return {"open_ms": open_ms, "query_ms": query_ms, "listed": listed}


def rg_reference_ms(tree: Path, first: int = 50) -> float:
    """ripgrep alone: spawn to its ``first``-th path on stdout."""
    t0 = time.monotonic()
    rg = find_rg() or "rg"
    proc = subprocess.Popen([rg, "--files", "--hidden", "--glob", "!.git", "--no-require-git"],
                            cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    for n, _line in enumerate(proc.stdout, 1):
        if n >= first:
            break
    elapsed = (time.monotonic() - t0) * 1000
    proc.kill()
    proc.wait()
    proc.stdout.close()
    return elapsed


def measure(runs: int, files: int = FILES) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="atui-bench-tree-") as tmp:
        tree = make_tree(Path(tmp), files)
        os.sync()
        open_ms, query_ms, ref_ms, listed = [], [], [], 0
        for _ in range(runs):
            result = asyncio.run(picker_ms(tree))
            open_ms.append(result["open_ms"])
            query_ms.append(result["query_ms"])
            listed = int(result["listed"])
            ref_ms.append(rg_reference_ms(tree))
    return {"open_ms": open_ms, "query_ms": query_ms, "ref_ms": ref_ms, "listed": listed}
