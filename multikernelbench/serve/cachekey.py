"""The service's cache key: everything that can change a result, and how strong a cached answer is.

The results store is keyed by (task, task hash, backend, hardware, code hash, policy): right for ``mkb eval``
(one configuration per run) but not for a service whose clients choose options per request. A client that
submits another's source with ``timing_budget_s: 0.001`` must not fix the answer everyone else gets. So a
cached answer is looked up by an exact key -- task and its hash, code hash, backend and its options, hardware,
seeds policy, sandbox level, evaluation policy, anti-cheat settings, whether timing runs, harness and toolchain
versions -- and served only when it is at least as strong as the request on the two graded options: as many
fresh shapes checked and at least the timing budget asked for.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass

from multikernelbench import __version__
from multikernelbench.engine.config import EngineConfig
from multikernelbench.tasks.record import Task


@dataclass(frozen=True)
class Strength:
    """The graded options of one evaluation; a cached answer must be at least the request's on each."""

    fresh_shapes: int
    timing_budget_s: float  # 0 when the service does not time

    def covers(self, asked: Strength) -> bool:
        return self.fresh_shapes >= asked.fresh_shapes and self.timing_budget_s >= asked.timing_budget_s


def engine_fingerprint(eng: EngineConfig, hardware: str, versions: dict[str, str], sandbox: str) -> str:
    """The service-wide part of the key: what every job of this service shares."""
    timing = dataclasses.asdict(eng.timing)
    timing.pop("budget_s", None)  # graded per request (Strength)
    parts = {
        "harness": __version__, "backend": eng.backend, "backend_options": eng.backend_options,
        "hardware": hardware, "versions": versions, "sandbox": sandbox, "allow_weak_sandbox": eng.allow_weak_sandbox,
        "seeds": "secret" if eng.seed is None else f"fixed:{eng.seed}", "policy": eng.policy,
        "skip_timing": eng.skip_timing, "timing": timing, "anticheat": dataclasses.asdict(eng.anticheat),
        "check_timed_outputs": eng.check_timed_outputs, "timed_check_positions": eng.timed_check_positions,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def job_key(fingerprint: str, task: Task, chash: str) -> str:
    """The exact key of one (task, code) under one service configuration."""
    return hashlib.sha256(f"{fingerprint}\0{task.id}\0{task.content_hash}\0{chash}".encode()).hexdigest()


def strength(eng: EngineConfig, fresh_shapes: int, timing_budget_s: float | None) -> Strength:
    budget = 0.0 if eng.skip_timing else float(timing_budget_s or eng.timing.budget_s)
    return Strength(fresh_shapes=fresh_shapes, timing_budget_s=budget)
