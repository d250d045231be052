"""The agent as child subreaper (Linux): orphaned descendants reparent to us, not init.

So a descendant that leaves its run's group (setsid, double fork) stays findable and
its exit status is ours to collect.
"""

from __future__ import annotations

from agent_tui.process_guard import prctl

_PR_SET_CHILD_SUBREAPER = 36

_subreaper_state: bool | None = None


def enable_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux). Idempotent."""
    global _subreaper_state
    if _subreaper_state is None:
        try:
            _subreaper_state = prctl(_PR_SET_CHILD_SUBREAPER, 1) == 0
        except (OSError, AttributeError):
            _subreaper_state = False
    return _subreaper_state
