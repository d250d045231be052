"""The language between the core and its front ends: Ops in, Events out, and the
states both sides name.

Cheap to import: a front end, a test or a script can speak to a session without
loading the core. ``from agent_tui.protocol import UserMessage``. The states (enums)
are here at once; the Ops and Events (pydantic models, pydantic itself included) are
imported when one of their names is first asked for, so that what only needs a state
(the TUI's first frame) does not pay for building every model.
"""

from importlib import import_module
from os import listdir, path
from typing import TYPE_CHECKING, Any

from agent_tui.protocol.states import *  # noqa: F401,F403

if TYPE_CHECKING:  # what the type checker reads; at run time, loaded on first use
    from agent_tui.protocol.events import *  # noqa: F401,F403
    from agent_tui.protocol.ops import *  # noqa: F401,F403
    from agent_tui.protocol.run_result import *  # noqa: F401,F403

#: The modules that hold the models, imported on first use of one of their names.
_MODELS = ("agent_tui.protocol.events", "agent_tui.protocol.ops", "agent_tui.protocol.run_result")
_loaded = False
#: This package's modules, which a name lookup never loads the models for.
_SUBMODULES = frozenset(n.removesuffix(".py") for n in listdir(path.dirname(__file__)) if n.endswith(".py"))


def _load_models() -> None:
    global _loaded
    if _loaded:
        return
    for name in _MODELS:
        module = import_module(name)
        names = getattr(module, "__all__", None) or [k for k in vars(module) if not k.startswith("_")]
        for key in names:  # what ``from module import *`` takes
            globals().setdefault(key, getattr(module, key))
    _loaded = True


def _all() -> list[str]:
    _load_models()
    return sorted(
        name
        for name, value in list(globals().items())
        if not name.startswith("_")
        and (getattr(value, "__module__", "").startswith("agent_tui.protocol.")
             or name in ("OP_ADAPTER", "Op", "Event"))
    )


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return _all()
    # ``from agent_tui.protocol import tool_names`` asks for the module as a name first
    if not name.startswith("__") and name not in _SUBMODULES:
        _load_models()
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module 'agent_tui.protocol' has no attribute {name!r}")


def __dir__() -> list[str]:
    return _all()
