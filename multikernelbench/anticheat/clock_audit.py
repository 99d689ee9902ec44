"""The parent's own clock over a Time request: work a candidate moves outside its timed call shows up here.

Why: every check inside the worker sits next to candidate code. A candidate that hooks the harness's input
renewal (by Python frames, or natively: its own ``aten::copy_`` kernel, which the renewal calls) can run its
real kernel on each sample's fresh inputs *before* the clock starts and return the stored answer from a short
timed call; every timed output is right, so verification passes, and only the clock is fooled (issue #25:
127.7 ms of honest work timed as 17.6 ms on the H200). What the parent knows without trusting the worker is
*when* each request for fresh inputs (:class:`~multikernelbench.engine.messages.FreshAsk`) arrived. Between
the request that opens a sample and the next request lies, in an honest worker, only that sample's input
renewal, its timed call and a little bookkeeping; renewal costs the same for candidate and reference (same
shapes, same generator). So for each timed sample::

    unexplained = (parent wall time from its request to the next one) - (the worker's claimed sample time)

The worker's claims can only hurt it here: claiming less time makes ``unexplained`` larger.

Findings (each a ``cheat_detected`` with the figures in the message):

* **order**: the requests are not in the loop's order (warm-up, planning, then samples A/B/C, A/B, ... with
  callables only ever dropping out, then the final call), or their number does not match the samples the
  worker reports: a worker that asks early (for the candidate's seeds during the reference's turn) or forges
  requests changes the pattern or the intervals below;
* **claimed beyond the interval**: a callable's median sample claims more time than the wall time between
  its request and the next: its inputs were asked for before the previous sample had run (work overlapped
  with another callable's turn);
* **work outside the candidate's call**, or **in the reference's turn**: round by round, the candidate's
  unexplained time per call against the reference's in the same worker (same shapes, same generator: equal in
  an honest worker). Work hidden in the candidate's renewal makes the median difference positive; work moved
  into the reference's turn (its inputs and the candidate's asked for together) makes it negative.

Thresholds: ``max(floor, rel * claimed, sigmas * noise / sqrt(rounds), slack * renewal)``. The noise is the
larger of the clean worker's (one that never loaded candidate code, engine/clean_reference.py) and this run's own
spread of the round differences, so a loaded host widens the bound instead of convicting an honest kernel
(descheduling lengthens intervals at random, an attack lengthens every one of them). Below the floor the parent
cannot decide (its timestamps carry the latency of a socket round trip and of its own thread scheduling); see
multikernelbench/anticheat/README.md for why that is safe.

Against the clean worker (issue #40, "balanced renewal"): a candidate that hides its work in its own renewal
*and* pads the reference's renewal in its worker by the same time leaves the round differences at 0. So every
callable's unexplained time per call in the candidate's worker (its lower quartile) is also judged against the
renewal cost calibrated in the clean worker (same shapes, same generator, no candidate code): a renewal that
takes longer than the clean one by more than ``max(floor, rel * claimed, clean_slack * clean renewal)`` is a
finding ("than the input renewal takes in the clean worker"), load-sensitive like the round differences. The
confirming timing is judged by a calibration made beside it, before and after (anticheat/timing_judge.py,
``recalibrated``): load that arrived after the run's first calibration lengthens every renewal of both callables.

The noise of the round differences is the larger of the clean worker's and the spread of the differences
between the *reference's* consecutive intervals in the candidate's worker (a difference of two intervals a
round apart, like the candidate-minus-reference one, so slow drift of the host's load cancels in it as well):
no longer the spread of the candidate-minus-reference differences, which the candidate made
(tests/data/timing_attacks/renew_random_pauses.py widened it with random pauses after its hidden work until its
median hid under the bound).

CPU time (CPU backends): the wall-clock figures above stretch with load, and when load *varies* within a timing
an attack can fall inside their bounds (``renew_profile_balanced.py`` ended ``correct`` at 56-185x on the 2-core
dev host with the default timing settings, 2026-12-04). The parent also reads the worker's CPU time (user +
system, every thread and reaped child: ``/proc/<pid>/stat``) at each request; descheduling adds little to it (an
OpenMP thread waiting for a descheduled partner spins: workers cap that spin, util/worker_env.py) and the worker
cannot lower it. Per call, round by round: the reference's CPU time in the candidate's worker against
the clean worker's (same renewal, same reference call: padding shows), and the candidate's beyond the reference's
minus what its claimed call could use on every core (``cores`` x claimed: hidden work shows). Bound
``max(cpu_floor_ms, cpu_slack x the compared CPU time)`` (the clock's 10 ms ticks, an OpenMP pool's spinning).
These findings are confirmed by a second timing like the others but not excused by the host's load. Not on GPU
backends yet: a device sync's spin-wait burns CPU for GPU work, unmeasured. The whole interval mixes the renewal with
the timed call's spinning threads, and /proc's ticks are 10 ms: hence the 40 ms floor. The start marks
(anticheat/call_marks.py) split each interval at the timed call's start and read the process CPU clock in ns, so
the renewal's CPU time is judged alone, with a floor of 2 ms.

Confirmation: a burst of load that lasts several rounds can still lengthen most of one timing's candidate
intervals (CI, 2 cores shared with another test's compilers: an honest CPU relu judged to hide 10.6 ms per call
against a 7.8 ms bound). So a round-difference finding (a :data:`~.clock_records.LOAD_SENSITIVE` kind) convicts
only when a second timing, in a fresh worker with the candidate loaded again (its module state starts over, so a
cheat repeats itself), has a round-difference finding too, by the same bound, in either direction (a cheat that
moved its work outside its call in the first worker and into the reference's turn in the second must not be cleared by
the switch); the result is the second timing's. At half the bound the confirming timing convicted an honest
candidate on CI (0.377 ms in the reference's turn against 0.322), so it is the same bound.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from multikernelbench.anticheat import call_marks, sched_idle
from multikernelbench.anticheat.clock_records import (
    Ask,
    AskLog,
    Audit,
    AuditConfig,
    CleanBaseline,
    Finding,
    FindingKind,
    Interval,
    lower_quartile,
    robust_sigma,
)
from multikernelbench.timing.loop import Phase

__all__ = ["Ask", "AskLog", "Audit", "AuditConfig", "CleanBaseline", "Finding", "FindingKind", "Interval", "audit",
           "intervals", "lower_quartile", "robust_sigma"]

_ORDER = {Phase.WARMUP: 0, Phase.PLAN: 1, Phase.SAMPLE: 2, Phase.FINAL: 3}


def intervals(log: AskLog, series: dict[str, list[float]], calls: dict[str, int],
              fns: Sequence[str]) -> tuple[list[Interval], list[str]]:
    """The timed samples paired with their requests, and every way the requests break the loop's pattern."""
    asks, marks, problems = call_marks.split(log.asks, log.run_clock is not None)
    phases = [a.phase for a in asks]
    if any(p is None for p in phases):
        problems.append("a fresh-input request named no known phase")
        return [], problems
    ranks = [_ORDER[p] for p in phases]
    if ranks != sorted(ranks):
        problems.append("fresh-input requests out of the harness's order (warm-up, planning, samples, final)")
    sample_idx = [i for i, a in enumerate(asks) if a.phase == Phase.SAMPLE]
    order = {fn: k for k, fn in enumerate(fns)}
    out: list[Interval] = []
    seen = {fn: 0 for fn in fns}
    rnd, prev, active, current = 0, None, set(fns), set[str]()
    turned: set[int] = set()
    for i in sample_idx:
        a = asks[i]
        if a.fn not in order:
            problems.append(f"a sample request for an unknown callable {a.fn!r}")
            continue
        k = order[a.fn]
        if a.fn in current:  # a new round (each callable comes once a round): the active set may only shrink
            if not current <= active:
                problems.append("a callable came back after it had stopped")
            active, current, rnd = current, set(), rnd + 1
        elif prev is not None and (k < prev) == (rnd % 2 == 0):  # timing/loop.py round_order
            turned.add(rnd)
        if a.fn not in active:
            problems.append(f"{a.fn} sampled after it had stopped")
        current.add(a.fn)
        prev = k
        n = seen[a.fn]
        seen[a.fn] += 1
        got = series.get(a.fn, [])
        if n >= len(got) or a.calls != calls.get(a.fn):
            continue  # counted below
        nxt = asks[i + 1].t if i + 1 < len(asks) else log.end
        if nxt is None:
            continue
        nxt_cpu = asks[i + 1].cpu if i + 1 < len(asks) else log.end_cpu
        cpu = (nxt_cpu - a.cpu) * 1e3 if nxt_cpu is not None and a.cpu is not None else None
        later = asks[i + 1] if i + 1 < len(asks) else None
        idle = sched_idle.idle_ms((nxt - a.t - a.served) * 1e3, a.sched, later.sched if later else log.end_sched,
                                  a.own_answered, later.own_arrival if later else log.end_own)
        renew, call = call_marks.parts_ms(a, marks[i], later.run if later else log.end_run)
        out.append(Interval(a.fn, rnd, a.calls, (nxt - a.t) * 1e3, got[n] * a.calls, cpu, idle, renew, call))
    for fn in fns:
        if seen.get(fn, 0) != len(series.get(fn, [])):
            problems.append(f"{seen.get(fn, 0)} sample request(s) for {fn} but {len(series.get(fn, []))} "
                            "sample(s) reported")
    if turned:
        problems.append(f"samples out of the loop's order (the callables' order in even rounds, reversed in odd "
                        f"ones) in {len(turned)} round(s)")
    if any(a.calls != calls.get(a.fn) for a in (asks[i] for i in sample_idx) if a.fn in calls):
        problems.append("a sample request asked for another number of calls than the callable's samples make")
    return out, problems


