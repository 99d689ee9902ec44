"""The renewal's CPU time judged alone: a start mark between each sample's renewal and its timed call (issue #40,
"balanced renewal", the class the wall, whole-interval CPU and idle audits all missed beside load).

Why: ``tests/data/timing_attacks/renew_profile_balanced.py`` hides a float64 product (~20 ms of CPU per call) in
the harness's renewal of the candidate's inputs and pads the reference's renewal by a busy loop as long. Beside
load the wall audit is blind (the renewal intervals are mostly scheduling latency), the busy loop is runnable time
(no idle for anticheat/sched_idle.py), and the whole interval's CPU time (``/proc/<pid>/stat``: 10 ms ticks)
mixes the renewal with the timed call, whose spinning pool threads made the same reference's CPU time per call
vary 20-80 ms between clean calibrations: the CPU audit's floor is 40 ms, above the hidden work.

What the parent reads, where the candidate cannot forge it: the worker *process's* CPU clock
(``clock_gettime(CPUCLOCK_SCHED of its pid)``: the scheduler's ns account of every thread, those that exited
included, read in well under a microsecond; no permission needed, no 10 ms ticks), when each fresh-input request
arrives and when the worker's start mark arrives: after the renewal, just before the timed call
(:meth:`~multikernelbench.timing.loop.Fresh.start`; the worker waits for the parent's empty answer, so the reading
is taken while the harness's thread is blocked). Each sample's interval splits in two::

    renewal = CPU(mark) - CPU(request)          the harness renews inputs: the same work in every worker
    call    = CPU(next request) - CPU(mark)     the timed call, then the harness's bookkeeping

and per callable (median over its samples, per call):

* **renewal against the clean worker's renewal** (same shapes, same generator, no candidate code; the larger of
  the clean workers timed beside a confirming timing): ``renewal - clean > max(renew_cpu_floor_ms,
  renew_cpu_slack x clean)`` is work hidden in the renewal, whether the worker's reference is padded by burning
  CPU or by sleeping;
* **renewal against the reference's in the same worker**, round by round (no clean worker needed);
* **call part beyond what the claimed call could use**: ``call - cores x claimed > call_cpu_floor_ms``.

The mark is sent by the worker, so a candidate can move it (or suppress it: a sample without its mark is a
protocol finding where marks are expected). Moving it only moves CPU time from one part to the other: hidden
work ``h`` passes both only when ``h`` stays under the two bounds together plus what the candidate's call left of
``cores x claimed`` unused (module README, "Limits"). CPU time is not stretched by descheduling (a thread waiting
for a core uses none), so these findings are not excused by load; they convict, like every clock finding that
load could touch, only when a second timing in a fresh worker has one too. CPU backends only (a GPU sync's
spin-wait burns CPU for device work); the parent reads nothing and expects no marks elsewhere.

Limits: hidden work that runs *inside the reference's timed call* (a thread of the candidate computing its
answer while the reference is timed, writing into an output it already returned) is inside ``cores x claimed``
of the reference: the reference is only slower there (a note; the speedup is the clean worker's); work in a
forked child process is not in the worker's CPU clock.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from multikernelbench.timing.loop import Phase

if TYPE_CHECKING:
    from multikernelbench.anticheat.clock_records import Ask, Audit, AuditConfig, CleanBaseline, Interval

#: CPUCLOCK_SCHED (the scheduler's runtime, ns) of a process: ``clockid = (~pid << 3) | 2`` (linux/posix-timers.h).
_CPUCLOCK_SCHED = 2


def process_cpu_ns(pid: int) -> int | None:
    """Every thread's CPU time of ``pid`` (exited threads' too), ns, from the kernel; None when gone or not Linux."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | _CPUCLOCK_SCHED)
    except (OSError, ValueError, OverflowError, AttributeError):
        return None


