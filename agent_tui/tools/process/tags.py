"""The tags that mark a process as ours: one per run, one per agent process.

Every process of a run inherits both in its environment, so a descendant that left
the run's process group can still be found by them.
"""

from __future__ import annotations

import uuid

RUN_ID_ENV = "AGENT_TUI_RUN_ID"
OWNER_ENV = "AGENT_TUI_OWNER"
#: One value per agent process: every run of ours carries it, so ``kill_all_runs``
#: finds them all, even those whose ProcessRun object is gone.
OWNER_ID = uuid.uuid4().hex
