"""grep and glob on real files, with ripgrep and with the Python fallback.

Every behaviour is checked with both back ends (ripgrep is the pinned ``ripgrep``
package's binary, installed with the agent), and the two must word their results
identically. The big tree (20,000
files) is built once per module, in memory-backed storage when the system has it:
creating that many files on a busy disk takes far longer than searching them.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.core.calls.tool import ToolContext, ToolResult
from agent_tui.permissions import Permissions
from agent_tui.protocol import PermissionMode
from agent_tui.protocol import Interrupt, UserMessage
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.runtime.process import live_runs
from agent_tui.tools.search.query import expand_braces
from agent_tui.files import ripgrep
from agent_tui.files.ripgrep import find_rg
from agent_tui.tools.search.tools import GlobTool, GrepTool
from tests.fake_api import Reply
from tests.harness import start_session

RG = find_rg()  # the pinned ripgrep package's binary (a dependency: always there)
BACKENDS = [pytest.param(RG, id="ripgrep"), pytest.param(None, id="python")]

ROOT = Path(__file__).resolve().parents[1]
NEEDLE = "needle_42"


def write(root: Path, rel: str, data: str | bytes, mtime: float | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small repository: ignored folders, a re-included file, binary files, .git."""
    root = tmp_path / "repo"
    write(root, ".gitignore", "node_modules/\nbuild/\n*.log\n")
    write(root, "src/app.py", f"import os\n\ndef main():\n    return '{NEEDLE}'\n", mtime=1_000)
    write(root, "src/util.py", f"# {NEEDLE.upper()}\nX = 1\n{NEEDLE} = 2\n", mtime=3_000)
    write(root, "src/web/page.tsx", f"const a = '{NEEDLE}';\n", mtime=2_000)
    write(root, "src/web/page.ts", f"let b = '{NEEDLE}';\n", mtime=500)
    write(root, "docs/.hidden.md", f"{NEEDLE} in a hidden file\n", mtime=400)
    write(root, "node_modules/lib/index.py", f"{NEEDLE}\n")
    write(root, "build/out.py", f"{NEEDLE}\n")
    write(root, "debug.log", f"{NEEDLE}\n")
    write(root, "logs/.gitignore", "!keep.log\n")
    write(root, "logs/keep.log", f"{NEEDLE} kept\n", mtime=300)
    write(root, "assets/blob.bin", b"\x89PNG\r\n\x00\x00" + NEEDLE.encode() + b"\x00" * 64)
    write(root, ".git/config", f"[core]\n# {NEEDLE}\n")
    write(root, ".git/info/exclude", "secret.txt\n")
    write(root, "secret.txt", f"{NEEDLE}\n")
    return root


def ctx_for(workspace: Path, scope: CancelScope | None = None) -> ToolContext:
    return ToolContext(scope=scope or CancelScope(), workspace=workspace, tool_use_id="t",
                       operation_id="op")


async def grep(rg: str | None, workspace: Path, **args) -> ToolResult:
    tool = GrepTool(rg=rg)
    return await tool.run(tool.parse(args), ctx_for(workspace))


async def glob(rg: str | None, workspace: Path, **args) -> ToolResult:
    tool = GlobTool(rg=rg)
    return await tool.run(tool.parse(args), ctx_for(workspace))


