"""The parent's clock audit (anticheat/clock_audit.py) on the request patterns each timing attack produces.

The engine tests (tests/test_timing_integrity.py) run real attacks through real workers; most of them are
stopped earlier by the worker-side snapshots, so these tests feed the audit the exact sequences of fresh-input
requests (with their arrival times) that the attacks would produce if those snapshots were evaded by native
code, and an honest worker's, so each decision rule is shown to fire on its attack and stay quiet on noise.
"""

from __future__ import annotations

import random

from multikernelbench.anticheat.clock_audit import (
    Ask,
    AskLog,
    AuditConfig,
    CleanBaseline,
    FindingKind,
    audit,
    intervals,
)
from multikernelbench.engine.clean_reference import CleanReference
from multikernelbench.timing.loop import AUDIT_MIN_SAMPLES, Phase, round_order

FNS = ["candidate", "eager"]
CFG = AuditConfig()
RENEW = 2.0  # ms of input renewal per call, the same for both callables
CLEAN = CleanBaseline(per_call_ms=RENEW + 0.05, noise_ms=0.05, samples=20)


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def advance(self, ms: float) -> None:
        self.t += ms / 1e3


def _log(events: list[tuple], end_after_ms: float = 0.5) -> AskLog:
    """events: ("ask", fn, phase) stamps a request now; ("wait", ms) lets time pass."""
    clock = _Clock()
    log = AskLog()
    for ev in events:
        if ev[0] == "ask":
            log.asks.append(Ask(ev[1], 1, ev[2], clock.t))
        else:
            clock.advance(ev[1])
    clock.advance(end_after_ms)
    log.end = clock.t
    return log


def _honest(rounds: int, cand_ms: float, eager_ms: float, work_ms: float = 0.0, seed: int = 0):
    """A worker's requests: warm-up, then A/B samples (renewal, the timed call), then the final call.
    ``work_ms``: work done in the candidate's renewal, after its request (the attack)."""
    rng = random.Random(seed)
    ev: list[tuple] = [("ask", "candidate", Phase.WARMUP), ("wait", 5), ("ask", "eager", Phase.WARMUP), ("wait", 5)]
    series = {"candidate": [], "eager": []}
    for r in range(rounds):
        for fn, ms in round_order((("candidate", cand_ms), ("eager", eager_ms)), r):
            ev.append(("ask", fn, Phase.SAMPLE))
            ev.append(("wait", RENEW + rng.uniform(0, 0.1) + (work_ms if fn == "candidate" else 0.0) + ms))
            series[fn].append(ms)
    ev.append(("ask", "candidate", Phase.FINAL))
    return _log(ev), series


def test_honest_worker_is_quiet():
    log, series = _honest(20, cand_ms=1.0, eager_ms=3.0)
    got = audit(log, series, {"candidate": 1, "eager": 1}, FNS, "candidate", "eager", CLEAN, CFG)
    assert got.findings == []
    assert abs(got.outside_ms) < 0.2 and len(got.intervals) == 40


def test_work_in_the_candidates_renewal_is_named():
    log, series = _honest(20, cand_ms=1.0, eager_ms=3.0, work_ms=5.0)
    got = audit(log, series, {"candidate": 1, "eager": 1}, FNS, "candidate", "eager", CLEAN, CFG)
    assert any("work outside the timed call" in f for f in got.findings), got.findings
    assert 4.5 < got.outside_ms < 5.5
    assert got.found[0].kind is FindingKind.OUTSIDE_CALL and all(f.load_sensitive for f in got.found)


def test_work_below_the_floor_is_not_decided():
    log, series = _honest(20, cand_ms=1.0, eager_ms=3.0, work_ms=0.05)
    got = audit(log, series, {"candidate": 1, "eager": 1}, FNS, "candidate", "eager", CLEAN, CFG)
    assert got.findings == []


def test_early_request_in_the_references_turn():
    """The reference's renewal asks for the candidate's next inputs and answers them (5 ms) before the
    reference's own sample; the candidate's renewal is then a no-op: the requests still alternate."""
    ev: list[tuple] = [("ask", "candidate", Phase.SAMPLE), ("wait", RENEW + 5.0 + 1.0)]
    series = {"candidate": [1.0], "eager": []}
    for _ in range(20):
        ev += [("ask", "eager", Phase.SAMPLE), ("wait", RENEW),
               ("ask", "candidate", Phase.SAMPLE), ("wait", RENEW + 5.0),  # early, then the work
               ("wait", 3.0), ("wait", 1.0)]  # the reference's sample, then the candidate's (no renewal)
        series["eager"].append(3.0)
        series["candidate"].append(1.0)
    ev.append(("ask", "candidate", Phase.FINAL))
    got = audit(_log(ev), series, {"candidate": 1, "eager": 1}, FNS, "candidate", "eager", CLEAN, CFG)
    assert any("eager's samples claim" in f for f in got.findings), got.findings
    overlap = [f for f in got.found if f.kind is FindingKind.OVERLAP]
    assert overlap and not overlap[0].load_sensitive  # load lengthens intervals, never shortens them


