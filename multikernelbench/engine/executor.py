"""What moves a run's jobs, as the one scheduling loop (engine/scheduler.py) sees it: submit, then poll for typed
completions.

Why an interface: the local runner moves jobs with a thread pool and lane threads (engine/thread_executor.py), the
Ray runner with tasks and lane actors (cluster/ray_executor.py). Both used to carry their own driving loop, and
the two loops drifted (one counted a task's last job on its lanes only, the other on every job). Now an
executor only starts work and reports what ended; what to submit next, what a completion means for the record,
when a lost job runs again and when the lanes open are decided once, by :class:`~.scheduler.Scheduler` asking
:class:`~.schedule.Schedule`.

Which lane runs a job is the executor's: local lanes take the next built job themselves at the moment they can
start its worker ahead (engine/prefetch.py needs that choice made in the lane's thread, at its current job's
start); the Ray driver places each job on a lane actor with a free slot once one is up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from multikernelbench.engine.job import Job
from multikernelbench.engine.outcomes import Outcome, Skipped


@dataclass
class Built:
    """A job's build step ended. ``outcome``: what to record (None: nothing, e.g. nothing to build);
    ``goes_on``: it goes to a device lane, else it is done."""

    job: Job
    outcome: Outcome | None
    goes_on: bool


@dataclass
class Evaluated:
    """A job's device step ended with ``outcome``: record it, the job is done."""

    job: Job
    outcome: Outcome


@dataclass
class NotStarted:
    """A lane was free for the job after the run's time limit: returned, neither stored nor emitted."""

    job: Job
    skipped: Skipped


@dataclass
class LaneLost:
    """The lane that ran the job died before it ended (its process killed, its node stopped)."""

    job: Job
    why: str


@dataclass
class BuildLost:
    """The job's shipped build was lost before its lane could read it (its node stopped)."""

    job: Job
    why: str


@dataclass
class NoLane:
    """No device lane could take the job (none came up, or every one died): recorded as not evaluated."""

    job: Job
    message: str


Completion = Built | Evaluated | NotStarted | LaneLost | BuildLost | NoLane


class Executor(Protocol):
    """Moves jobs for the scheduler; every method is called from the scheduler's thread."""

    #: Builds in flight at most (the scheduler submits no more, so the time limit is asked when a build starts).
    build_slots: int

    def submit_build(self, job: Job) -> None:
        """Start the job's build step; a :class:`Built` follows."""

    def open_lanes(self) -> None:
        """Start the device lanes (once; the scheduler decides when, from the schedule)."""

    def submit_device(self, job: Job, first: bool = False) -> None:
        """Queue a built job for the lanes (``first``: ahead of the others, a job that runs again); an
        :class:`Evaluated`, :class:`NotStarted`, :class:`LaneLost`, :class:`BuildLost` or :class:`NoLane`
        follows."""

    def release(self, task_id: str) -> None:
        """The task's last job is done: free what the lanes hold for it (references, clean timings)."""

    def poll(self, timeout: float) -> list[Completion]:
        """What ended since the last poll, waiting up to ``timeout`` seconds for something to end."""
        ...

    def close(self, aborted: bool = False) -> None:
        """Stop the lanes (after the last job, or ``aborted`` by an exception such as Ctrl-C)."""
