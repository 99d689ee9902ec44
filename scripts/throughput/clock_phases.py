"""Where a run's exclusive GPU turns go, read from its ``mkb eval --trace`` file (issue #44).

Why: with every build cached the clocks are the bound (benchmarks/throughput/README.md, 2026-12-05: 45 clocks,
34 s of 63 s), and every clock holds its GPU's exclusive turn (engine/gpu_turns.py), so whatever runs inside a
turn without needing the GPU to itself costs throughput one for one. Only the timed samples (and the input
renewals and warm-up between them) need it; a worker's start or end, the parent's verification of the timed
outputs and the verdict's CPU work do not. This splits every turn into the phases its trace lines show, and the
gaps between turns into time when a candidate was ready for its clock (the GPU's turn went unused) and time
when none was, so the part that could leave the turn is a number instead of a guess.

Traces written before the turns traced their edges (``clock turn taken`` / ``given back``, engine/gpu_turns.py)
and the timing requests their split (``time split:``, engine/session.py) are read by inference: a turn starts
at its first clock line (the clean worker's start, or the timing request) and ends at the first later line that
needs a turn (the owner's ``end_workers start``, another candidate's check, load or timing); stamps have 0.1 s
resolution. ``--json`` prints every turn and gap.

    python scripts/throughput/clock_phases.py benchmarks/throughput/h200_2026-12-05/tp_lanes_warm_0_trace.log.gz
"""

from __future__ import annotations

import argparse
import enum
import gzip
import json
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

if __package__:
    from .common import trace_line
else:  # run as a script: the package's parent folder (scripts/) on the path, as throughput_bench.py has it
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from throughput.common import trace_line

CLEAN = "(timing the reference in a clean worker)"
#: Lines of another candidate that can only come while no clock holds the GPU (they take a turn).
NEEDS_TURN = ("check start", "load start", "prepare start", "time start", "end_workers start", "device turn taken",
              "clock turn taken")
#: A candidate's lines that belong to a clock turn once one is open.
INSIDE = ("setup start", "setup end", "time start", "time end", "time split:", "clock audit finding")
#: Steps that hold a GPU's shared side (beside each other, never beside a clock).
SHARED = ("check", "load", "prepare", "end_workers")


class Phase(str, enum.Enum):
    ENTRY = "turn taken -> first request"
    CLEAN_START = "clean worker start"
    CLEAN_TIMING = "clean reference timing"
    CLEAN_END = "clean worker end -> timing request"
    TIMING = "candidate timing request"  # the whole request where the trace has no ``time split:`` line
    OUTSIDE_TIMER = "timing request outside the timer"  # models, inputs, the final observed call, the reply
    WARMUP_PLAN = "warm-up and plan"  # where the worker did not send the two apart
    WARMUP = "warm-up calls (with their renewals)"
    PLAN = "plan: probes, graph capture (with renewals)"
    LOOP_RENEWALS = "sample loop: renewals, overhead"
    SAMPLES = "timed samples"
    RENEWALS = "input renewals"
    AFTER = "after timing: verify, judge"
    RECALIBRATION = "clean recalibration"
    COMPILE = "torch.compile device steps"
    OTHER = "other"


@dataclass(frozen=True)
class Event:
    index: int  # the line's place among the candidates' lines (the order they were written in)
    at: float
    who: str
    what: str


@dataclass
class Turn:
    who: str
    start: float
    end: float
    exact: bool  # both edges from the turns' own lines, not inferred
    ready_at: float  # when its candidate asked for it (exact) or ended its last step before it (inferred)
    phases: dict[Phase, float] = field(default_factory=dict)

    @property
    def length(self) -> float:
        return self.end - self.start


@dataclass
class Gap:
    start: float
    end: float
    ready_draining: float  # a candidate was ready; other candidates' shared steps still ran (the clock waits)
    ready_free: float  # a candidate was ready and no step traced on the GPU at all
    unready: float  # no candidate was ready for its clock
    #: ``ready_draining`` by the kind of shared step that ran then (check, load, prepare, end_workers): which of
    #: them a waiting clock waits for. Kinds overlap, so these may add up to more than ``ready_draining``.
    draining_by: dict[str, float] = field(default_factory=dict)


def read_events(path: Path) -> tuple[list[Event], bool]:
    """The candidates' lines of a trace (plain or .gz), or of a throughput JSON's ``trace_head`` (partial:
    the bench keeps the first lines only; the second value says so)."""
    partial = path.suffix == ".json"
    if partial:
        lines = (json.loads(path.read_text()).get("mkb") or {}).get("trace_head") or []
    else:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", errors="replace") as fh:
            lines = fh.read().splitlines()
    out = []
    for line in lines:
        parsed = trace_line(line)
        if parsed is not None:
            out.append(Event(len(out), *parsed))
    return out, partial


def _clean_setup(own: list[Event], i: int) -> bool:
    """A clean worker started inside the turn: ``setup start``, ``setup end``, then the clean timing."""
    nxt = [e.what for e in own[i:i + 3]]
    return len(nxt) == 3 and nxt[1].startswith("setup end") and nxt[2].startswith("time start") and CLEAN in nxt[2]


