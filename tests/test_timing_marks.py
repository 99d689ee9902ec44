"""Issue #40, balanced renewal: the start mark between each sample's renewal and its timed call, and the CPU time the
parent reads at it (anticheat/call_marks.py).

The request sequences are built as the engine's parent logs them (the worker process's CPU clock in ns at every
request and mark) and judged by the real audit; the loop's side runs the real timer with a recording hook; the
process CPU clock is read on a real child process. The engine-level run beside pinned busy loops is in
tests/test_timing_evidence.py, the recorded runs in tests/test_load_verdicts.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from multikernelbench.anticheat import call_marks
from multikernelbench.anticheat.clock_audit import Ask, AskLog, AuditConfig, CleanBaseline, FindingKind, audit
from multikernelbench.timing.config import TimingConfig
from multikernelbench.timing.host import host_timer
from multikernelbench.timing.loop import Fresh, Phase, round_order

FNS = ["candidate", "eager"]
CALLS = {"candidate": 1, "eager": 1}
RENEW_CPU = 5.0  # ms of CPU per renewal, as the clean worker calibrates it


def _clean() -> CleanBaseline:
    return CleanBaseline(per_call_ms=8.0, noise_ms=0.5, samples=20, low_per_call_ms=7.5, cpu_per_call_ms=9.0,
                         renew_cpu_per_call_ms=RENEW_CPU)


def _log(rounds: int, renew_extra: dict[str, float], call_extra: dict[str, float] | None = None,
         marks: bool = True) -> tuple[AskLog, dict[str, list[float]]]:
    """A timing's requests with start marks: each renewal burns RENEW_CPU ms (+ ``renew_extra[fn]``), the timed
    call ``claimed`` ms on one core (+ ``call_extra[fn]`` after the mark, outside the claim); wall time is twice the
    CPU (a loaded host)."""
    call_extra = call_extra or {}
    t, run, log = 100.0, 10**9, AskLog(run_clock=lambda: None)
    series: dict[str, list[float]] = {"candidate": [], "eager": []}
    for r in range(rounds):
        for fn, claimed in round_order((("candidate", 0.3), ("eager", 3.0)), r):
            log.asks.append(Ask(fn, 1, Phase.SAMPLE, t, run=run))
            renew = RENEW_CPU + renew_extra.get(fn, 0.0)
            t, run = t + 2 * renew / 1e3, run + int(renew * 1e6)
            if marks:
                log.asks.append(Ask(fn, 1, Phase.START, t, run=run))
            call = claimed + call_extra.get(fn, 0.0)
            t, run = t + 2 * call / 1e3, run + int(call * 1e6)
            series[fn].append(claimed)
    log.asks.append(Ask("candidate", 1, Phase.FINAL, t, run=run))
    log.end, log.end_run = t + 5e-4, run
    return log, series


def _found(log: AskLog, series: dict[str, list[float]], clean: CleanBaseline | None = None, no_clean: bool = False) -> list[str]:
    """The start marks' findings (the wall audit's figures here are a loaded host's: not what is tested)."""
    clean = None if no_clean else clean or _clean()
    got = audit(log, series, CALLS, FNS, "candidate", "eager", clean, AuditConfig(cores=2)).found
    return [f.text for f in got if f.kind is FindingKind.PROTOCOL or "start mark" in f.text]


def test_an_honest_worker_has_no_mark_finding():
    log, series = _log(12, {})
    assert _found(log, series) == []


def test_balanced_renewal_burning_cpu_is_seen_against_the_clean_renewal():
    """renew_profile_balanced.py: 20 ms hidden in the candidate's renewal, the reference's padded by a busy loop
    as long. Round by round the renewals are equal; against the clean worker's renewal both show."""
    log, series = _log(8, {"candidate": 20.0, "eager": 20.0})
    got = _found(log, series)
    assert [f for f in got if "more in the renewals before candidate's timed calls than the clean" in f], got
    assert [f for f in got if "more in the renewals before eager's timed calls than the clean" in f], got
    assert not [f for f in got if "in the same worker, though they renew the same inputs" in f], got