def audit(log: AskLog, series: dict[str, list[float]], calls: dict[str, int], fns: Sequence[str], candidate: str,
          reference: str, clean: CleanBaseline | None, cfg: AuditConfig, min_samples: int = 0) -> Audit:
    """Judge one Time request of a candidate's worker (see the module docstring). ``min_samples``: the samples
    the harness's loop takes of every callable at least (fewer is a protocol finding)."""
    ivs, problems = intervals(log, series, calls, fns)
    for fn in fns:
        if len(series.get(fn, [])) < min_samples:
            problems.append(f"{len(series.get(fn, []))} sample(s) of {fn}, fewer than the {min_samples} the "
                            "harness always takes")
    result = Audit(intervals=ivs)
    for p in problems:
        result.add(FindingKind.PROTOCOL, f"timing protocol: {p}")
    if not ivs:
        return result
    clean_noise = clean.noise_ms if clean is not None else 0.0
    by_fn: dict[str, list[Interval]] = {}
    for iv in ivs:
        by_fn.setdefault(iv.fn, []).append(iv)

    # Claimed beyond the interval: the sample cannot have run between its request and the next one. Load only
    # ever lengthens an interval, never shortens it, so this needs no allowance for a busy host.
    for fn, group in by_fn.items():
        short = statistics.median(iv.unexplained_ms for iv in group)
        if short < -max(cfg.floor_ms, cfg.sigmas * clean_noise):
            claimed = statistics.median(iv.claimed_ms for iv in group)
            result.add(
                FindingKind.OVERLAP,
                f"{fn}'s samples claim {claimed:.3f} ms but the parent saw {claimed + short:.3f} ms (median) "
                "between their input request and the next one: inputs were requested before the previous "
                "sample ran (work overlapped with another turn)")

    # Within the worker, round by round: the candidate's unexplained time per call against the reference's.
    rounds: dict[int, dict[str, Interval]] = {}
    for iv in ivs:
        rounds.setdefault(iv.round, {})[iv.fn] = iv
    paired = [r for r in rounds.values() if candidate in r and reference in r]
    if not paired:
        return result
    k_cand, k_ref = calls.get(candidate, 1), calls.get(reference, 1)
    diffs = [(r[candidate].per_call_ms - r[reference].per_call_ms) * k_cand for r in paired]  # per sample
    diff = statistics.median(diffs)
    result.outside_ms = diff / k_cand
    if len(paired) < cfg.min_rounds:
        return result
    ref_per_call = statistics.median(max(0.0, r[reference].per_call_ms) for r in paired)
    cand_sample_ms = statistics.median(r[candidate].claimed_ms for r in paired)
    ref_ms = [r[reference].unexplained_ms for r in paired]
    noise = max(robust_sigma([b - a for a, b in zip(ref_ms, ref_ms[1:], strict=False)]), clean_noise)
    quiet = max(cfg.floor_ms, cfg.rel * cand_sample_ms, cfg.within_slack * ref_per_call * k_cand)
    threshold = max(quiet, cfg.sigmas * 1.25 * noise / len(paired) ** 0.5)
    # A sample's fixed overhead (the device sync and cache flush before it, the request's round trip) weighs
    # more per call on a callable with fewer calls per sample (CUDA graphs choose K per callable).
    allowance = ref_per_call * max(0, k_ref - k_cand)
    how = (f"median of {len(paired)} rounds, bound {threshold + allowance:.3f} ms; the candidate claims "
           f"{cand_sample_ms / k_cand:.3f} ms per call")
    margin = abs(diff) / (quiet + (allowance if diff > 0 else 0.0))
    if diff > threshold + allowance:
        result.add(
            FindingKind.OUTSIDE_CALL,
            f"~{diff / k_cand:.3f} ms per call of work outside the timed call (the parent's clock: the candidate's "
            f"samples leave {diff:.3f} ms more unexplained than the reference's in the same worker; {how})", margin)
    elif diff < -threshold:
        result.add(
            FindingKind.REFERENCE_TURN,
            f"~{-diff:.3f} ms per candidate sample of work in the reference's turn (the parent's clock: the "
            f"reference's renewals take {-diff:.3f} ms longer than the candidate's in the same worker, though "
            f"they renew the same inputs; {how})", margin)
    if clean is not None:
        _against_clean(result, by_fn, clean, cfg, cand_sample_ms / k_cand if k_cand else 0.0)
    _cpu_time(result, paired, candidate, reference, clean, cfg)
    call_marks.judge(result, by_fn, paired, candidate, reference, clean, cfg)
    _idle(result, {fn: group for fn, group in by_fn.items() if fn != candidate}, cfg, log.sched_clock is not None)
    return result


