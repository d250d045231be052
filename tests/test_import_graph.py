"""The layers of docs/architecture.md, checked on the code.

Every module of ``agent_tui`` is parsed with ``ast`` (nothing is imported or run), and
every import in it counts, wherever it stands: at the top, inside a function (a lazy
import) or under ``if TYPE_CHECKING``. From them the module graph is built, and the
suite fails on

- an import that points up the layers, from one front end to the other, or from a
  front end to the tools;
- an import cycle between modules;
- a top-level module or package that no layer holds (a new one must be placed here,
  and in docs/architecture.md);
- Textual imported outside the TUI.

The checker is tested on its own too, against a copy of the package with a bad import
planted, so it is seen to fail.
"""

from __future__ import annotations

import ast
import functools
import shutil
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import agent_tui

PACKAGE = Path(agent_tui.__file__).parent


@dataclass(frozen=True)
class Layer:
    name: str
    members: tuple[str, ...]  # top-level modules or packages under agent_tui
    # members side by side that never import each other (the two front ends)
    apart: bool = False


#: Top to bottom: a module may import its own layer's modules and any layer below.
LAYERS: tuple[Layer, ...] = (
    Layer("entry point", ("cli", "__main__")),
    # print mode, and Claude Code's stream-json and control protocol beside it
    Layer("print mode", ("headless", "sdk_protocol")),
    Layer("front ends", ("ui", "acp"), apart=True),
    # custom commands, read and expanded alike for every front end and print mode
    Layer("commands", ("commands",)),
    # the tools the model calls
    Layer("tools", ("tools",)),
    # the machinery beside them: the MCP client and the user's hook commands
    Layer("mcp and hooks", ("mcp", "hooks"), apart=True),
    # local processes: the run unit, containment and the sandbox, leftovers, file watches
    Layer("runtime", ("runtime",)),
    # the workspace's files, images and the paths a message names, and what MCP servers
    # offer (their statuses, prompts and resources, the port to them): the tools and the
    # front ends read them alike
    Layer("shared with the front ends", ("files", "mcp_catalog")),
    Layer("settings", ("settings", "containment_settings")),
    # Claude Code's plugins: their records, manifests and parts, which the loaders above read
    Layer("plugins", ("plugins",)),
    Layer("permissions", ("permissions",)),
    Layer("core", ("core",)),
    # Ops and Events, cheap to import: the core and the front ends stand on them
    Layer("protocol", ("protocol",)),
    Layer("models and workspace", ("providers", "checkpoints"), apart=True),
    Layer("cancel", ("cancel",)),
    # below every layer; they import nothing of agent-tui's but each other
    Layer(
        "low helpers",
        ("paths", "atomic", "credentials", "units", "process_guard", "json_positions",
         "crash_points", "frontmatter", "log_setup", "image_limits", "config_file", "yes_no", ""),
    ),
)

#: The rooms of the core, top to bottom, held to the same rule: a room imports its own
#: modules and the rooms below it, never one above.
CORE_ROOMS: tuple[Layer, ...] = (
    Layer("the session", ("session",)),
    Layer("custom commands and the op dispatch", ("commands",)),
    Layer("sub-agents", ("subagents",)),
    Layer("the turn loop", ("turn",)),
    Layer("compaction", ("compaction",)),
    Layer("hook points", ("hooks",)),
    Layer("the model view", ("history",)),
    Layer("plan and bash modes", ("modes",)),
    Layer("the session's services", ("services",)),
    Layer("memory files", ("memory",)),
    Layer("usage and the model's terms", ("usage",)),
    Layer("the journal", ("journal",)),
    Layer("tool calls", ("calls",)),
    Layer("the package marker", ("",)),
)

#: Most modules a folder of the package may hold (its ``__init__.py`` not counted).
MAX_FOLDER_MODULES = 15

#: Cycles that are known and being broken right now. Each entry must still be a cycle
#: (the test says when one is gone, so the list only shrinks), and nothing else may be.
KNOWN_CYCLES: tuple[frozenset[str], ...] = ()

#: Layers a member never imports although they are below it: the front ends reach the
#: tools (workspace paths, images, MCP state) only through the session or a lower
#: shared module (``files``, ``mcp_catalog``, ``settings``), never ``tools`` itself. No exceptions.
NEVER: dict[str, tuple[str, ...]] = {
    "ui": ("tools", "mcp", "hooks", "runtime"), "acp": ("tools", "mcp", "hooks", "runtime"),
}

#: Third-party packages only some layers may import.
ONLY_IN: dict[str, tuple[str, ...]] = {"textual": ("ui",)}


# -- the checker ---------------------------------------------------------------------------


@dataclass
class Graph:
    root: Path
    modules: dict[str, Path]
    # module -> {imported agent_tui module: first line that imports it}
    edges: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    # module -> {third-party top-level name: line}
    external: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))


