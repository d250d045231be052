"""The run unit for local commands: every local process starts, stops and is cleaned up here.

A :class:`ProcessRun` owns one command and everything it spawns:

- **Start.** The command runs in a new session (so its own process group, the agent
  never in it), stdin from /dev/null, stdout and stderr merged into one pipe we read.
  Where the agent may make cgroups (:mod:`.cgroup_tree`), it runs in a cgroup v2 of
  its own, entered before its program runs, with the limits of ``limits.pids`` and
  ``limits.memory``: nothing it spawns is born outside, and ``cgroup.kill`` ends all.
  Every process of the run inherits a tag in its environment (``AGENT_TUI_RUN_ID``,
  ``AGENT_TUI_OWNER``), and the agent is made a child subreaper (Linux), so a
  descendant that leaves the group (setsid, double fork) still reparents to us and can
  be found by its tag.
- **Wait.** ``wait(scope)`` returns when the leader exits or the scope is cancelled.
  The leader's exit is confirmed by reaping it (pidfd), never assumed from a signal.
- **Stop.** ``stop(reason)``: SIGTERM to the group and to every process in the
  cgroup (or, without one, every tagged escapee), a bounded grace, then
  ``cgroup.kill`` (or SIGKILL to what is left); the kernel's ``populated 0`` and
  reaping confirm each end; then the pipe is
  drained for a bounded time (Go's ``WaitDelay``), a descendant still holding it is
  named, our end is closed, and a last sweep ends leftovers. What cannot be ended is
  *residue*, reported by PID and command line.
- **Finish.** ``finish()`` after a natural exit: the same drain and leftover sweep.
- **Output.** Bounded in memory whatever the command prints: head and tail are kept,
  the middle is counted; listeners see every chunk as it comes.

Reaping rule: we only ``waitpid`` PIDs we spawned (the leaders) or found tagged as
ours (orphans reparented to us by the subreaper). Never ``waitpid(-1)``: asyncio's
child watcher (3.11: ThreadedChildWatcher, which waits per PID) and anything else in
the agent keep their children's exit statuses. The one exception is the agent's
:class:`~.orphans.OrphanReaper` (started by the front ends, not by a run): a zombie
child that is no live run's leader and stayed a zombie for a whole scan (5 s) has no
one waiting for it (an orphan some MCP server or detached git left), and it reaps that.

``kill_all_runs()`` is the synchronous last resort for atexit and signal handlers.

The package, one job a module:

- :mod:`.tags`: the environment tags that mark a process as a run's and the agent's.
- :mod:`.limits`: :class:`RunLimits`, the bounds of one run.
- :mod:`.output`: bounded capture and throttled streaming of output, ``strip_ansi``.
- :mod:`.records`: the facts a run ends with (:class:`RunResult`, :class:`Cleanup`).
- :mod:`.subreaper`: making the agent the reaper of its orphaned descendants.
- :mod:`.orphans`: reaping adopted orphans nobody waits for.
- :mod:`.cgroup_tree`: where the agent may make cgroups, and which containment is in
  force (:func:`containment`: a cgroup per command, or the sweep below).
- :mod:`.cgroup`: one command's cgroup: entered before exec, ``cgroup.kill``, limits.
- :mod:`.discovery`: finding a run's processes by tag, group and descent; signalling
  them and the one "is it gone" test (``is_gone``), which reaps adopted orphans.
- :mod:`.terminate`: the one TERM -> grace -> KILL -> confirm escalation, used by every
  process ender (runs, the atexit hook, MCP servers, leftovers of a crash).
- :mod:`.pipe_holders`: who still holds a run's output pipe.
- :mod:`.pipe_reader`: reading the output pipe on the loop.
- :mod:`.leader`: the spawned leader, watched (pidfd) until it is reaped.
- :mod:`.run`: :class:`ProcessRun`, the run unit itself.
- :mod:`.registry`: the live runs, ``kill_all_runs`` for atexit and signal handlers,
  and the one atexit hook.
"""

from agent_tui.runtime.process.discovery import processes_of_owner
from agent_tui.runtime.process.limits import DEFAULT_DRAIN_S, DEFAULT_GRACE_S, RunLimits
from agent_tui.runtime.process.output import OutputCapture, OutputThrottle, strip_ansi
from agent_tui.runtime.process.cgroup_tree import Containment, ContainmentMode, containment
from agent_tui.runtime.process.limits import configure_limits
from agent_tui.runtime.process.records import Cleanup, Escalation, LimitHit, RunPhase, RunResult
from agent_tui.runtime.process.registry import kill_all_runs, live_runs
from agent_tui.runtime.process.run import ProcessRun
from agent_tui.runtime.process.subreaper import enable_subreaper
from agent_tui.runtime.process.tags import OWNER_ENV, RUN_ID_ENV, owner_id

__all__ = [
    "processes_of_owner",
    "DEFAULT_DRAIN_S",
    "DEFAULT_GRACE_S",
    "OWNER_ENV",
    "RUN_ID_ENV",
    "Cleanup",
    "Containment",
    "ContainmentMode",
    "LimitHit",
    "configure_limits",
    "containment",
    "Escalation",
    "OutputCapture",
    "OutputThrottle",
    "ProcessRun",
    "RunLimits",
    "RunPhase",
    "RunResult",
    "enable_subreaper",
    "kill_all_runs",
    "live_runs",
    "owner_id",
    "strip_ansi",
]