def split(asks: Sequence[Ask], expected: bool) -> tuple[list[Ask], list[Ask | None], list[str]]:
    """The requests without the start marks, each one's mark (None where it has none) and every misplaced or
    missing mark. A mark belongs right after its sample's request (same callable, same calls)."""
    kept: list[Ask] = []
    marks: list[Ask | None] = []
    problems: list[str] = []
    for a in asks:
        if a.phase is not Phase.START:
            kept.append(a)
            marks.append(None)
            continue
        last = kept[-1] if kept else None
        if (last is None or last.phase is not Phase.SAMPLE or marks[-1] is not None or last.fn != a.fn
                or last.calls != a.calls):
            problems.append(f"a timed call's start mark for {a.fn} out of place")
        else:
            marks[-1] = a
    if expected:
        missing = sum(1 for a, m in zip(kept, marks, strict=True) if a.phase is Phase.SAMPLE and m is None)
        if missing:
            problems.append(f"{missing} timed sample(s) without their start mark")
    return kept, marks, problems


def parts_ms(ask: Ask, mark: Ask | None, next_run: int | None) -> tuple[float | None, float | None]:
    """(renewal, call part) CPU ms of one sample's interval; None where a reading is missing."""
    if mark is None or mark.run is None or ask.run is None:
        return None, None
    call = (next_run - mark.run) / 1e6 if next_run is not None else None
    return (mark.run - ask.run) / 1e6, call


def _per_call(group: Sequence[Interval], part: str) -> list[float]:
    return [getattr(iv, part) / max(1, iv.calls) for iv in group if getattr(iv, part) is not None]


def judge(result: Audit, by_fn: dict[str, list[Interval]], paired: list[dict[str, Interval]], candidate: str,
          reference: str, clean: CleanBaseline | None, cfg: AuditConfig) -> None:
    """The three findings of the module docstring, as :data:`~.clock_records.FindingKind.CPU_TIME`."""
    from multikernelbench.anticheat.clock_records import FindingKind

    how = "the worker's CPU clock, read by the parent at the request and at the timed call's start mark"
    base = clean.renew_cpu_per_call_ms if clean is not None else None
    for fn, group in by_fn.items():
        renew = _per_call(group, "renew_cpu_ms")
        if base is not None and len(renew) >= cfg.min_rounds:
            over, bound = statistics.median(renew) - base, max(cfg.renew_cpu_floor_ms, cfg.renew_cpu_slack * base)
            if over > bound:
                result.add(FindingKind.CPU_TIME,
                           f"~{over:.1f} ms of CPU time per call more in the renewals before {fn}'s timed calls than "
                           f"the clean worker's renewal ({base:.1f} ms there; median of {len(renew)}, bound "
                           f"{bound:.1f} ms; {how}): work hidden in the renewal, outside the clock", over / bound)
        beyond = [(iv.call_cpu_ms - cfg.cores * iv.claimed_ms) / max(1, iv.calls) for iv in group
                  if iv.call_cpu_ms is not None]
        if len(beyond) >= cfg.min_rounds and (over := statistics.median(beyond)) > cfg.call_cpu_floor_ms:
            result.add(FindingKind.CPU_TIME,
                       f"~{over:.1f} ms of CPU time per call from {fn}'s start marks to the next request beyond what "
                       f"its claimed call could use on {cfg.cores} core(s) (median of {len(beyond)}, bound "
                       f"{cfg.call_cpu_floor_ms:.1f} ms; {how}): work hidden after the mark, outside the clock",
                       over / cfg.call_cpu_floor_ms)
    rounds = [(r[candidate], r[reference]) for r in paired
              if r[candidate].renew_cpu_ms is not None and r[reference].renew_cpu_ms is not None]
    if len(rounds) < cfg.min_rounds:
        return
    ref = statistics.median(e.renew_cpu_ms / max(1, e.calls) for _, e in rounds)  # type: ignore[operator]
    diff = statistics.median(c.renew_cpu_ms / max(1, c.calls) - e.renew_cpu_ms / max(1, e.calls)  # type: ignore[operator]
                             for c, e in rounds)
    bound = max(cfg.renew_cpu_floor_ms, cfg.renew_cpu_slack * ref)
    if diff > bound:
        result.add(FindingKind.CPU_TIME,
                   f"~{diff:.1f} ms of CPU time per call more in the renewals before {candidate}'s timed calls than "
                   f"before {reference}'s in the same worker, though they renew the same inputs (median of "
                   f"{len(rounds)} rounds, bound {bound:.1f} ms; {how}): work hidden in the renewal, outside the clock",
                   diff / bound)