def module_name(root: Path, path: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def build_graph(root: Path) -> Graph:
    """The import graph of the package at ``root``, from its source alone."""
    modules = {module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    graph = Graph(root, modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _import_nodes(path.read_text()):
            for target in _targets(node, package, modules):
                top = target.partition(".")[0]
                if top == root.name:
                    if target != name:
                        graph.edges[name].setdefault(target, node.lineno)
                else:
                    graph.external[name].setdefault(top, node.lineno)
    return graph


@functools.lru_cache(maxsize=None)
def _import_nodes(text: str) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """The import statements of a module's text (parsed once per text: the checker's
    tests build the graph of a copy of the package, the same texts but one)."""
    return tuple(n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Import, ast.ImportFrom)))


def _targets(node: ast.AST, package: str, modules: dict[str, Path]) -> list[str]:
    """The modules an import statement loads (the most specific one each name names)."""
    if isinstance(node, ast.Import):
        return [_known(alias.name, modules) for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    out = []
    for alias in node.names:
        candidate = f"{source}.{alias.name}"
        out.append(candidate if candidate in modules else _known(source, modules))
    return out


def _known(name: str, modules: dict[str, Path]) -> str:
    """``name``, or the nearest enclosing module that exists (``a.b.c`` -> ``a.b``)."""
    while name not in modules and "." in name:
        name = name.rpartition(".")[0]
    return name


def unit_of(module: str) -> str:
    """The top-level module or package under agent_tui a module belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def room_of(module: str) -> str:
    """The room of the core a module stands in (``agent_tui.core.turn.reply`` -> ``turn``)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else ""


def core_only(graph: Graph) -> Graph:
    """The graph of the core's own modules and the imports between them."""
    inside = {m: p for m, p in graph.modules.items() if m.startswith("agent_tui.core")}
    out = Graph(graph.root, inside)
    for source, targets in graph.edges.items():
        if source in inside:
            out.edges[source] = {t: n for t, n in targets.items() if t in inside}
    return out


def layer_index(layers: tuple[Layer, ...]) -> dict[str, int]:
    return {member: i for i, layer in enumerate(layers) for member in layer.members}


def unplaced(graph: Graph, layers: tuple[Layer, ...]) -> list[str]:
    index = layer_index(layers)
    return sorted({unit_of(m) for m in graph.modules if unit_of(m) not in index})


def bad_imports(graph: Graph, layers: tuple[Layer, ...],
                never: dict[str, tuple[str, ...]] = NEVER,
                unit: Callable[[str], str] = unit_of) -> list[str]:
    """Imports that point up the layers, across to a member kept apart, or down to a
    layer the member never imports (``never``)."""
    index = layer_index(layers)
    found = []
    for source, targets in sorted(graph.edges.items()):
        for target, line in sorted(targets.items()):
            a, b = unit(source), unit(target)
            if a == b or a not in index or b not in index:
                continue
            ia, ib = index[a], index[b]
            path = graph.modules[source].relative_to(graph.root)
            where = f"{path}:{line}: {source} imports {target}"
            if ia > ib:
                found.append(f"{where} ({layers[ia].name} is below {layers[ib].name})")
            elif ia == ib and layers[ia].apart:
                found.append(f"{where} ({a} and {b} never import each other)")
            elif b in never.get(a, ()):
                found.append(f"{where} ({a} reaches {b} only through the session or a "
                             "lower shared module)")
    return found


def cycles(graph: Graph) -> list[frozenset[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(start: str) -> None:
        # iterative, so a deep chain of imports cannot hit the recursion limit
        work = [(start, iter(sorted(graph.edges.get(start, {}))))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.edges.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], order[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == order[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(frozenset(group))

    for module in sorted(graph.modules):
        if module not in order:
            visit(module)
    return found


def misplaced_packages(graph: Graph, only_in: dict[str, tuple[str, ...]]) -> list[str]:
    found = []
    for source, names in sorted(graph.external.items()):
        for name, line in sorted(names.items()):
            if name in only_in and unit_of(source) not in only_in[name]:
                found.append(f"{source}:{line} imports {name} (only {only_in[name]} may)")
    return found


# -- the package as it is ------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> Graph:
    return build_graph(PACKAGE)


def test_every_top_level_module_stands_in_a_layer(graph: Graph) -> None:
    assert unplaced(graph, LAYERS) == [], "place it in LAYERS and in docs/architecture.md"


def test_no_import_points_up_the_layers_or_across_the_front_ends(graph: Graph) -> None:
    assert bad_imports(graph, LAYERS) == []


def test_no_import_cycle_beyond_the_known_ones(graph: Graph) -> None:
    assert [sorted(c) for c in cycles(graph) if c not in KNOWN_CYCLES] == []


def test_every_known_cycle_is_still_there(graph: Graph) -> None:
    gone = [sorted(c) for c in KNOWN_CYCLES if c not in cycles(graph)]
    assert gone == [], "broken at last: remove it from KNOWN_CYCLES"


def test_every_room_of_the_core_stands_in_the_room_list(graph: Graph) -> None:
    rooms = {room_of(m) for m in core_only(graph).modules}
    assert sorted(rooms - set(layer_index(CORE_ROOMS))) == [], "place it in CORE_ROOMS"


def test_no_import_points_up_the_rooms_of_the_core(graph: Graph) -> None:
    assert bad_imports(core_only(graph), CORE_ROOMS, {}, room_of) == []


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    crowded = {
        str(folder.relative_to(PACKAGE.parent)): n
        for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir())]
        if (n := len([f for f in folder.glob("*.py") if f.name != "__init__.py"]))
        > MAX_FOLDER_MODULES
    }
    assert crowded == {}, "give the folder rooms of its own"


def test_checker_finds_an_import_up_the_rooms_of_the_core(copy: Path) -> None:
    _plant(copy, "core/journal/records.py", "def _peek():\n    from agent_tui.core.turn import turn\n")
    (bad,) = bad_imports(core_only(build_graph(copy)), CORE_ROOMS, {}, room_of)
    assert "agent_tui.core.journal.records imports agent_tui.core.turn.turn" in bad


def test_no_import_cycle_in_the_bench() -> None:
    bench = PACKAGE.parent / "bench"
    assert [sorted(c) for c in cycles(build_graph(bench))] == []


def test_textual_is_imported_by_the_tui_alone(graph: Graph) -> None:
    assert misplaced_packages(graph, ONLY_IN) == []


def test_imports_inside_functions_are_in_the_graph(graph: Graph) -> None:
    # the entry points import everything but paths inside their functions
    assert "agent_tui.headless" in graph.edges["agent_tui.cli"]
    assert "agent_tui.settings" in graph.edges["agent_tui.cli.wiring"]


# -- the checker, shown to fail ------------------------------------------------------------


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    root = tmp_path / "agent_tui"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _plant(root: Path, rel: str, code: str) -> None:
    path = root / rel
    path.write_text(path.read_text() + "\n\n" + code + "\n")


def test_checker_finds_a_lazy_import_that_points_up(copy: Path) -> None:
    _plant(copy, "core/history/history.py", "def _peek():\n    from agent_tui.tools import bash\n")
    graph = build_graph(copy)

    (bad,) = bad_imports(graph, LAYERS)

    assert bad.startswith("core/history/history.py:")
    assert "agent_tui.core.history.history imports agent_tui.tools.bash (core is below tools)" in bad


def test_checker_finds_a_relative_import_from_the_helpers_up(copy: Path) -> None:
    _plant(copy, "paths.py", "from .checkpoints import models as _models")

    (bad,) = bad_imports(build_graph(copy), LAYERS)

    assert "agent_tui.paths imports agent_tui.checkpoints.models" in bad


def test_checker_finds_one_front_end_importing_the_other(copy: Path) -> None:
    _plant(copy, "acp/server.py", "if False:\n    import agent_tui.ui.app")

    (bad,) = bad_imports(build_graph(copy), LAYERS)

    assert "agent_tui.acp.server imports agent_tui.ui.app (acp and ui never import" in bad


@pytest.mark.parametrize("front_end", ["ui/app/main.py", "acp/server.py"])
def test_checker_finds_a_front_end_importing_the_tools(copy: Path, front_end: str) -> None:
    _plant(copy, front_end, "def _late():\n    from agent_tui.mcp.manager import McpManager")

    (bad,) = bad_imports(build_graph(copy), LAYERS)

    unit = front_end.partition("/")[0]
    assert f"imports agent_tui.mcp.manager ({unit} reaches mcp only through" in bad


def test_checker_finds_a_new_cycle(copy: Path) -> None:
    _plant(copy, "cancel.py", "def _late():\n    import agent_tui.paths")
    _plant(copy, "paths.py", "def _late():\n    from agent_tui import cancel")
    graph = build_graph(copy)

    new = [c for c in cycles(graph) if c not in KNOWN_CYCLES]

    assert new == [frozenset({"agent_tui.cancel", "agent_tui.paths"})]


def test_checker_finds_a_module_no_layer_holds(copy: Path) -> None:
    (copy / "extensions").mkdir()
    (copy / "extensions" / "__init__.py").write_text("")

    assert unplaced(build_graph(copy), LAYERS) == ["extensions"]


def test_checker_finds_textual_outside_the_tui(copy: Path) -> None:
    _plant(copy, "core/services/queue.py", "def _draw():\n    from textual.app import App")

    (bad,) = misplaced_packages(build_graph(copy), ONLY_IN)

    assert bad.startswith("agent_tui.core.services.queue:")