def _opens(own: list[Event], i: int) -> bool:
    what = own[i].what
    return (what.startswith(("clock turn taken", "device turn taken", "time start"))
            or (what.startswith("setup start") and _clean_setup(own, i)))


def _close(own: list[Event], i: int, events: list[Event]) -> tuple[int, float, bool]:
    """From the turn opened at ``own[i]``: the index of its last own line, its end, whether that end is exact."""
    first = own[i].what
    closer = {"clock": "clock turn given back", "device": "device turn given back"}.get(first.split(" ", 1)[0])
    j = i
    while j + 1 < len(own):
        what = own[j + 1].what
        if closer is not None:
            j += 1
            if what.startswith(closer):
                return j, own[j].at, True
        elif what.startswith(INSIDE) and not (what.startswith("setup start") and not _clean_setup(own, j + 1)):
            j += 1
        else:
            break
    last = own[j]
    bound = next((e.at for e in events[last.index + 1:]
                  if (e.who == last.who and e.index > last.index) or (e.who != last.who and e.what.startswith(NEEDS_TURN))),
                 last.at)
    return j, bound, False


def _phases(lines: list[Event], end: float) -> dict[Phase, float]:
    """Each stretch between two of the turn's lines, by what the earlier line began."""
    out: dict[Phase, float] = {}
    timed = clean = False
    split: dict[str, float] | None = None
    state = Phase.OTHER
    for k, e in enumerate(lines):
        what = e.what
        if what.startswith(("clock turn taken",)):
            state = Phase.ENTRY
        elif what.startswith("device turn taken"):
            state = Phase.COMPILE
        elif what.startswith(("setup start", "setup end")):
            state = Phase.CLEAN_START
        elif what.startswith("time start"):
            clean = CLEAN in what
            state = (Phase.RECALIBRATION if timed else Phase.CLEAN_TIMING) if clean else Phase.TIMING
            timed = timed or not clean
        elif what.startswith("time split:") and state is Phase.TIMING:
            split = _split(what)
        elif what.startswith("time end"):
            state = Phase.CLEAN_END if clean and not timed else Phase.AFTER
        elif what.startswith("clock audit finding"):
            state = Phase.AFTER
        elif what.startswith(("clock turn given back", "device turn given back")):
            break
        stop = lines[k + 1].at if k + 1 < len(lines) else end
        out[state] = out.get(state, 0.0) + max(0.0, stop - e.at)
    if split is not None and Phase.TIMING in out:
        _apply_split(out, split)
    return out


def _split(what: str) -> dict[str, float]:
    """``time split: measure 0.421 s, samples 0.021 s, renewals 0.301 s, ...`` -> {"measure": 0.421, ...}."""
    out = {}
    for part in what.split(":", 1)[1].split(","):
        words = part.split()
        if len(words) >= 2:
            try:
                out[words[0]] = float(words[1])
            except ValueError:
                continue
    return out


def _apply_split(out: dict[Phase, float], split: dict[str, float]) -> None:
    """The request's stretch split by the worker's own account (the reply's wall, samples and renewals, and the
    timer's warm-up and planning walls where it sent them)."""
    request = out.pop(Phase.TIMING)
    measure = min(request, split.get("measure", request))
    samples = min(measure, split.get("samples", 0.0))
    out[Phase.OUTSIDE_TIMER] = request - measure
    out[Phase.SAMPLES] = samples
    rest = measure - samples
    if "warmup" in split and "plan" in split:  # the timer's own walls: the rest of ``measure`` is the loop's
        warmup = min(rest, split["warmup"])
        plan = min(rest - warmup, split["plan"])
        out[Phase.WARMUP], out[Phase.PLAN], out[Phase.LOOP_RENEWALS] = warmup, plan, rest - warmup - plan
    else:
        renewals = min(rest, split.get("renewals", 0.0))
        out[Phase.RENEWALS], out[Phase.WARMUP_PLAN] = renewals, rest - renewals


def _ready_at(own: list[Event], i: int) -> float:
    """Exact when the turn says how long it waited; else the end of the owner's last step before it."""
    what = own[i].what
    if what.startswith("clock turn taken after waiting"):
        try:
            return own[i].at - float(what.split("waiting", 1)[1].split()[0])
        except (IndexError, ValueError):
            pass
    before = [e.at for e in own[:i] if " end" in e.what]
    return before[-1] if before else own[i].at


def find_turns(events: list[Event]) -> list[Turn]:
    own: dict[str, list[Event]] = {}
    for e in events:
        own.setdefault(e.who, []).append(e)
    turns = []
    for who, mine in own.items():
        i = 0
        while i < len(mine):
            if not _opens(mine, i):
                i += 1
                continue
            j, end, exact = _close(mine, i, events)
            turns.append(Turn(who, mine[i].at, end, exact, _ready_at(mine, i), _phases(mine[i:j + 1], end)))
            i = j + 1
    return sorted(turns, key=lambda t: (t.start, t.end))


