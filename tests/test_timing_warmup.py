"""The timing loop's warm-up: a fixed number of calls, then (when asked) back-to-back calls until the device
has been busy for a while (for a device whose clocks drop when idle; off by default). Real host timer, real
calls."""

from __future__ import annotations

import time

from multikernelbench.timing.config import TimingConfig
from multikernelbench.timing.host import HostClockSampler, host_timer
from multikernelbench.timing.loop import Sampler


def _counting(log: list[float]):
    def fn(_slot: int) -> int:
        log.append(time.perf_counter())
        time.sleep(0.002)
        return 0
    return fn


def test_warmup_runs_for_the_configured_seconds_before_the_first_sample():
    log: list[float] = []
    t0 = time.perf_counter()
    stats = host_timer(TimingConfig(warmup=2, warmup_s=0.2, min_runs=3, max_runs=3, budget_s=5)).measure(
        {"a": _counting(log)})
    assert stats["a"].runs == 3
    warm = log[:-3]  # every call before the three samples
    assert len(warm) > 2 + 20, len(warm)  # well past the counted warm-up: 2 ms calls for 0.2 s
    assert log[-3] - t0 >= 0.2  # no sample before the device was busy for warmup_s


def test_host_timer_default_adds_no_timed_warmup():
    log: list[float] = []
    host_timer(TimingConfig(warmup=2, min_runs=3, max_runs=3, budget_s=5)).measure({"a": _counting(log)})
    assert len(log) == 2 + 3
    assert HostClockSampler.warmup_s == 0.0 == Sampler.warmup_s

