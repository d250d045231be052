"""The facts of a run: its phase, the signals it took to end, its cleanup, its result."""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
from enum import StrEnum


from agent_tui.protocol.model_base import DeferredModel
from agent_tui.cancel import CancelReason
from agent_tui.core.calls.tool import Residue


class RunPhase(StrEnum):
    CREATED = "created"
    RUNNING = "running"
    STOPPING = "stopping"  # we asked it to end (TERM/KILL), cleanup under way
    FINISHING = "finishing"  # it ended by itself; draining and sweeping leftovers
    FINISHED = "finished"


class Escalation(StrEnum):
    """What we had to send to end the run's processes."""

    NONE = "none"  # nothing had to be signalled
    TERM = "term"  # everything ended within the grace after SIGTERM
    KILL = "kill"  # something outlived the grace and got SIGKILL


class LimitHit(StrEnum):
    """A limit of the command's cgroup that stopped something."""

    PIDS = "pids"  # a fork failed: the command had limits.pids tasks
    MEMORY = "memory"  # the kernel's OOM killer ended a process at limits.memory


class Cleanup(DeferredModel):
    """The facts of a run's cleanup. Exited, complete and released are separate facts."""

    grace_s: float
    grace_used_s: float | None = None  # SIGTERM until all ended, or until SIGKILL
    escalation: Escalation = Escalation.NONE
    process_exited: bool = False  # the leader was reaped: its exit status is known
    output_complete: bool = False  # end of file was read: nothing was cut off
    descriptors_released: bool = False  # no process still holds the output pipe
    drain_s: float
    drain_waited_s: float = 0.0
    pipe_holders: list[Residue] = []  # who kept the pipe open after the leader ended
    ended: list[Residue] = []  # processes besides the leader that we ended
    cleanup_s: float = 0.0
    cgroup: str | None = None  # the command's own cgroup, when commands run in cgroups
    in_cgroup_at_kill: int | None = None  # processes still in it when cgroup.kill came


class RunResult(DeferredModel):
    """How a run ended, in facts."""

    run_id: str
    pid: int
    exit_code: int | None = None
    signal: str | None = None  # the signal that ended the leader, e.g. "SIGKILL"
    ended_by: CancelReason | None = None  # who made us stop it; None: it ended by itself
    duration_s: float
    output: str  # model view: bounded, ANSI stripped
    output_bytes: int
    dropped_bytes: int
    cleanup: Cleanup
    residue: list[Residue] = []
    limit_hits: list[LimitHit] = []  # limits of its cgroup that stopped something

    @property
    def killed(self) -> bool:
        return self.ended_by is not None
