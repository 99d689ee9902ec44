"""Issue #40: attack timings recorded beside host load, replayed through the real clock judge: what the wall, CPU-time,
schedstat and start-mark evidence of each run decides at the load it ran under (the synthetic sequences and the load
decisions themselves: tests/test_load_verdicts.py).
"""

from __future__ import annotations

import pytest

from multikernelbench.anticheat.clock_audit import Ask, CleanBaseline
from multikernelbench.anticheat.timing_records import CleanTiming, HostLoad
from multikernelbench.engine.outcomes import DeviceOutcome
from multikernelbench.engine.session import Verdict
from multikernelbench.engine.timing_verdict import ClockRetry
from tests._timing_replay import judge_clock, recorded, recorded_marks, recorded_sched

#: The first timing of tests/data/timing_attacks/renew_profile_quiet_balanced.py beside 4 busy loops pinned to the 2
#: cores (factor 4.00, 10 runnable), 2026-12-05, as benchmarks/verdicts_under_load/idle_figures.py --detail printed
#: it: (callable, wall ms from its request to the next, claimed ms, the worker's CPU ms, the parent's service ms,
#: the worker threads' on-CPU + run-queue ms, the parent's answering thread's on-CPU + run-queue ms from its answer
#: to the next request). The engine judged it ``correct`` at 40x: the idle audit then used the lower quartile.
QUIET_BALANCED = [
    ("candidate", 284.7, 0.28, 20, 0.3, 82.0, 207.3), ("eager", 112.7, 1.72, 10, 0.7, 36.3, 77.7),
    ("candidate", 89.1, 0.29, 20, 0.7, 49.8, 50.7), ("eager", 98.3, 9.25, 10, 0.7, 37.2, 48.9),
    ("candidate", 76.0, 0.28, 10, 0.6, 30.1, 47.6), ("eager", 96.4, 1.88, 10, 0.6, 34.5, 48.8),
    ("candidate", 59.7, 0.28, 20, 0.6, 33.9, 27.7), ("eager", 75.8, 8.28, 10, 0.6, 53.3, 49.9),
    ("candidate", 113.5, 12.36, 10, 0.6, 56.9, 67.4), ("eager", 106.5, 5.37, 10, 0.6, 33.1, 63.5),
    ("candidate", 188.3, 0.29, 20, 0.6, 81.4, 117.0), ("eager", 76.0, 1.78, 10, 0.6, 37.9, 31.7),
    ("candidate", 75.7, 0.29, 10, 0.6, 49.4, 61.9), ("eager", 85.9, 9.12, 10, 0.6, 49.1, 29.5),
    ("candidate", 45.9, 0.28, 10, 0.6, 42.2, 33.6), ("eager", 166.3, 1.72, 10, 0.7, 58.3, 92.1),
    ("candidate", 58.2, 8.36, 20, 0.6, 43.3, 46.8), ("candidate", 56.0, 0.29, 10, 0.8, 51.7, 20.7),
    ("candidate", 132.1, 0.29, 20, 0.7, 68.0, 112.1), ("candidate", 48.9, 0.28, 10, 0.6, 31.2, 48.1)]


def test_balanced_renewal_quiet_in_cpu_time_beside_load_is_caught():
    """tests/data/timing_attacks/renew_profile_quiet_balanced.py beside busy loops pinned to the cores: its hidden
    float64 product runs on one thread (CPU time under the CPU audit's floor) and the reference's renewal is padded
    by *sleeping*, so its wall time is what load explains (2026-12-04: ``correct`` at 227x; this test was then a
    strict xfail on that run's figures, which carried no schedstat). The reference's intervals sleep 6-15 ms per
    sample in which no worker thread could run, which load does not produce (anticheat/sched_idle.py): a first timing
    re-times, a confirming one convicts even at the load factor's cap. Judged by the real code on the recorded run.
    This run is caught; the class is not closed: engine runs beside the same load end ``correct`` in some (the
    figure is a lower bound, and this padding is short: the attack file's docstring)."""
    log, series = recorded_sched(QUIET_BALANCED)
    with pytest.raises(ClockRetry) as retry:
        judge_clock(log, series, None, DeviceOutcome(),
                    min_samples=4, load=HostLoad(2, 10, 8.0, 96.46, 0.0), cores=2)
    assert "no thread of the worker could run, around eager's samples" in str(retry.value), retry.value
    with pytest.raises(Verdict) as got:
        judge_clock(log, series, None, DeviceOutcome(),
                    min_samples=4, confirming=True, load=HostLoad(2, 10, 8.0, 96.46, 0.0), cores=2)
    assert "a renewal padded by sleeping" in got.value.message, got.value.message


