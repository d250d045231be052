"""The Anthropic SDK loaded for what a request needs: its package ``__init__`` files bind names on first use.

``import anthropic`` runs the SDK's package ``__init__``, which imports every type and client
the SDK has (Bedrock, Vertex, the beta, session and organisation APIs): some 3,500 modules and
about a second of CPU before ``agent-tui -p`` sends its first request. A request needs under
half of them. :func:`load` puts the SDK's heaviest packages into ``sys.modules`` without
running their ``__init__``; each then resolves a name when it is first read:

- a ``from .module import Name`` line of its ``__init__`` (read from the file, never guessed)
  imports that one module;
- a submodule imports as it always does;
- any other name runs the package's real ``__init__`` once, so nothing the SDK exports goes
  missing.

An ``__init__`` that does more than bind names (a call, a loop) is left to a plain import,
except the top package's two known extras, done as the SDK does them: its logging set-up at
load, and the ``__module__`` of each exported name; and the aliases ``Name: TypeAlias = ...``
(``anthropic.lib.streaming`` binds four pydantic generics so), which a first read of one of
them runs the real ``__init__`` for. A lazy package without ``__all__`` runs its real
``__init__`` when ``__all__`` is asked for (a star import takes every public name then).

One module more, :data:`ON_CALL`, is loaded on the first call of the one function the client
binds from it at import: ``make_status_error``, which a request calls only when it failed, is a
forwarder to the real one, loaded with its some 280 error types at that call.

A package already imported, or any surprise while reading the files, means a plain
``import anthropic``.

Reading the thirteen files with ``ast`` costs about 18 ms of CPU a run, so what they were
found to bind is kept in the state folder (:data:`PLANS_FILE`, about 1 ms to read), under
a key of every file's path, size, time and inode, this loader's own, and the Python
version: any other SDK, a changed file, or a kept file that does not have the shape
written (a name that is not an identifier...) means the files are read again.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = "anthropic"
#: The packages whose ``__init__`` imports far more than a request reads, parents first.
LAZY = (ROOT, "anthropic.lib", "anthropic.lib._tracing", "anthropic.lib.streaming",
        "anthropic.types", "anthropic.types.shared",
        "anthropic.types.beta", "anthropic.types.beta.organization", "anthropic.types.beta.sessions",
        "anthropic.types.organization", "anthropic.resources", "anthropic.resources.beta")
#: Modules the client imports for one function it calls only when a request fails, each
#: loaded at that call: ``_error_classes`` imports some 280 error types to map an error's
#: status and code to its class (about 60 ms of CPU).
ON_CALL = {"anthropic._error_classes": "make_status_error"}

#: Under the state folder: what :func:`_plan` found in each file, and the key it holds for.
PLANS_FILE = Path("cache") / "anthropic-sdk-plans.json"

_lock = threading.RLock()


class _Shape(Exception):
    """An ``__init__`` holds a statement this loader does not model."""


def load() -> ModuleType:
    """The ``anthropic`` package, its heavy ``__init__`` files deferred where that is safe."""
    with _lock:
        if ROOT not in sys.modules:
            try:
                _install()
            except (_Shape, ImportError, OSError, SyntaxError, ValueError):
                for name in (*LAZY, *ON_CALL):
                    sys.modules.pop(name, None)
        return importlib.import_module(ROOT)


def _install() -> None:
    root = importlib.util.find_spec(ROOT)
    if root is None or not root.submodule_search_locations:
        raise _Shape("no anthropic package")
    top = Path(list(root.submodule_search_locations)[0])
    inits = {name: top.joinpath(*name.split(".")[1:], "__init__.py") for name in LAZY}
    calls = {name: top.joinpath(*name.split(".")[1:]).with_suffix(".py") for name in ON_CALL}
    # every file read before sys.modules is touched; a dotted find_spec would import the parent
    key = _key([*inits.values(), *calls.values()])
    tables = _kept(key)
    if tables is None:
        plans = {name: _plan(name, path) for name, path in inits.items()}
        for name, attr in ON_CALL.items():
            _plan_module(name, calls[name], attr)
        tables = {name: (table, exported) for name, (_, table, exported) in plans.items()}
        _keep(key, tables)
    packages = [_LazyPackage(name, _spec(name, path, package=True), *tables[name])
                for name, path in inits.items()]
    modules = [_OnCall(name, _spec(name, calls[name], package=False), attr)
               for name, attr in ON_CALL.items()]
    for package in packages:
        package.register()
    for module in modules:
        module.register()
    packages[0].rename(*packages[0].module.__dict__)  # ``types``, bound by its registration
    logs = importlib.import_module("anthropic._utils._logs")
    logs.setup_logging()  # what the SDK's __init__ does at import (ANTHROPIC_LOG)


Tables = dict[str, tuple[dict[str, tuple[str, str]], list[str] | None]]


def _key(files: list[Path]) -> list[Any]:
    """What the kept plans hold for: the files (and this loader) as they are now."""
    key: list[Any] = [list(sys.version_info[:2])]
    for path in (Path(__file__), *files):
        st = path.stat()
        key.append([str(path), st.st_size, st.st_mtime_ns, st.st_ino])
    return key


#: A kept table: a line ``NAME MODULE ATTRIBUTE`` per name (read with one match and a split:
#: checking some 2,700 entries one by one would cost most of what the cache saves).
_TABLE = re.compile(r"(?:[A-Za-z_]\w* [A-Za-z_][\w.]* [A-Za-z_]\w*\n)*", re.ASCII)
_NAMES = re.compile(r"(?:[A-Za-z_]\w*(?: |\Z))*", re.ASCII)


def _plans_file() -> Path | None:
    from agent_tui.paths import state_home

    try:
        return state_home() / PLANS_FILE
    except (RuntimeError, KeyError):  # no home folder to find: the files are read each run
        return None


def _kept(key: list[Any]) -> Tables | None:
    """The plans kept for ``key``; None when there are none, or not in the shape written."""
    path = _plans_file()
    try:
        kept = json.loads(path.read_bytes()) if path is not None else None
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key:
        return None
    plans = kept.get("plans")
    if not isinstance(plans, dict) or sorted(plans) != sorted(LAZY):
        return None
    tables: Tables = {}
    for name, plan in plans.items():
        match plan:
            case [str(table), None | str() as exported] if _TABLE.fullmatch(table) and (
                    exported is None or _NAMES.fullmatch(exported)):
                words = table.split()
                tables[name] = (dict(zip(words[0::3], zip(words[1::3], words[2::3]))),
                                None if exported is None else exported.split())
            case _:
                return None
    return tables


def _keep(key: list[Any], tables: Tables) -> None:
    """Keep the plans for the next run; a state folder that cannot be written loses nothing."""
    from agent_tui.atomic import write_atomic
    from agent_tui.paths import private_dir

    path = _plans_file()
    if path is None:
        return
    plans = {name: ["".join(f"{attr} {module} {real}\n" for attr, (module, real) in table.items()),
                    None if exported is None else " ".join(exported)]
             for name, (table, exported) in tables.items()}
    try:
        folder = private_dir(path.parent)
        write_atomic(folder, path.name, json.dumps({"key": key, "plans": plans}).encode())
    except OSError:
        pass


def _spec(name: str, path: Path, *, package: bool) -> Any:
    spec = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[str(path.parent)] if package else None)
    if spec is None or spec.loader is None:
        raise _Shape(name)
    return spec


def _plan(name: str, init: Path) -> tuple[Any, dict[str, tuple[str, str]], list[str] | None]:
    """(spec, {name: (module, attribute)}, ``__all__``)."""
    spec = _spec(name, init, package=True)
    body = ast.parse(init.read_text(encoding="utf-8")).body
    table: dict[str, tuple[str, str]] = {}
    exported: list[str] | None = None
    for node in body:
        match node:
            case ast.ImportFrom(level=1, module=str(module)):
                table.update(_bindings(node, module))
            case ast.ImportFrom(level=1, module=None):
                pass  # ``from . import submodule``: a submodule imports as it always does
            case ast.ImportFrom(level=0, module="__future__") | ast.Expr(value=ast.Constant()):
                pass
            case ast.Assign(targets=[ast.Name(id="__all__")]):
                exported = list(ast.literal_eval(node.value))
            case _ if _alias(node):
                pass  # not in the table: its first read runs the real ``__init__``
            case _ if name == ROOT and _root_extra(node):
                pass
            case _:
                raise _Shape(f"{name}: {ast.dump(node)[:80]}")
    return spec, table, exported


def _plan_module(name: str, path: Path, function: str) -> Any:
    """The spec of a module of imports, constants and functions that defines ``function``."""
    spec = _spec(name, path, package=False)
    defined = False
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        match node:
            case ast.Import() | ast.ImportFrom() | ast.Expr(value=ast.Constant()):
                pass
            case ast.Assign(targets=[ast.Name()], value=ast.Dict() | ast.Constant()):
                pass
            case ast.AnnAssign(target=ast.Name(), value=ast.Dict() | ast.Constant()):
                pass
            case ast.FunctionDef(name=str(defined_name), decorator_list=[]):
                defined = defined or defined_name == function
            case _:
                raise _Shape(f"{name}: {ast.dump(node)[:80]}")
    if not defined:
        raise _Shape(f"{name} defines no {function}")
    return spec


def _bindings(node: ast.ImportFrom, module: str) -> dict[str, tuple[str, str]]:
    return {a.asname or a.name: (module, a.name) for a in node.names if a.name != "*"}


def _alias(node: ast.stmt) -> bool:
    """``from typing_extensions import TypeAlias`` and ``Name: TypeAlias = Model[object]``:
    names bound for backward compatibility (``anthropic.lib.streaming``'s four cost 0.1 s,
    each a pydantic generic model built at import)."""
    match node:
        case ast.ImportFrom(level=0, module="typing_extensions", names=[ast.alias(name="TypeAlias")]):
            return True
        case ast.AnnAssign(target=ast.Name(), annotation=ast.Name(id="TypeAlias"), simple=1):
            return True
    return False


def _root_extra(node: ast.stmt) -> bool:
    """The top ``__init__``'s statements besides names: ``import typing as _t``, the
    resources proxy under ``if not TYPE_CHECKING``, ``_setup_logging()``, and the loop that
    sets each exported name's ``__module__`` (with its ``__locals = locals()``). A name the
    ``if`` binds is not in the table: its first read runs the real ``__init__``."""
    match node:
        case ast.Import(names=[ast.alias(name="typing")]):
            return True
        case ast.If(test=ast.UnaryOp(op=ast.Not())):
            return all(isinstance(n, ast.ImportFrom) for n in node.body) and not node.orelse
        case ast.Expr(value=ast.Call(func=ast.Name(id="_setup_logging"), args=[])):
            return True
        case ast.Assign(targets=[ast.Name(id="__locals")]):
            return True
        case ast.For(iter=ast.Name(id="__all__")):
            return True
    return False


class _LazyPackage:
    """One package in ``sys.modules`` whose names are bound as they are read."""

    def __init__(self, name: str, spec: Any, table: dict[str, tuple[str, str]],
                 exported: list[str] | None) -> None:
        self.name, self.spec, self.table = name, spec, table
        # the top package sets its exported names' __module__ to its own name
        self.renamed = frozenset(exported or ()) if name == ROOT else frozenset()
        self.module = importlib.util.module_from_spec(spec)
        if exported is not None:
            setattr(self.module, "__all__", exported)
        self.loaded = False

    def register(self) -> None:
        sys.modules[self.name] = self.module
        self.module.__getattr__ = self.attribute  # type: ignore[method-assign]
        parent, _, child = self.name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, self.module)

    def attribute(self, attr: str) -> Any:
        if attr == "__all__" and not self.loaded:
            # ``from package import *`` takes every public name when there is no ``__all__``:
            # all of them bound first, as a plain import would have
            with _lock:
                if not self.loaded:
                    self._exec()
            raise AttributeError(f"module {self.name!r} has no attribute {attr!r}")
        if attr.startswith("__") and attr not in self.table:  # a probe (``__wrapped__``...)
            raise AttributeError(f"module {self.name!r} has no attribute {attr!r}")
        with _lock:
            if attr in self.module.__dict__:
                return self.module.__dict__[attr]
            if self.loaded:
                raise AttributeError(f"module {self.name!r} has no attribute {attr!r}")
            if attr in self.table:
                module, real = self.table[attr]
                value = getattr(importlib.import_module(f"{self.name}.{module}"), real)
            elif importlib.util.find_spec(f"{self.name}.{attr}") is not None:
                value = importlib.import_module(f"{self.name}.{attr}")
            else:
                return self._run_init(attr)
            setattr(self.module, attr, value)
            self.rename(attr)
            return value

    def rename(self, *names: str) -> None:
        for attr in self.renamed.intersection(names):
            try:
                self.module.__dict__[attr].__module__ = self.name
            except (TypeError, AttributeError):
                pass  # a builtin: the SDK's loop skips it too

    def _run_init(self, attr: str) -> Any:
        self._exec()
        return getattr(self.module, attr)

    def _exec(self) -> None:
        self.loaded = True
        del self.module.__getattr__
        self.spec.loader.exec_module(self.module)


class _OnCall:
    """One module in ``sys.modules``, run on the first call of its ``function`` (whose name
    the importer binds at once) or the first read of any other name."""

    def __init__(self, name: str, spec: Any, function: str) -> None:
        self.name, self.spec, self.function = name, spec, function
        self.module = importlib.util.module_from_spec(spec)
        self.loaded = False

    def register(self) -> None:
        sys.modules[self.name] = self.module
        self.module.__getattr__ = self.attribute  # type: ignore[method-assign]

        def forward(*args: Any, **kwargs: Any) -> Any:
            return getattr(self.load(), self.function)(*args, **kwargs)

        forward.__name__ = forward.__qualname__ = self.function
        setattr(self.module, self.function, forward)
        parent, _, child = self.name.rpartition(".")
        setattr(sys.modules[parent], child, self.module)

    def load(self) -> ModuleType:
        with _lock:
            if not self.loaded:
                self.loaded = True
                del self.module.__getattr__
                self.spec.loader.exec_module(self.module)  # binds the real function too
        return self.module

    def attribute(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(f"module {self.name!r} has no attribute {attr!r}")
        return getattr(self.load(), attr)