def _idle(result: Audit, by_fn: dict[str, list[Interval]], cfg: AuditConfig, read: bool) -> None:
    """Time no thread of the worker could run, per reference callable (anticheat/sched_idle.py: load does not produce
    it). Not the candidate's: a sleep inside its timed call is its own time (claimed, it only slows it), and its
    own threads may start and end within a call (whose account then leaves with them).
    ``read``: the parent read the worker's schedstat; none came back (a kernel without it) is said, not judged."""
    figs = [f for fn, group in by_fn.items()
            if (f := sched_idle.figures(fn, [iv.idle_ms for iv in group], [iv.claimed_ms for iv in group]))]
    result.idle = figs
    if read and not figs:
        result.idle_off = ("no idle audit: the worker's threads' /proc/<pid>/task/*/schedstat could not be read "
                           "(a kernel without CONFIG_SCHED_INFO?); a renewal padded by sleeping is judged by the wall "
                           "audit alone")
    for text, margin in sched_idle.judge(figs, cfg.idle):
        result.add(FindingKind.IDLE, text, margin)


def _cpu_time(result: Audit, paired: list[dict[str, Interval]], candidate: str, reference: str,
              clean: CleanBaseline | None, cfg: AuditConfig) -> None:
    """The worker's CPU time per call, round by round (module docstring, "CPU time"): the reference's against the
    clean worker's (same renewal, same reference call: padding shows), and the candidate's beyond the
    reference's and beyond what its claimed call could use on every core (hidden work shows)."""
    known = []
    for r in paired:
        c, e = r[candidate], r[reference]
        if c.cpu_ms is not None and e.cpu_ms is not None:
            kc, ke = max(1, c.calls), max(1, e.calls)
            known.append((c.cpu_ms / kc, e.cpu_ms / ke, c.claimed_ms / kc))
    if len(known) < cfg.min_rounds:
        return
    ref_cpu = statistics.median(e for _, e, _ in known)
    if clean is not None and clean.cpu_per_call_ms is not None:
        _cpu_finding(result, cfg, ref_cpu - clean.cpu_per_call_ms, clean.cpu_per_call_ms,
                     f"of CPU time per call more around {reference}'s samples than in the clean worker "
                     f"({clean.cpu_per_call_ms:.0f} ms there; the worker's CPU time, read by the parent")
    _cpu_finding(result, cfg, statistics.median(c - e - cfg.cores * claimed for c, e, claimed in known), ref_cpu,
                 f"of CPU time per call around {candidate}'s samples beyond the reference's and beyond what its "
                 f"claimed call could use on {cfg.cores} core(s) (the worker's CPU time, read by the parent")


