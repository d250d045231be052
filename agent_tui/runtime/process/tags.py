"""The tags that mark a process as ours: one per run, one per agent process.

Every process of a run inherits both in its environment, so a descendant that left
the run's process group can still be found by them.

The owner tag is this agent process's own: a process forked from it (``os.fork``: a
forked agent, a test's child) is another agent process and gets a new one at the
fork, so it tells its parent's processes (its predecessor's leftovers) from its own.
Read it when it is used (:func:`owner_id`), never keep a copy made at import.
"""

from __future__ import annotations

import os
import uuid

RUN_ID_ENV = "AGENT_TUI_RUN_ID"
OWNER_ENV = "AGENT_TUI_OWNER"

_owner = uuid.uuid4().hex


def owner_id() -> str:
    """This agent process's owner tag: every run of ours carries it, so ``kill_all_runs``
    finds them all, even those whose ProcessRun object is gone."""
    return _owner


def _new_owner() -> None:
    global _owner
    _owner = uuid.uuid4().hex


os.register_at_fork(after_in_child=_new_owner)