def test_work_shifted_into_the_references_interval_is_named():
    """Requests for both callables' next inputs come at once, the work follows: every interval the parent
    attributes to the candidate is empty, the reference's holds the work."""
    ev: list[tuple] = []
    series = {"candidate": [], "eager": []}
    for _ in range(20):
        ev += [("ask", "candidate", Phase.SAMPLE), ("wait", 0.01), ("ask", "eager", Phase.SAMPLE),
               ("wait", 2 * RENEW + 8.0 + 3.0 + 0.01)]
        series["candidate"].append(0.01)
        series["eager"].append(3.0)
    ev.append(("ask", "candidate", Phase.FINAL))
    got = audit(_log(ev), series, {"candidate": 1, "eager": 1}, FNS, "candidate", "eager", CLEAN, CFG)
    assert any("in the reference's turn" in f for f in got.findings), got.findings
    assert FindingKind.REFERENCE_TURN in {f.kind for f in got.found}


def test_extra_and_missing_requests_are_protocol_findings():
    log, series = _honest(10, cand_ms=1.0, eager_ms=3.0)
    log.asks.insert(6, Ask("candidate", 1, Phase.SAMPLE, log.asks[5].t + 1e-4))  # one request too many
    got = audit(log, series, {"candidate": 1, "eager": 1}, FNS, "candidate", "eager", CLEAN, CFG)
    assert any(f.startswith("timing protocol:") for f in got.findings), got.findings
    assert {f.kind for f in got.found} == {FindingKind.PROTOCOL}

    log, series = _honest(10, cand_ms=1.0, eager_ms=3.0)
    series["candidate"].append(1.0)  # a sample claimed without its request
    _, problems = intervals(log, series, {"candidate": 1, "eager": 1}, FNS)
    assert any("sample(s) reported" in p for p in problems)


def test_phases_out_of_order_and_a_callable_coming_back():
    log, series = _honest(6, cand_ms=1.0, eager_ms=3.0)
    log.asks.append(Ask("eager", 1, Phase.WARMUP, log.asks[-1].t + 1e-3))
    _, problems = intervals(log, series, {"candidate": 1, "eager": 1}, FNS)
    assert any("order" in p for p in problems)

    # Rounds [candidate, eager], [eager], [eager, candidate]: the candidate had stopped when the second round left it out.
    ask = [("ask", "candidate", Phase.SAMPLE), ("ask", "eager", Phase.SAMPLE), ("ask", "eager", Phase.SAMPLE),
           ("ask", "eager", Phase.SAMPLE), ("ask", "candidate", Phase.SAMPLE)]
    ev = [e for a in ask for e in (a, ("wait", 3))]
    _, problems = intervals(_log(ev), {"candidate": [1.0, 1.0], "eager": [1.0, 1.0, 1.0]},
                            {"candidate": 1, "eager": 1}, FNS)
    assert any("after it had stopped" in p or "came back" in p for p in problems), problems


def test_samples_in_a_fixed_order_are_a_protocol_finding():
    """The loop turns its order round every round (timing/loop.py ``round_order``); a worker that keeps one order
    (the loop before 2026-12-07, or candidate code answering for it) breaks the pattern the rounds are paired by."""
    rounds = [("candidate", "eager")] * 6
    ev = [e for r in rounds for fn in r for e in (("ask", fn, Phase.SAMPLE), ("wait", 3))]
    series = {"candidate": [1.0] * 6, "eager": [1.0] * 6}
    _, problems = intervals(_log(ev), series, {"candidate": 1, "eager": 1}, FNS)
    assert any("out of the loop's order" in p and "in 3 round(s)" in p for p in problems), problems
    turned = [fn for r, _ in enumerate(rounds) for fn in round_order(("candidate", "eager"), r)]
    ev = [e for fn in turned for e in (("ask", fn, Phase.SAMPLE), ("wait", 3))]
    assert intervals(_log(ev), series, {"candidate": 1, "eager": 1}, FNS)[1] == []


def test_clean_reference_is_computed_once_per_key():
    cache, calls = CleanReference(), []
    for _ in range(3):
        assert cache.get(("t", 1), lambda: calls.append(1) or "x") == "x"
    cache.release("t")
    cache.get(("t", 1), lambda: calls.append(1) or "y")
    assert len(calls) == 2