def _cpu_finding(result: Audit, cfg: AuditConfig, excess: float, compared: float, what: str) -> None:
    """A CPU-time finding when ``excess`` passes ``max(cpu_floor_ms, cpu_slack x compared)``."""
    bound = max(cfg.cpu_floor_ms, cfg.cpu_slack * compared)
    if excess > bound:
        result.add(FindingKind.CPU_TIME,
                   f"~{excess:.0f} ms {what}; bound {bound:.0f} ms): work hidden in the renewal, outside the clock",
                   excess / bound)


def _against_clean(result: Audit, by_fn: dict[str, list[Interval]], clean: CleanBaseline, cfg: AuditConfig,
                   cand_call_ms: float) -> None:
    """Each callable's renewal per call against the clean worker's (module docstring, "Against the clean
    worker"). A sample's fixed overhead is spread over its calls: a callable with fewer calls per sample than the
    clean worker's may take that much more per call."""
    for fn, group in by_fn.items():
        if len(group) < cfg.min_rounds:
            continue
        k = max(1, int(statistics.median(iv.calls for iv in group)))
        base = clean.low_per_call_ms if clean.low_per_call_ms is not None else clean.per_call_ms
        over = lower_quartile([iv.per_call_ms for iv in group]) - base
        result.over_clean_ms[fn] = over
        quiet = max(cfg.floor_ms / k, cfg.rel * cand_call_ms, cfg.clean_slack * base)
        allowance = base * max(0, clean.calls - k) / k
        noise = cfg.sigmas * clean.noise_ms / k / max(1, clean.samples) ** 0.5
        bound = max(quiet, noise) + allowance
        if over > bound:
            result.add(
                FindingKind.OVER_CLEAN,
                f"~{over:.3f} ms per call more unexplained time around {fn}'s samples than the input renewal "
                f"takes in the clean worker ({base:.3f} ms per call there, lower quartile of {clean.samples} "
                f"samples against this worker's; bound {bound:.3f} ms): work hidden in the renewal, outside the "
                "clock", over / (quiet + allowance))