# -- what is searched ------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_grep_lists_matching_files_newest_first(repo, rg) -> None:
    result = await grep(rg, repo, pattern=NEEDLE)
    assert result.outcome == "succeeded", result.content
    assert result.content.splitlines() == [
        "Found 6 files",
        "src/util.py",  # modified last
        "src/web/page.tsx",
        "src/app.py",
        "src/web/page.ts",
        "docs/.hidden.md",  # hidden files are searched
        "logs/keep.log",  # ignored by *.log, taken back by logs/.gitignore
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_grep_respects_gitignore_negation_exclude_file_and_never_reads_git(repo, rg) -> None:
    result = await grep(rg, repo, pattern=NEEDLE)
    listed = set(result.content.splitlines()[1:])
    assert listed == {"src/util.py", "src/web/page.tsx", "src/app.py", "src/web/page.ts",
                      "docs/.hidden.md", "logs/keep.log"}
    assert result.content.splitlines()[0] == "Found 6 files"
    for hidden in ("node_modules/lib/index.py", "build/out.py", "debug.log", "secret.txt",
                   "assets/blob.bin", ".git/config"):
        assert hidden not in listed


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_content_mode_shows_path_line_text_with_context(repo, rg) -> None:
    result = await grep(rg, repo, pattern=NEEDLE, path="src", output_mode="content", context=1,
                        glob="*.py")
    assert result.content.splitlines() == [
        "Found 2 matching lines in 2 files",
        "src/app.py-3-def main():",
        f"src/app.py:4:    return '{NEEDLE}'",
        "--",
        "src/util.py-2-X = 1",
        f"src/util.py:3:{NEEDLE} = 2",
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_count_mode_and_ignore_case(repo, rg) -> None:
    result = await grep(rg, repo, pattern=NEEDLE, path="src", output_mode="count", **{"-i": True})
    assert result.content.splitlines() == [
        "Found 5 matching lines in 4 files",
        "src/app.py:1",
        "src/util.py:2",
        "src/web/page.ts:1",
        "src/web/page.tsx:1",
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_glob_filter_takes_brace_lists_and_exclusions(repo, rg) -> None:
    braces = await grep(rg, repo, pattern=NEEDLE, glob="*.{ts,tsx}")
    assert sorted(braces.content.splitlines()[1:]) == ["src/web/page.ts", "src/web/page.tsx"]
    excluded = await grep(rg, repo, pattern=NEEDLE, path="src", glob="!*.py")
    assert sorted(excluded.content.splitlines()[1:]) == ["src/web/page.ts", "src/web/page.tsx"]


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_one_file_can_be_searched_by_its_path(repo, rg) -> None:
    result = await grep(rg, repo, pattern="X = ", path="src/util.py", output_mode="content")
    assert result.content.splitlines() == ["Found 1 matching line in 1 file", "src/util.py:2:X = 1"]


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_head_limit_cuts_and_says_so(repo, rg) -> None:
    result = await grep(rg, repo, pattern=NEEDLE, head_limit=2)
    lines = result.content.splitlines()
    assert lines[0] == "Found 6 files"
    assert lines[1:3] == ["src/util.py", "src/web/page.tsx"]
    assert lines[3] == ("[Showing 2 of 6 entries (head_limit). Narrow the search with path or "
                        "glob, or a more specific pattern, or raise head_limit.]")


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_no_match_and_bad_pattern_are_told_clearly(repo, rg) -> None:
    none = await grep(rg, repo, pattern="nothing_like_this_anywhere")
    assert none.outcome == "succeeded" and none.content == "No matches found"
    bad = await grep(rg, repo, pattern="(unclosed")
    assert bad.outcome == "failed"
    assert bad.content.startswith("The search failed: ")
    assert "unclosed" in bad.content or "missing )" in bad.content, bad.content


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_paths_outside_the_workspace_and_inside_git_are_refused(repo, tmp_path, rg) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.py", f"{NEEDLE}\n")
    (repo / "link_out").symlink_to(outside)
    for path in ("/etc", "../outside", "link_out", str(outside)):
        result = await grep(rg, repo, pattern=NEEDLE, path=path)
        assert result.outcome == "failed", path
        assert "outside the workspace" in result.content, result.content
    git = await grep(rg, repo, pattern=NEEDLE, path=".git")
    assert git.outcome == "failed" and "never searched" in git.content
    missing = await glob(rg, repo, pattern="*.py", path="nope")
    assert missing.outcome == "failed" and "does not exist" in missing.content


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_glob_lists_files_newest_first_respecting_gitignore(repo, rg) -> None:
    result = await glob(rg, repo, pattern="**/*.py")
    assert result.content.splitlines() == ["Found 2 files", "src/util.py", "src/app.py"]
    in_src = await glob(rg, repo, pattern="web/*.{ts,tsx}", path="src")
    assert in_src.content.splitlines() == ["Found 2 files", "src/web/page.tsx", "src/web/page.ts"]
    any_depth = await glob(rg, repo, pattern="*.log")
    assert any_depth.content.splitlines() == ["Found 1 file", "logs/keep.log"]


def test_brace_lists_expand_like_ripgrep() -> None:
    assert expand_braces("*.{ts,tsx}") == ["*.ts", "*.tsx"]
    assert expand_braces("{a,b}/{c,d}") == ["a/c", "a/d", "b/c", "b/d"]
    assert expand_braces("x{a,{b,c}}") == ["xa", "xb", "xc"]
    assert expand_braces("{only}.py") == ["{only}.py"]
    assert expand_braces("open{brace") == ["open{brace"]


@pytest.mark.asyncio
async def test_both_back_ends_word_the_same_result(repo) -> None:
    queries = [
        dict(pattern=NEEDLE),
        dict(pattern=NEEDLE, output_mode="content", context=2),
        dict(pattern="x|X", output_mode="count", **{"-i": True}),
        dict(pattern=NEEDLE, glob="src/**"),
    ]
    for args in queries:
        with_rg = await grep(RG, repo, **args)
        without = await grep(None, repo, **args)
        assert with_rg.content == without.content, args
    assert (await glob(RG, repo, pattern="**/*")).content == (
        await glob(None, repo, pattern="**/*")).content


def test_search_tools_are_read_only_and_never_ask(repo) -> None:
    for mode in PermissionMode:
        policy = Permissions(repo, mode)
        for tool, args in ((GrepTool(rg=None), {"pattern": "x", "path": "src"}),
                           (GlobTool(rg=None), {"pattern": "*.py"})):
            assert policy.check(tool, tool.parse(args)).verdict == "allow", (mode, tool.name)


# -- the 20,000-file tree ---------------------------------------------------------------

TREE_DIRS, TREE_FILES = 100, 200  # 20,000 files
# Non-ASCII words: a Unicode word boundary then keeps ripgrep off its fast engine, so
# the slow pattern below takes seconds over the tree (the fallback is slower still).
TREE_TEXT = ("álpha bêta gámma délta epsilön zêta éta thêta íota káppa lámbda mü\n" * 24).encode()
SLOW_PATTERN = r"(?:\b\w+\b\s){10}\d"


@pytest.fixture(scope="module")
def big_tree() -> Iterator[Path]:
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    root = Path(tempfile.mkdtemp(prefix="agent-tui-tree-", dir=base))
    try:
        write(root, ".gitignore", "vendor/\n")
        for d in range(TREE_DIRS):
            folder = root / "src" / f"pkg{d:03d}"
            folder.mkdir(parents=True)
            for f in range(TREE_FILES):
                fd = os.open(folder / f"mod{f:03d}.py", os.O_WRONLY | os.O_CREAT, 0o644)
                os.write(fd, TREE_TEXT)
                os.close(fd)
        write(root, "src/pkg050/mod100.py", TREE_TEXT + f"{NEEDLE}\n".encode())
        write(root, "vendor/dep.py", f"{NEEDLE}\n")
        write(root, "data/blob.bin", b"\x00" + NEEDLE.encode())
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_the_one_match_in_a_20000_file_tree_is_found(big_tree, rg) -> None:
    result = await grep(rg, big_tree, pattern=NEEDLE, output_mode="content")
    assert result.content.splitlines() == [
        "Found 1 matching line in 1 file", f"src/pkg050/mod100.py:25:{NEEDLE}"]


@pytest.mark.asyncio
async def test_glob_over_the_tree_caps_at_100_and_says_how_many(big_tree) -> None:
    result = await glob(RG, big_tree, pattern="**/*.py")
    lines = result.content.splitlines()
    assert lines[0] == "Found 20,000 files"
    assert len(lines) == 1 + 100 + 1
    assert lines[1] == "src/pkg050/mod100.py"  # written last: the newest
    assert lines[-1].startswith("[Showing 100 of 20,000 entries (the default limit).")


def _our_search_processes(root: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.cwd().startswith(str(root)):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_interrupted_slow_search_ends_the_turn_at_once_and_leaves_no_process(
    fake_api, big_tree, rg
) -> None:
    tool = GrepTool(rg=rg)
    fake_api.enqueue(Reply.tool_use("grep", {"pattern": SLOW_PATTERN, "output_mode": "count"},
                                    id="toolu_grep"))
    run = start_session(AnthropicProvider(api_key="k", base_url=fake_api.url), [tool], big_tree)
    run.submit(UserMessage(text="search"))
    await run.rec.wait_for(lambda: "running" in run.rec.tool_states("toolu_grep"))
    await run.rec.wait_for(lambda: bool(_our_search_processes(big_tree)), timeout=5)
    await asyncio.sleep(0.2)  # well into the search
    assert run.rec.of("turn_ended") == [], "the search was not slow enough to interrupt"
    run.submit(Interrupt())
    await run.rec.wait_type("turn_ended", timeout=5)
    assert _our_search_processes(big_tree) == []  # ended with the turn, not after it
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    assert run.rec.tool_states("toolu_grep")[-1] == "cancelled_while_running"
    final = run.rec.final_tool("grep")
    assert final.side_effects == "none"
    assert "interrupted before it finished" in (final.result or "")
    assert live_runs() == []
    assert _our_search_processes(big_tree) == []
    await run.close()


@pytest.mark.asyncio
async def test_the_time_cap_stops_a_search_and_says_so(big_tree, monkeypatch) -> None:
    from agent_tui.tools.search import tools as search_tools

    monkeypatch.setattr(search_tools, "TIMEOUT_S", 0.3)
    scope = CancelScope()
    tool = GrepTool(rg=RG)
    result = await tool.run(tool.parse({"pattern": SLOW_PATTERN}), ctx_for(big_tree, scope))
    assert result.outcome == "failed"
    assert result.content.startswith("The search took longer than 0.3 s and was stopped")
    assert not scope.cancelled  # the cap is the call's own, the turn goes on
    assert scope.reason is not CancelReason.TIMEOUT
    assert live_runs() == []


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_a_search_that_prints_too_much_is_cut_short_and_says_so(big_tree, rg, monkeypatch) -> None:
    from agent_tui.tools.search import tools as search_tools

    monkeypatch.setattr(search_tools, "MAX_OUTPUT_BYTES", 4096)
    result = await grep(rg, big_tree, pattern="álpha", output_mode="count")
    assert result.outcome == "succeeded"
    assert result.content.startswith("Found at least ")
    assert result.content.endswith("[The search printed more than 4 KiB and was stopped there: "
                                   "counts are at least those shown. Narrow it.]")
    assert live_runs() == []


@pytest.mark.asyncio
@pytest.mark.parametrize("rg", BACKENDS)
async def test_a_parent_folders_gitignore_applies_to_a_search_below_it(tmp_path, rg) -> None:
    root = tmp_path / "ws"
    write(root, ".gitignore", "src/generated/\n*.tmp\n")
    write(root, "src/generated/gen.py", f"{NEEDLE}\n")
    write(root, "src/lib/scratch.tmp", f"{NEEDLE}\n")
    write(root, "src/lib/real.py", f"{NEEDLE}\n")
    for path in ("src", "src/lib"):
        result = await grep(rg, root, pattern=NEEDLE, path=path)
        assert result.content.splitlines() == ["Found 1 file", "src/lib/real.py"], path
    listed = await glob(rg, root, pattern="**/*", path="src")
    assert listed.content.splitlines() == ["Found 1 file", "src/lib/real.py"]


def test_ripgrep_is_the_pinned_packages_binary_whatever_the_path_has(monkeypatch) -> None:
    pin = re.search(r'"ripgrep==([\d.]+)"', (ROOT / "pyproject.toml").read_text())
    assert pin is not None, "ripgrep is pinned in pyproject.toml"
    monkeypatch.setenv("PATH", "")  # not looked at: the package's binary comes first
    ripgrep.find_rg.cache_clear()
    try:
        found = ripgrep.find_rg()
    finally:
        ripgrep.find_rg.cache_clear()
    assert found is not None and found == ripgrep.package_rg()
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith(f"ripgrep {pin.group(1)}")


@pytest.mark.asyncio
async def test_without_ripgrep_search_glob_and_the_picker_fall_back(repo, tmp_path, monkeypatch) -> None:
    from agent_tui.ui.input.file_index import FileIndex
    from agent_tui.ui.input.file_source import FileSource

    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setattr(ripgrep, "package_rg", lambda: None)  # the package is not installed
    monkeypatch.setenv("PATH", str(empty))  # and no rg on the PATH
    ripgrep.find_rg.cache_clear()
    try:
        assert ripgrep.find_rg() is None
        searched = await GrepTool().run(GrepTool().parse({"pattern": NEEDLE}), ctx_for(repo))
        listed = await GlobTool().run(GlobTool().parse({"pattern": "src/*.py"}), ctx_for(repo))
        index = FileIndex(repo)
    finally:
        ripgrep.find_rg.cache_clear()
    assert searched.details["backend"] == "python"
    assert searched.content == (await grep(RG, repo, pattern=NEEDLE)).content
    assert listed.content.splitlines() == ["Found 2 files", "src/util.py", "src/app.py"]
    assert index.rg is None and not index.respects_gitignore
    source = FileSource(lambda: repo, lambda fn: fn(), lambda _a: None, lambda _r: None)
    source.index = index
    assert source.title == "files (ripgrep not found: .gitignore is not read)"
    index.refresh()
    assert index.wait(10)
    walked = index.paths()  # hidden folders skipped, .gitignore not read
    assert "build/out.py" in walked and not any(p.startswith(".git/") for p in walked)
