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

Four modules more, :data:`ON_CALL`, are loaded on the first call of a function the SDK binds
from them at import, each bound to a forwarder to the real one: ``make_status_error``, which a
request calls only when it failed (its module imports some 280 error types), and the
tracing's ``finish_api_call_span``, ``messages_create_request_attributes``, ``get`` and the
two that share a stream helper's snapshot, which the SDK calls only when an OpenTelemetry tracer
is set or a stream helper is used (their modules import the request types of both message APIs
for a type alias, some 400 modules). Any other name read from such a
module loads it.

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
#: Modules the client imports for functions it calls only in some runs, each loaded at the
#: first call of one of them: ``_error_classes`` imports some 280 error types to map a failed
#: request's status and code to its class (about 60 ms of CPU); the tracing's ``_api_call``
#: records a call on its OpenTelemetry span, which the client calls only when a tracer is set;
#: it, ``_utils`` (whose ``get`` the batches API binds for its span's attributes) and
#: ``_streaming`` (whose two functions the stream helpers call, to share their snapshot with a
#: span) import the request types of both message APIs, the beta's included (some 400
#: modules, about 150 ms), for a type alias.
ON_CALL = {"anthropic._error_classes": ("make_status_error",),
           "anthropic.lib._tracing._api_call": ("finish_api_call_span",
                                                "messages_create_request_attributes"),
           "anthropic.lib._tracing._utils": ("get",),
           "anthropic.lib._tracing._streaming": ("share_message_snapshot",
                                                 "withhold_message_snapshot"),
           "anthropic.lib._parse._response": ("parse_response", "parse_beta_response",
                                              "parse_text")}
#: Names of an :data:`ON_CALL` module that are made at once, each a ``TypeVar`` the importers
#: use in their own generic classes: ``_parse._response`` parses a structured output (the
#: ``parse`` method, a stream helper's text), and imports the beta message types for it (some
#: 300 modules, about 100 ms); its ``ResponseFormatT`` is read at import by every message API.
#: The one made at once stays the module's when the rest of it is run.
MADE_AT_ONCE = {"anthropic.lib._parse._response": ("ResponseFormatT",)}

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
        for name, functions in ON_CALL.items():
            _plan_module(name, calls[name], functions, MADE_AT_ONCE.get(name, ()))
        tables = {name: (table, exported) for name, (_, table, exported) in plans.items()}
        _keep(key, tables)
    packages = [_LazyPackage(name, _spec(name, path, package=True), *tables[name])
                for name, path in inits.items()]
    modules = [_OnCall(name, _spec(name, calls[name], package=False), functions,
                       MADE_AT_ONCE.get(name, ())) for name, functions in ON_CALL.items()]
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


def _plan_module(name: str, path: Path, functions: tuple[str, ...],
                 made_at_once: tuple[str, ...] = ()) -> Any:
    """The spec of a module of imports, constants, type aliases, plain classes and functions
    that defines ``functions`` (its logger and its ``if TYPE_CHECKING:`` imports allowed):
    nothing in it acts when it is run but binding its own names."""
    spec = _spec(name, path, package=False)
    defined: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        match node:
            case ast.Import() | ast.ImportFrom() | ast.Expr(value=ast.Constant()):
                pass
            case ast.Assign(targets=[ast.Name()], value=ast.Dict() | ast.Constant() | ast.List()):
                pass
            case ast.Assign(targets=[ast.Name()], value=ast.BinOp(
                    left=ast.Name(), op=ast.BitOr(), right=ast.Name()) | ast.Subscript(
                        value=ast.Name(id="Callable"))):
                pass  # a type alias: ``Body = A | B``, ``Reader = Callable[[], A | None]``
            case ast.ClassDef(decorator_list=[], keywords=[], bases=[]) if not made_at_once:
                pass  # a plain class, made when the module is
            case _ if _type_var(node, made_at_once):
                pass
            case ast.AnnAssign(target=ast.Name(), value=ast.Dict() | ast.Constant()):
                pass
            case ast.AnnAssign(target=ast.Name(id="log"), value=ast.Call(
                    func=ast.Attribute(value=ast.Name(id="logging"), attr="getLogger"),
                    args=[ast.Name(id="__name__")], keywords=[])):
                pass
            case ast.If(test=ast.Name(id="TYPE_CHECKING"), orelse=[]) if all(
                    isinstance(n, ast.Import | ast.ImportFrom) for n in node.body):
                pass
            case ast.FunctionDef(name=str(defined_name), decorator_list=[]):
                defined.add(defined_name)
            case _:
                raise _Shape(f"{name}: {ast.dump(node)[:80]}")
    if missing := set(functions) - defined:
        raise _Shape(f"{name} defines no {', '.join(sorted(missing))}")
    return spec