def test_without_the_schedstat_figures_the_same_run_is_not_caught():
    """The attack before the idle audit: the same recorded run without its schedstat figures (the worker's CPU and
    wall time only) clears, the hole the xfail recorded."""
    log, series = recorded_sched(QUIET_BALANCED)
    log.end_sched = None
    for i, a in enumerate(log.asks):
        log.asks[i] = Ask(a.fn, a.calls, a.phase, a.t, a.cpu)
    out = DeviceOutcome()
    judge_clock(log, series, None, out,
                min_samples=4, confirming=True, load=HostLoad(2, 10, 8.0, 96.46, 0.0), cores=2)
    assert out.outside_clock_ms is not None


#: The confirming timing of tests/data/timing_attacks/renew_profile_balanced.py (the original, busy-waiting padding
#: and a two-thread hidden product) beside 8 busy loops pinned to the 2 cores (12 runnable), 2026-12-04, and two
#: clean calibrations of the same evaluation, minutes apart under the same load: the run's first (cached) and the
#: one the recalibration chose (the larger lower quartile of the two made beside this timing).
BALANCED_CONFIRMING = [("candidate", 184.9, 0.33, 130), ("eager", 263.0, 7.02, 120), ("candidate", 89.6, 0.3, 60),
                       ("eager", 56.7, 1.8, 30), ("candidate", 50.1, 0.31, 40), ("eager", 55.5, 1.83, 40),
                       ("candidate", 80.1, 0.3, 70), ("eager", 113.4, 35.99, 60), ("candidate", 202.9, 0.31, 140),
                       ("eager", 138.6, 6.28, 80), ("candidate", 85.3, 0.31, 60), ("eager", 157.0, 19.96, 110),
                       ("candidate", 482.8, 0.34, 320), ("eager", 503.0, 11.82, 320)]
BALANCED_CHOSEN = CleanBaseline(per_call_ms=70.41, noise_ms=29.11, samples=11, low_per_call_ms=54.50,
                                cpu_per_call_ms=30.0)
BALANCED_CACHED = CleanBaseline(per_call_ms=175.96, noise_ms=13.08, samples=5, low_per_call_ms=167.14,
                                cpu_per_call_ms=70.0)
BALANCED_LOAD = HostLoad(2, 12, 11.41, 100.0, 0.0)


def _judgerecorded(clean: CleanBaseline) -> None:
    log, series = recorded(BALANCED_CONFIRMING)
    judge_clock(log, series, CleanTiming(None, clean), DeviceOutcome(), min_samples=4, confirming=True,
                load=BALANCED_LOAD, cores=2)


def test_balanced_renewal_confirming_timing_is_caught_by_its_recalibration():
    """The engine's verdict on this timing: its padding's CPU time (median ~31 ms per call: the busy loop got a
    share of a core, the hidden product ran uncontended in most rounds, ~23 ms) shows against the recalibrated
    clean worker's 30 ms, 50 ms against a bound of 40: convicted, by 10 ms."""
    with pytest.raises(Verdict) as got:
        _judgerecorded(BALANCED_CHOSEN)
    assert "~50 ms of CPU time per call more around eager's samples" in got.value.message, got.value.message


def test_without_start_marks_the_2026_12_04_confirming_timing_clears_by_its_first_calibration():
    """The miss of benchmarks/verdicts_under_load/ Run 2 (``correct`` at 126x, no finding in its confirming
    timing), on its recorded figures, which carry no start mark (this was the strict xfail
    ``..._caught_by_any_calibration_of_its_run`` until the marks came): judged by the run's first calibration, made
    minutes earlier under the same load (70 ms of CPU per call there: its reference's two threads spinning in more
    samples), the whole interval's CPU shows ~10 ms per call and its wall time lies inside the renewal calibrated
    there: no finding. What the whole-interval figures cannot tell apart the start marks do (below)."""
    _judgerecorded(BALANCED_CACHED)