def test_too_few_rounds_decide_nothing_and_fewer_samples_than_the_loop_takes_is_a_finding():
    """Two rounds: a median is one sample, so nothing is judged on it; but the harness's loop always takes
    AUDIT_MIN_SAMPLES of every callable, so a worker reporting fewer deviated from it."""
    log, series = _honest(2, cand_ms=0.1, eager_ms=3.0, work_ms=3 * RENEW)
    got = audit(log, series, {"candidate": 1, "eager": 1}, FNS, "candidate", "eager", None, CFG)
    assert got.findings == [], got.findings
    got = audit(log, series, {"candidate": 1, "eager": 1}, FNS, "candidate", "eager", None, CFG,
                min_samples=AUDIT_MIN_SAMPLES)
    assert any("fewer than the 4 the harness always takes" in f for f in got.findings), got.findings


def test_the_loop_takes_its_floor_of_samples_whatever_the_budget():
    from multikernelbench.timing.config import TimingConfig
    from multikernelbench.timing.host import host_timer

    timer = host_timer(TimingConfig(warmup=0, min_runs=10, max_runs=50, budget_s=0.0))
    stats = timer.measure({"a": lambda j: j, "b": lambda j: j})
    assert {n: s.runs for n, s in stats.items()} == {"a": AUDIT_MIN_SAMPLES, "b": AUDIT_MIN_SAMPLES}
    timer = host_timer(TimingConfig(warmup=0, min_runs=10, max_runs=2, budget_s=0.0))
    assert {s.runs for s in timer.measure({"a": lambda j: j}).values()} == {2}


def test_fewer_calls_per_sample_than_the_reference_is_not_work():
    """CUDA graphs: K calls per sample, chosen per callable. A fixed 0.3 ms per sample (sync, flush, round
    trip) spread over K=10 candidate calls against K=100 reference calls looks like 0.027 ms per call more."""
    ev: list[tuple] = []
    series = {"candidate": [], "eager": []}
    for r in range(20):
        for fn, k, ms in round_order((("candidate", 10, 0.1), ("eager", 100, 0.01)), r):
            ev.append(("ask_k", fn, k))
            ev.append(("wait", 0.3 + 0.02 * k + ms * k))
            series[fn].append(ms)
    clock, log = _Clock(), AskLog()
    for e in ev:
        if e[0] == "ask_k":
            log.asks.append(Ask(e[1], e[2], Phase.SAMPLE, clock.t))
        else:
            clock.advance(e[1])
    log.end = clock.t + 1e-4
    clean = CleanBaseline(per_call_ms=0.023, noise_ms=0.01, samples=20, calls=100)
    got = audit(log, series, {"candidate": 10, "eager": 100}, FNS, "candidate", "eager", clean, CFG)
    assert got.findings == [], got.findings


def test_a_loaded_host_widens_the_bound_instead_of_convicting():
    """Descheduling lengthens intervals at random (here up to 30x the renewal, in either callable's turn): the
    run's own spread of round differences sets the bound, so an honest worker stays clean, while the same
    host with 5 ms of work in every candidate renewal is still convicted once the noise is smaller than it."""
    rng = random.Random(7)

    def run(work_ms: float, burst_ms: float) -> list[str]:
        ev: list[tuple] = []
        series = {"candidate": [], "eager": []}
        for r in range(30):
            for fn, ms in round_order((("candidate", 1.0), ("eager", 3.0)), r):
                ev.append(("ask", fn, Phase.SAMPLE))
                burst = rng.uniform(0, burst_ms) if rng.random() < 0.5 else 0.0
                ev.append(("wait", RENEW + burst + (work_ms if fn == "candidate" else 0.0) + ms))
                series[fn].append(ms)
        ev.append(("ask", "candidate", Phase.FINAL))
        return audit(_log(ev), series, {"candidate": 1, "eager": 1}, FNS, "candidate", "eager", CLEAN, CFG).findings

    assert run(0.0, burst_ms=60.0) == []
    assert any("outside the timed call" in f for f in run(25.0, burst_ms=4.0))



def test_round_difference_findings_are_load_sensitive_protocol_findings_are_not():
    """What the timing judge retries in a fresh worker (a burst of load can produce it) and what convicts at once."""
    log, series = _honest(8, cand_ms=1.0, eager_ms=1.0, work_ms=3.0)
    calls = {"candidate": 1, "eager": 1}
    outside = audit(log, series, calls, FNS, "candidate", "eager", CLEAN, CFG)
    assert outside.findings and outside.findings == outside.load_sensitive, outside.findings
    assert "work outside the timed call" in outside.findings[0]
    log, series = _honest(8, cand_ms=1.0, eager_ms=1.0)
    short = {"candidate": series["candidate"][:-1], "eager": series["eager"]}  # one sample fewer than requested
    protocol = audit(log, short, calls, FNS, "candidate", "eager", CLEAN, CFG)
    assert protocol.findings and not protocol.load_sensitive, protocol.findings