def _type_var(node: ast.stmt, names: tuple[str, ...]) -> bool:
    """``Name = TypeVar("Name", ...)`` with constant arguments, ``Name`` one of ``names``."""
    match node:
        case ast.Assign(targets=[ast.Name(id=str(target))], value=ast.Call(
                func=ast.Name(id="TypeVar"), args=[ast.Constant(value=str(called)), *rest],
                keywords=keywords)) if target in names and target == called:
            return all(isinstance(a, ast.Constant) for a in rest) and all(
                isinstance(k.value, ast.Constant) for k in keywords)
    return False


def _made_at_once(path: Path, names: tuple[str, ...]) -> Any:
    """The code of a module's ``TypeVar`` lines among ``names``, with its ``TypeVar`` import."""
    body = [node for node in ast.parse(path.read_text(encoding="utf-8")).body
            if _type_var(node, names) or (isinstance(node, ast.ImportFrom) and any(
                a.name == "TypeVar" and a.asname is None for a in node.names))]
    if sorted(t.id for n in body if isinstance(n, ast.Assign) for t in n.targets
              if isinstance(t, ast.Name)) != sorted(names):
        raise _Shape(f"{path.name}: not every one of {names} is a TypeVar line")
    return compile(ast.Module(body=body, type_ignores=[]), str(path), "exec")


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
    """One module in ``sys.modules``, run on the first call of one of its ``functions`` (whose
    names the importers bind at once) or the first read of any other name; its
    ``made_at_once`` names (``TypeVar`` lines) are made when it is registered, and stay."""

    def __init__(self, name: str, spec: Any, functions: tuple[str, ...],
                 made_at_once: tuple[str, ...] = ()) -> None:
        self.name, self.spec, self.functions = name, spec, functions
        self.module = importlib.util.module_from_spec(spec)
        self.made = _made_at_once(Path(spec.origin), made_at_once) if made_at_once else None
        self.made_names = made_at_once
        self.loaded = False

    def register(self) -> None:
        sys.modules[self.name] = self.module
        self.module.__getattr__ = self.attribute  # type: ignore[method-assign]
        for function in self.functions:
            setattr(self.module, function, self._forwarder(function))
        if self.made is not None:
            exec(self.made, self.module.__dict__)  # noqa: S102 - the SDK's own lines, checked
        parent, _, child = self.name.rpartition(".")
        # a parent without an ``__init__`` (``anthropic.lib._parse``) is made as a plain import would
        setattr(importlib.import_module(parent), child, self.module)

    def _forwarder(self, function: str) -> Any:
        def forward(*args: Any, **kwargs: Any) -> Any:
            return getattr(self.load(), function)(*args, **kwargs)

        forward.__name__ = forward.__qualname__ = function
        forward.__module__ = self.name  # named as the real one is
        return forward

    def load(self) -> ModuleType:
        with _lock:
            if not self.loaded:
                self.loaded = True
                del self.module.__getattr__
                kept = {name: self.module.__dict__[name] for name in self.made_names}
                self.spec.loader.exec_module(self.module)  # binds the real functions too
                self.module.__dict__.update(kept)  # the TypeVars the importers' classes use
        return self.module

    def attribute(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(f"module {self.name!r} has no attribute {attr!r}")
        return getattr(self.load(), attr)
