"""A candidate on its way through a run, and what the scheduler and executors need of the runner that owns it.

Its own module so that the scheduler (engine/scheduler.py), the executors (engine/thread_executor.py,
cluster/ray_executor.py) and the Runner that starts them depend on it, not on each other: they see the runner
only through :class:`JobHost`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from multikernelbench.records import EvalResult

if TYPE_CHECKING:
    from multikernelbench.backends import Backend
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.clean_reference import CleanReference
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.reference import SeedSource
    from multikernelbench.engine.trace import Trace
    from multikernelbench.tasks.record import Task


@dataclass
class Job:
    index: int  # its place in the run's list of candidates (results come back in that order)
    task: Task
    cand: Candidate
    result: EvalResult  # the one record the stages' outcomes are written into (engine/outcomes.py:record)


class JobHost(Protocol):
    """The runner as the scheduler and the executors see it: its configuration and services, and the one place a
    finished job is stored and emitted."""

    config: EngineConfig
    backend: Backend
    seeds: SeedSource
    trace: Trace
    zygote: Any
    clean_refs: CleanReference
    reference_counts: dict[str, int]
    reference_held: dict[str, list[str]]
    rescheduled: list[str]

    def lanes(self) -> list[int | None]: ...

    def build_dir(self, cand: Candidate) -> Path: ...

    def finish(self, job: Job, results: dict[int, EvalResult], bar: Any) -> None: ...
