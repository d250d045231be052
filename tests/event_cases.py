"""Whether a front end's dispatch names every Event type of the protocol.

The dispatch is one ``match`` on the event types ending in ``case _: assert_never``;
read from its source (nothing runs), a type the ``match`` does not name is one a new
Event would fall through unhandled.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import typing
from collections.abc import Callable
from typing import Any

from agent_tui.protocol import Event


def event_types() -> set[str]:
    return {cls.__name__ for cls in typing.get_args(Event)}


def unhandled_events(func: Callable[..., Any]) -> set[str]:
    """The Event types ``func``'s ``match`` has no case for; fails when the ``match``
    does not end in ``case _: assert_never(...)``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    matches = [n for n in ast.walk(tree) if isinstance(n, ast.Match)]
    assert matches, f"{func.__qualname__} has no match statement"
    last = matches[0].cases[-1]
    assert isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None, \
        f"{func.__qualname__}: the last case must be `case _`"
    calls = [n.func.id for n in ast.walk(last) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name)]
    assert "assert_never" in calls, f"{func.__qualname__}: `case _` must call assert_never"
    named = {node.cls.id for node in ast.walk(matches[0])
             if isinstance(node, ast.MatchClass) and isinstance(node.cls, ast.Name)}
    return event_types() - named
