"""The speedup's interval (timing/interval.py) on series whose true ratio is known, measured by the real A/B
loop on the host clock."""

from __future__ import annotations

import random
import time

from multikernelbench.timing.config import TimingConfig
from multikernelbench.timing.host import HostClockSampler
from multikernelbench.timing.interval import drift, speedup_interval
from multikernelbench.timing.loop import Timer


def _drifting_pair(n: int, ratio: float, seed: int = 1) -> tuple[list[float], list[float]]:
    """Rounds whose level moves 3x over the run (load arriving) with 5% noise of each sample's own."""
    rng = random.Random(seed)
    level = [1.0 + 2.0 * i / n for i in range(n)]
    ref = [ratio * lv * rng.lognormvariate(0, 0.05) for lv in level]
    cand = [lv * rng.lognormvariate(0, 0.05) for lv in level]
    return ref, cand


def test_paired_interval_covers_the_true_ratio_and_pairing_narrows_it():
    ref, cand = _drifting_pair(40, 1.5)
    paired = speedup_interval(ref, cand)
    unpaired = speedup_interval(ref, cand, paired=False)
    assert paired is not None and unpaired is not None
    assert paired.low < 1.5 < paired.high
    # the level drift hits both series of a round alike: pairing removes it, an unpaired interval cannot
    assert paired.high - paired.low < (unpaired.high - unpaired.low) / 3
    assert speedup_interval(ref, cand) == paired  # deterministic


def test_few_rounds_give_a_wide_interval_and_too_few_none():
    ref, cand = _drifting_pair(4, 2.0)
    ci = speedup_interval(ref, cand)
    assert ci is not None and ci.method == "bootstrap+t" and ci.low < 2.0 < ci.high
    assert speedup_interval(ref[:2], cand[:2]) is None


def test_drift():
    assert drift([1.0] * 5 + [2.0] * 5) == 2.0
    assert drift([1.0, 1.1, 0.9, 1.0, 1.05, 0.95]) < 1.1
    assert drift([1.0, 2.0]) is None


def test_interval_from_the_real_loop_contains_the_known_ratio():
    """Two host callables that sleep 2 ms and 1 ms: the real A/B loop's series give an interval around 2x
    (sleep overshoot makes it a little less; the bounds are loose for a loaded host)."""
    timer = Timer(TimingConfig(warmup=1, min_runs=20, max_runs=30, budget_s=2.0, target_rse=0.0), HostClockSampler())
    timer.measure({"ref": lambda j: time.sleep(0.002), "cand": lambda j: time.sleep(0.001)})
    ci = speedup_interval(timer.series["ref"], timer.series["cand"])
    assert ci is not None and ci.rounds >= 20
    assert 1.2 < ci.low <= ci.high < 2.3, ci


def test_records_made_before_the_interval_read_back_without_one():
    from multikernelbench.records import EvalResult

    old = {"task_id": "t", "task_hash": "h", "backend": "cpu", "candidate": "c", "code_hash": "x",
           "status": "correct", "speedup": 1.5}  # a stored record from before the fields
    r = EvalResult.from_dict(old)
    assert r.speedup == 1.5 and r.speedup_low is None and r.speedup_high is None and r.reference_drift is None