def _shared_spans(events: list[Event]) -> dict[str, list[tuple[float, float]]]:
    """Each shared step's (start, end), by its kind."""
    opened: dict[tuple[str, str], float] = {}
    out: dict[str, list[tuple[float, float]]] = {}
    for e in events:
        kind, _, rest = e.what.partition(" ")
        if kind not in SHARED:
            continue
        if rest.startswith("start"):
            opened[(e.who, kind)] = e.at
        elif rest.startswith("end") and (e.who, kind) in opened:
            out.setdefault(kind, []).append((opened.pop((e.who, kind)), e.at))
    return out


def _covered(spans: Iterable[tuple[float, float]], a: float, b: float) -> float:
    """Seconds of [a, b] inside the union of ``spans``."""
    cut = sorted((max(a, s), min(b, e)) for s, e in spans if s < b and a < e)
    total, reach = 0.0, a
    for s, e in cut:
        if e > reach:
            total += e - max(s, reach)
            reach = e
    return total


def find_gaps(turns: list[Turn], events: list[Event]) -> list[Gap]:
    by_kind = _shared_spans(events)
    spans = [span for kind in by_kind.values() for span in kind]
    out = []
    for a, b in zip(turns, turns[1:], strict=False):
        if b.start <= a.end:
            continue
        waiting = [t.ready_at for t in turns if t.start >= b.start]
        ready = max(a.end, min(waiting)) if waiting else b.start
        ready = min(ready, b.start)
        draining = _covered(spans, ready, b.start)
        by = {kind: _covered(s, ready, b.start) for kind, s in by_kind.items()}
        out.append(Gap(a.end, b.start, draining, b.start - ready - draining, ready - a.end,
                       {kind: v for kind, v in by.items() if v > 0}))
    return out


@dataclass
class Summary:
    turns: int
    exact: int
    turn_s: float
    turn_p50_s: float
    span_s: float  # first turn's start to last turn's end
    phases: dict[Phase, tuple[int, float, float]]  # turns that show it, seconds in all, p50 per such turn
    ready_draining_s: float
    ready_free_s: float
    unready_s: float
    draining_by_s: dict[str, float] = field(default_factory=dict)


def summarize(turns: list[Turn], gaps: list[Gap]) -> Summary:
    phases: dict[Phase, tuple[int, float, float]] = {}
    for phase in Phase:
        values = [t.phases[phase] for t in turns if phase in t.phases]
        if values:
            phases[phase] = (len(values), sum(values), statistics.median(values))
    return Summary(len(turns), sum(t.exact for t in turns), sum(t.length for t in turns),
                   statistics.median(t.length for t in turns) if turns else 0.0,
                   (turns[-1].end - turns[0].start) if turns else 0.0, phases,
                   sum(g.ready_draining for g in gaps), sum(g.ready_free for g in gaps), sum(g.unready for g in gaps),
                   {k: sum(g.draining_by.get(k, 0.0) for g in gaps) for k in SHARED if any(k in g.draining_by
                                                                                           for g in gaps)})


def report(name: str, s: Summary, partial: bool) -> str:
    lines = [f"{name}: {s.turns} exclusive turns ({s.exact} with both edges traced), {s.turn_s:.1f} s held "
             f"of {s.span_s:.1f} s from the first turn's start to the last one's end"
             + (" [partial: a throughput JSON's trace_head]" if partial else ""),
             f"  {'phase':<44} {'turns':>5} {'s in all':>9} {'p50 s':>7}"]
    for phase, (n, total, p50) in s.phases.items():
        lines.append(f"  {phase.value:<44} {n:>5} {total:>9.1f} {p50:>7.2f}")
    lines.append(f"  gaps between turns: a candidate ready, shared steps draining {s.ready_draining_s:.1f} s; "
                 f"ready, nothing traced on the GPU {s.ready_free_s:.1f} s; no candidate ready {s.unready_s:.1f} s")
    if s.draining_by_s:
        lines.append("  the clock waited on (shared steps running, by kind; they overlap): "
                     + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(s.draining_by_s.items(), key=lambda kv: -kv[1])))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("traces", nargs="+", type=Path, help="trace.log, trace.log.gz, or a throughput JSON")
    ap.add_argument("--json", action="store_true", help="every turn and gap as JSON lines")
    args = ap.parse_args(argv)
    for path in args.traces:
        events, partial = read_events(path)
        turns = find_turns(events)
        gaps = find_gaps(turns, events)
        print(report(path.name, summarize(turns, gaps), partial))
        if args.json:
            for t in turns:
                print(json.dumps({"turn": t.who, "start": t.start, "length": round(t.length, 2), "exact": t.exact,
                                  "ready_at": t.ready_at,
                                  "phases": {p.name: round(v, 2) for p, v in t.phases.items()}}))
            for g in gaps:
                print(json.dumps({"gap": [g.start, g.end], "ready_draining": round(g.ready_draining, 2),
                                  "draining_by": {k: round(v, 2) for k, v in g.draining_by.items()},
                                  "ready_free": round(g.ready_free, 2), "unready": round(g.unready, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