#: A confirming timing of tests/data/timing_attacks/renew_profile_balanced.py beside 4 busy loops pinned to the 2
#: cores (factor 4.00, 11 runnable), 2026-12-05, with the start marks (anticheat/call_marks.py): (callable, wall ms
#: from its request to the next, claimed ms, the worker's CPU ms over it by /proc/<pid>/stat's 10 ms ticks, the
#: renewal's CPU ms from the request to the start mark and the call part's from the mark to the next request, both
#: by the process CPU clock in ns). The two clean calibrations of its run: the first (cached) and the one the
#: recalibration beside this timing chose.
BALANCED_MARKED = [
    ('candidate', 81.97, 0.267, 30, 35.62, 0.64), ('eager', 126.04, 4.077, 50, 44.66, 4.55),
    ('candidate', 87.88, 0.271, 30, 28.04, 0.69), ('eager', 112.23, 3.812, 20, 19.19, 4.82),
    ('candidate', 127.96, 0.31, 30, 26.01, 1.06), ('eager', 95.99, 1.971, 20, 19.15, 4.59),
    ('candidate', 71.97, 0.286, 30, 22.2, 0.83), ('eager', 100.06, 1.955, 20, 20.17, 4.52),
    ('candidate', 91.96, 0.282, 30, 23.26, 0.82), ('eager', 96.02, 3.308, 20, 20.04, 4.57),
    ('candidate', 80.07, 0.305, 20, 20.14, 0.96), ('eager', 91.95, 3.675, 20, 16.82, 4.66),
    ('candidate', 80.0, 0.283, 20, 21.03, 0.74), ('eager', 63.91, 3.481, 20, 12.65, 4.63),
    ('candidate', 84.05, 0.27, 20, 21.52, 0.73), ('eager', 100.05, 9.667, 30, 19.4, 6.52),
    ('candidate', 75.86, 0.279, 20, 21.38, 0.75), ('eager', 95.7, 2.013, 20, 17.79, 5.03),
    ('candidate', 116.35, 0.281, 30, 25.76, 0.88), ('eager', 123.98, 1.848, 30, 24.61, 4.53),
    ('candidate', 140.18, 0.281, 30, 32.97, 1.19)]
MARKED_CACHED = dict(per_call_ms=46.91, noise_ms=13.80, samples=19, low_per_call_ms=34.02, cpu_per_call_ms=10.0,
                     renew_cpu_per_call_ms=6.55)  # a CleanBaseline's fields (built in the tests)
MARKED_CHOSEN = dict(per_call_ms=84.04, noise_ms=14.88, samples=11, low_per_call_ms=74.00, cpu_per_call_ms=10.0,
                     renew_cpu_per_call_ms=7.06)
MARKED_LOAD = HostLoad(2, 11, 6.62, 97.65, 0.0)


def test_balanced_renewal_confirming_timing_is_caught_by_any_calibration_of_its_run():
    """Was a strict xfail (the Run 2 miss above): now a confirming timing of the same attack beside the same kind of
    load, judged by either clean calibration of its run, is convicted by its renewals' CPU time alone: the
    candidate's renewals burn 21-36 ms of CPU per call against the clean worker's 6.5-7.1 (its hidden float64
    product), the reference's 13-45 (the busy-wait padding), each judged without the timed call's spinning
    threads and without the 10 ms ticks. At the load factor's cap: CPU time is not excused by load."""
    for clean in (MARKED_CACHED, MARKED_CHOSEN):
        log, series = recorded_marks(BALANCED_MARKED)
        with pytest.raises(Verdict) as got:
            judge_clock(log, series, CleanTiming(None, CleanBaseline(**clean)), DeviceOutcome(), min_samples=4,
                        confirming=True, load=MARKED_LOAD, cores=2)
        assert "of CPU time per call more in the renewals before candidate's timed calls than the clean worker's " \
               "renewal" in got.value.message, got.value.message
        assert "in the renewals before eager's timed calls" in got.value.message, got.value.message


def test_without_its_start_marks_the_same_timing_is_not_convicted():
    """The same recorded timing with only what the parent read before the marks (wall, /proc ticks): judged by
    its recalibration, no conviction (at most flagged inconclusive under load): the hole the marks close."""
    log, series = recorded_marks(BALANCED_MARKED, marks=False)
    out = DeviceOutcome()
    judge_clock(log, series, CleanTiming(None, CleanBaseline(**MARKED_CHOSEN)), out, min_samples=4, confirming=True,
                load=MARKED_LOAD, cores=2)


