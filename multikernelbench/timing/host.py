"""Host-clock sampling: right for synchronous CPU kernels (OpenMP regions join before they return)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from multikernelbench.timing.config import TimingConfig
from multikernelbench.timing.loop import Fn, Fresh, Plan, Sampler, Timer


class HostClockSampler(Sampler):
    method = "host_perf_counter"

    def __init__(self, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self._clock = clock  # bound before any candidate code is loaded into the worker

    def plan(self, name: str, fn: Fn, fresh: Fresh) -> Plan:
        return Plan(1, lambda: [fn(0)], self.method)

    def sample(self, plan: Plan) -> tuple[float, bool, list[Any]]:
        t0 = self._clock()
        outs = plan.body()
        return (self._clock() - t0) / 1e6, False, outs


def host_timer(cfg: TimingConfig) -> Timer:
    return Timer(cfg, HostClockSampler())
