"""The language between the core and its front ends: Ops in, Events out, and the
states both sides name.

Cheap to import (pydantic only): a front end, a test or a script can speak to a
session without loading the core. ``from agent_tui.protocol import UserMessage``.
"""

from agent_tui.protocol.events import *  # noqa: F401,F403
from agent_tui.protocol.events import Event
from agent_tui.protocol.ops import *  # noqa: F401,F403
from agent_tui.protocol.ops import OP_ADAPTER, Op
from agent_tui.protocol.run_result import *  # noqa: F401,F403
from agent_tui.protocol.states import *  # noqa: F401,F403

__all__ = sorted(
    name
    for name, value in list(globals().items())
    if getattr(value, "__module__", "").startswith("agent_tui.protocol.")
    or name in ("OP_ADAPTER", "Op", "Event")
)