#: The confirming timing of tests/data/timing_attacks/renew_profile_quiet_balanced.py (one-thread hidden product,
#: the reference's renewal padded by *sleeping*) in the same run, fields as BALANCED_MARKED.
QUIET_MARKED = [
    ('candidate', 66.25, 0.283, 20, 18.41, 0.76), ('eager', 57.7, 4.085, 10, 7.25, 4.46),
    ('candidate', 56.01, 0.277, 30, 15.69, 0.71), ('eager', 52.75, 3.861, 10, 6.77, 4.51),
    ('candidate', 60.05, 0.28, 10, 15.38, 0.71), ('eager', 61.51, 4.154, 10, 6.97, 4.51),
    ('candidate', 57.81, 0.282, 20, 15.73, 0.78), ('eager', 56.0, 3.982, 10, 7.3, 4.48),
    ('candidate', 46.16, 0.271, 10, 15.66, 0.7), ('eager', 61.89, 3.858, 10, 7.34, 4.55),
    ('candidate', 47.9, 0.294, 20, 16.01, 0.78), ('eager', 68.01, 3.938, 10, 7.35, 4.62),
    ('candidate', 62.16, 0.296, 20, 15.58, 0.79), ('eager', 65.9, 6.565, 10, 7.68, 4.7),
    ('candidate', 63.04, 0.288, 20, 16.27, 0.79), ('eager', 56.91, 9.158, 10, 7.32, 5.29),
    ('candidate', 31.91, 0.273, 10, 14.68, 0.68), ('eager', 33.06, 9.234, 20, 6.9, 4.9),
    ('candidate', 30.96, 0.268, 10, 14.93, 0.66), ('eager', 44.06, 4.119, 20, 6.93, 4.91),
    ('candidate', 27.95, 0.27, 20, 15.01, 0.68), ('eager', 33.52, 10.151, 10, 6.98, 5.3),
    ('candidate', 43.91, 0.282, 20, 16.14, 0.79), ('eager', 46.69, 9.883, 10, 7.02, 5.24),
    ('candidate', 35.95, 0.278, 10, 15.44, 0.72), ('eager', 56.05, 3.882, 20, 7.37, 4.98),
    ('candidate', 47.92, 0.275, 10, 16.39, 0.72), ('eager', 40.48, 6.451, 20, 7.14, 4.91),
    ('candidate', 35.59, 0.276, 10, 15.56, 0.73), ('eager', 36.29, 6.531, 20, 7.23, 5.58),
    ('candidate', 44.84, 0.278, 20, 20.13, 0.72), ('eager', 42.86, 4.061, 10, 6.94, 4.87),
    ('candidate', 34.96, 0.296, 20, 17.58, 0.76), ('eager', 40.95, 7.934, 10, 7.01, 5.07),
    ('candidate', 32.04, 0.261, 20, 16.76, 0.68), ('eager', 52.04, 12.035, 10, 9.33, 5.48),
    ('candidate', 43.99, 0.265, 20, 14.77, 0.65), ('eager', 48.33, 5.68, 10, 7.05, 5.14),
    ('candidate', 59.87, 0.281, 10, 15.29, 0.72), ('eager', 63.88, 9.516, 20, 9.83, 6.23),
    ('candidate', 55.88, 0.313, 20, 21.18, 1.29), ('candidate', 56.14, 0.302, 30, 20.52, 2.02)]
QUIET_CHOSEN = dict(per_call_ms=36.60, noise_ms=12.85, samples=25, low_per_call_ms=33.13, cpu_per_call_ms=10.0,
                    renew_cpu_per_call_ms=5.87)


def test_sleeping_padding_is_caught_by_the_renewals_cpu_with_or_without_a_clean_worker():
    """renew_profile_quiet_balanced.py's confirming timing: its one-thread hidden product is ~16 ms of CPU per call
    in the candidate's renewals, the reference's (padded by sleeping) ~7: against the clean worker's renewal (5.9)
    and against the reference's renewal in the same worker, at the load factor's cap."""
    for clean in (CleanTiming(None, CleanBaseline(**QUIET_CHOSEN)), None):
        log, series = recorded_marks(QUIET_MARKED)
        with pytest.raises(Verdict) as got:
            judge_clock(log, series, clean, DeviceOutcome(), min_samples=4, confirming=True, load=MARKED_LOAD,
                        cores=2)
        assert "ms of CPU time per call more in the renewals before candidate's timed calls than before eager's in " \
               "the same worker" in got.value.message, got.value.message