def test_hidden_work_with_a_sleeping_padding_is_seen_without_a_clean_worker():
    """renew_profile_quiet_balanced.py: the reference's renewal padded by sleeping (no CPU): the candidate's
    renewal burns more than the reference's in the same worker, with or without a clean calibration."""
    log, series = _log(8, {"candidate": 10.0})
    got = _found(log, series, no_clean=True)
    assert len(got) == 1 and "than before eager's in the same worker" in got[0], got


def test_work_moved_after_the_mark_is_seen_in_the_call_part():
    """A candidate that sends its mark early (or hides its work in a hook after it): the CPU moves from the
    renewal to the call part, which may use no more than cores x its claimed time (plus the floor)."""
    log, series = _log(8, {}, call_extra={"candidate": 10.0})
    got = _found(log, series)
    assert len(got) == 1 and "from candidate's start marks to the next request beyond" in got[0], got
    small, series = _log(8, {}, call_extra={"candidate": 1.0})  # within the bookkeeping's floor
    assert _found(small, series) == []


def test_missing_and_misplaced_marks_are_protocol_findings():
    log, series = _log(6, {}, marks=False)
    assert _found(log, series) == ["timing protocol: 12 timed sample(s) without their start mark"]
    unexpected = AskLog(asks=log.asks, end=log.end)  # no CPU clock read (a GPU backend): none expected
    assert _found(unexpected, series) == []
    log, series = _log(6, {})
    log.asks.insert(0, Ask("eager", 1, Phase.START, 99.0, run=1))  # a mark before any sample
    assert _found(log, series) == ["timing protocol: a timed call's start mark for eager out of place"]


def test_the_marks_leave_the_wall_intervals_as_they_were():
    """The wall, round-difference and idle figures pair a sample's request with the next *request*: a mark in
    between changes none of them."""
    marked, series = _log(8, {"candidate": 3.0})
    plain = AskLog(asks=[a for a in marked.asks if a.phase is not Phase.START], end=marked.end)
    a = audit(marked, series, CALLS, FNS, "candidate", "eager", None, AuditConfig(cores=2))
    b = audit(plain, series, CALLS, FNS, "candidate", "eager", None, AuditConfig(cores=2))
    assert [iv.wall_ms for iv in a.intervals] == [iv.wall_ms for iv in b.intervals]
    assert a.outside_ms == b.outside_ms


class _Recording(Fresh):
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def renew(self, name: str, calls: int, phase: Phase = Phase.PLAN) -> None:
        self.events.append(("renew:" + Phase(phase).value, name))

    def start(self, name: str, calls: int) -> None:
        self.events.append(("start", name))


def test_the_loop_marks_every_timed_sample_right_after_its_renewal():
    """The real timer: every sample's renewal is followed by its mark and nothing else; warm-up and planning
    calls carry no mark (they are not timed)."""
    hook = _Recording()
    called: list[str] = []
    host_timer(TimingConfig(warmup=1, min_runs=4, max_runs=4, budget_s=5, target_rse=0.0)).measure(
        {"a": lambda j: called.append("a"), "b": lambda j: called.append("b")}, hook)
    samples = [i for i, e in enumerate(hook.events) if e[0] == "renew:sample"]
    assert len(samples) == 8
    assert all(hook.events[i + 1] == ("start", hook.events[i][1]) for i in samples), hook.events
    assert sum(e[0] == "start" for e in hook.events) == 8


def test_the_process_cpu_clock_counts_every_thread_in_ns():
    """The parent's reading: a child burning ~0.2 s on two threads, one of which has exited, read from outside."""
    code = ("import threading, time\n"
            "def burn(s):\n    end = time.thread_time() + s\n    while time.thread_time() < end: pass\n"
            "t = threading.Thread(target=burn, args=(0.1,)); t.start(); burn(0.1); t.join()\n"
            "print('done', flush=True); time.sleep(5)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "done"
        ns = call_marks.process_cpu_ns(child.pid)
        assert ns is not None and 0.2e9 <= ns < 2e9, ns  # the exited thread's 0.1 s included
        time.sleep(0.05)
        assert call_marks.process_cpu_ns(child.pid) - ns < 5e6  # asleep: hardly moves
    finally:
        child.kill()
        child.wait()
    assert call_marks.process_cpu_ns(child.pid) is None  # reaped
    assert call_marks.process_cpu_ns(os.getpid()) is not None
