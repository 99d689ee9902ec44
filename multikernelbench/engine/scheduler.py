"""The one loop that drives a run's jobs, whichever executor moves them (engine/executor.py): the local thread
executor (engine/thread_executor.py) or the Ray one (cluster/ray_executor.py).

Why one loop: what a run does with its jobs must not depend on where they run. Here, and only here: builds
are submitted while the executor has room (each asked against the run's time limit as it starts), a
completion's outcome is written into the job's record, a finished job is stored (``JobHost.finish``) and a
task's references released after its last job, the lanes are opened when the schedule says so (at once where
builds may overlap the clocks, else after the last build, the trusted warmer stopped first), and a job whose
lane or shipped build was lost runs once more, never a third time. The calling thread is the only one that
touches a record during the run.
"""

from __future__ import annotations

import collections
from typing import Any

from multikernelbench.engine.executor import (
    BuildLost,
    Built,
    Completion,
    Evaluated,
    Executor,
    LaneLost,
    NoLane,
    NotStarted,
)
from multikernelbench.engine.job import Job, JobHost
from multikernelbench.engine.outcomes import Outcome, Skipped, record
from multikernelbench.engine.schedule import Schedule
from multikernelbench.records import EvalResult, Status

#: Longest wait for a completion before the loop looks again (a Ray driver also checks its lanes then).
POLL_S = 5.0


class Scheduler:
    """One run over ``todo`` (see the module docstring); ``results`` receives every job's record by index."""

    def __init__(self, host: JobHost, todo: list[Job], results: dict[int, EvalResult], bar: Any,
                 schedule: Schedule, executor: Executor) -> None:
        self.host, self.todo, self.results, self.bar = host, todo, results, bar
        self.schedule, self.executor = schedule, executor
        self.waiting_builds: collections.deque[Job] = collections.deque(todo)
        self.building = 0  # builds submitted and not yet ended
        self.to_device = 0  # jobs ever handed to the lanes (none: the lanes are never started)
        self.done = 0

    def run(self) -> None:
        if self.schedule.open_at_start():
            self.executor.open_lanes()
        try:
            self.submit_builds()
            while self.done < len(self.todo):
                for completion in self.executor.poll(POLL_S):
                    self.handle(completion)
                self.submit_builds()
        except BaseException:  # Ctrl-C (util/interrupt.py): start nothing more
            self.executor.close(aborted=True)
            raise
        self.executor.close()

    def submit_builds(self) -> None:
        """Builds while the executor has room; one that would start past the run's time limit is skipped."""
        while self.waiting_builds and self.building < self.executor.build_slots:
            job = self.waiting_builds.popleft()
            skipped = self.schedule.too_late()
            if skipped is not None:
                self.built(job, None, goes_on=False)
                self.skip(job, skipped)
                continue
            self.building += 1
            self.executor.submit_build(job)

    def handle(self, completion: Completion) -> None:
        job = completion.job
        if isinstance(completion, Built):
            self.building -= 1
            self.built(job, completion.outcome, completion.goes_on)
            if not completion.goes_on:
                self.finish(job)
        elif isinstance(completion, Evaluated):
            record(job.result, completion.outcome)
            self.finish(job)
        elif isinstance(completion, NotStarted):
            self.skip(job, completion.skipped)
        elif isinstance(completion, LaneLost):
            self.again(job, completion.why, rebuild=False)
        elif isinstance(completion, BuildLost):
            self.again(job, completion.why, rebuild=True)
        elif isinstance(completion, NoLane):
            job.result.message = completion.message
            self.finish(job)

    def built(self, job: Job, outcome: Outcome | None, goes_on: bool) -> None:
        """A build step ended: its outcome recorded, the job to the lanes if it goes on, and the lanes opened
        when this was the last build (none at all when every candidate failed to build)."""
        if outcome is not None:
            record(job.result, outcome)
        self.bar.advance("compile")
        last = self.schedule.build_ended()
        if goes_on:
            self.to_device += 1
            self.executor.submit_device(job)
        if last and self.to_device:
            self.executor.open_lanes()

    def again(self, job: Job, why: str, rebuild: bool) -> None:
        """A job whose lane (or shipped build) was lost runs once more, at the front of the queue; the second
        loss is its verdict (a candidate that kills its own lane twice looks like this)."""
        if self.schedule.run_again(job.index):
            self.host.rescheduled.append(job.cand.label)
            if rebuild:
                self.schedule.build_ended(rebuilt=True)
                self.waiting_builds.appendleft(job)
            else:
                self.executor.submit_device(job, first=True)
            return
        if rebuild:
            job.result.status = Status.RUNTIME_ERROR
            job.result.message = f"harness: the candidate's build was lost twice on the cluster ({why})"
        else:
            job.result.status = Status.CRASH
            job.result.message = (f"harness: the device lane died again while evaluating this candidate "
                                  f"(rescheduled once already; {why})")
        self.finish(job)

    def skip(self, job: Job, skipped: Skipped) -> None:
        """Not started before the run's time limit: returned, neither stored nor emitted."""
        record(job.result, skipped)
        self.results[job.index] = job.result
        self.bar.advance("evaluate")
        self.ended(job)

    def finish(self, job: Job) -> None:
        self.host.finish(job, self.results, self.bar)
        self.ended(job)

    def ended(self, job: Job) -> None:
        self.done += 1
        if self.schedule.job_done(job.task.id):
            self.executor.release(job.task.id)
