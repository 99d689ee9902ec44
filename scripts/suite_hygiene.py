"""Suite hygiene from a baseline: which tasks leave no room to win, and which are launch-bound.

    python scripts/suite_hygiene.py [--baseline FILE] [--near 0.9] [--min-ms 0.25] [--out FILE] [--no-suite]

Reads a baseline file of ``mkb baseline`` (default: the committed reference-GPU one,
``multikernelbench/baselines/cuda_h200.jsonl``) and lists, grouped by category, every task whose eager reference
already runs at ``--near`` (0.9) of the roofline or more — a candidate cannot win much there, and the SOL score
of such a task is noise — or whose bench shape runs in under ``--min-ms`` (0.25 ms) — launch overhead, not the
kernel, decides its timing — or whose measurement carries a harness flag. Each gets a suggested action, except
a task at the bound whose task file says why (``NO_HEADROOM``), which is listed as marked. With
the suite loaded (the default), rows measured on task content that has changed since (stale) and tasks
without a row are listed too, as are rows whose reference could not be timed. Prints a table; writes the
same as JSON to ``--out`` (default ``~/.cache/multikernelbench/suite_hygiene.json``: tools never write into
the source tree unless told to).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from multikernelbench.baselines import Baseline, BaselineRow, load_baseline
from multikernelbench.roofline import load_peaks, roofline_fraction

DEFAULT_OUT = Path.home() / ".cache" / "multikernelbench" / "suite_hygiene.json"

NEAR = "near_roofline"
OVER = "eager_over_bound"
SHORT = "launch_bound"
FLAGGED = "flagged"
MARKED = "marked_no_headroom"  # at the bound, and the task file says why (NO_HEADROOM)


@dataclass
class Finding:
    """One task that needs a look, with what the baseline says and what to do about it."""

    task_id: str
    category: str
    issues: list[str]
    action: str
    eager_ms: float | None = None
    eager_fraction: float | None = None
    compiled_ms: float | None = None
    bound: str = ""  # "memory" or "compute": which side of the roofline limits the task
    scale_to_min_ms: float | None = None  # how much more work the bench shape needs to reach --min-ms
    detail: str = ""


@dataclass
class Hygiene:
    baseline: str
    hardware: list[str]
    near: float
    min_ms: float
    rows: int
    findings: list[Finding] = field(default_factory=list)

    def by_category(self) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = defaultdict(list)
        for f in sorted(self.findings, key=lambda f: (f.category, f.task_id)):
            out[f.category].append(f)
        return dict(out)

    def counts(self) -> dict[str, dict[str, int]]:
        """category -> issue -> number of tasks."""
        out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for f in self.findings:
            for issue in f.issues:
                out[f.category][issue] += 1
        return {c: dict(v) for c, v in sorted(out.items())}

    def to_json(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "hardware": self.hardware,
                "thresholds": {"near_roofline": self.near, "min_ms": self.min_ms}, "rows": self.rows,
                "counts": self.counts(),
                "tasks": {c: [asdict(f) for f in fs] for c, fs in self.by_category().items()}}


def bound_side(row: BaselineRow) -> str:
    """Which term of ``max(flops / compute_peak, bytes / bandwidth)`` is the larger for this row."""
    peaks = load_peaks(row.hardware) if row.hardware else None
    flops, nbytes = row.raw.get("flops"), row.raw.get("bytes")
    if not peaks or not isinstance(flops, (int, float)) or not isinstance(nbytes, (int, float)):
        return ""
    t_mem = roofline_fraction(row.hardware, row.dtype, 0, int(nbytes), 1.0)
    t_cmp = roofline_fraction(row.hardware, row.dtype, int(flops), 0, 1.0)
    if t_mem is None or t_cmp is None:
        return ""
    return "compute" if t_cmp > t_mem else "memory"


#: Eager may beat a memory bound by this much without the cost model being wrong: the bandwidth peak is a
#: device-to-device copy, a little slower than the best streaming kernels.
COPY_SLACK = 1.05


def _action(issues: list[str], bound: str, scale: float | None, fraction: float | None) -> str:
    steps = []
    if OVER in issues and bound == "memory" and fraction is not None and fraction <= COPY_SLACK:
        steps.append("eager streams at the measured copy bandwidth: no room to win; fuse more work per byte "
                     "or mark the task as having no headroom (with the reason)")
    elif OVER in issues:
        steps.append("eager beats the roofline bound: the task's FLOP/byte counts are likely overcounted (or "
                     "the library does less arithmetic than counted, e.g. a Winograd/FFT convolution, or the "
                     "peak is understated); fix the cost model first")
    elif NEAR in issues:
        if bound == "compute":
            steps.append("compute-bound at the library's peak: pick a shape or dtype where eager is less "
                         "efficient, or mark the task as having no headroom (with the reason)")
        else:
            steps.append("memory-bound at copy speed: fuse more work per byte (a chain of ops eager runs "
                         "as separate kernels), or mark the task as having no headroom (with the reason)")
    if SHORT in issues:
        grow = f" (about {scale:.1f}x more work)" if scale else ""
        steps.append(f"grow the bench shape so eager runs at least the minimum time{grow}")
    if FLAGGED in issues:
        steps.append("the measurement carries a harness flag: check it (a false alarm?) and measure again")
    return "; ".join(steps)


def check_row(row: BaselineRow, near: float, min_ms: float) -> Finding | None:
    category = row.task_id.split(".", 1)[0]
    if row.error or row.eager_ms is None:
        return Finding(row.task_id, category, ["not_timed"], "fix the task so its reference runs, then measure "
                       "it again", detail=row.error[:300] or "no eager timing in the row")
    issues = []
    if row.eager_fraction is not None and row.eager_fraction >= 1.0:
        issues.append(OVER)
    elif row.eager_fraction is not None and row.eager_fraction >= near:
        issues.append(NEAR)
    scale = None
    if row.eager_ms < min_ms:
        issues.append(SHORT)
        scale = min_ms / row.eager_ms
    flags = [str(f) for f in row.raw.get("flags") or []]
    if flags:
        issues.append(FLAGGED)
    if not issues:
        return None
    bound = bound_side(row)
    return Finding(row.task_id, category, issues, _action(issues, bound, scale, row.eager_fraction),
                   eager_ms=row.eager_ms, eager_fraction=row.eager_fraction, compiled_ms=row.compiled_ms,
                   bound=bound, scale_to_min_ms=scale, detail="; ".join(flags)[:300])


def suite_findings(baseline: Baseline, suite: dict[str, str]) -> list[Finding]:
    """Rows for task content that changed since (stale), and suite tasks with no row (``suite``: id -> hash)."""
    out = []
    for tid, current in sorted(suite.items()):
        row = baseline.rows.get(tid)
        category = tid.split(".", 1)[0]
        if row is None:
            out.append(Finding(tid, category, ["no_row"], "measure it (mkb baseline --task ...)"))
        elif row.task_hash != current:
            out.append(Finding(tid, category, ["stale"], "the task changed since it was measured: measure it "
                               "again", detail=f"row hash {row.task_hash}, task hash {current}"))
    return out


def hygiene(baseline: Baseline, near: float = 0.9, min_ms: float = 0.25,
            suite: dict[str, str] | None = None, notes: dict[str, str] | None = None) -> Hygiene:
    """``notes``: task id -> its task file's ``NO_HEADROOM`` reason; a task at the bound that has one is
    listed as marked (done), not with an action."""
    result = Hygiene(baseline.source, baseline.hardware, near, min_ms, len(baseline.rows))
    stale = set()
    if suite is not None:
        extra = suite_findings(baseline, suite)
        stale = {f.task_id for f in extra if "stale" in f.issues}
        result.findings += extra
    for tid, row in sorted(baseline.rows.items()):
        if tid in stale or (suite is not None and tid not in suite):
            continue  # a stale row's numbers describe another task; a removed task needs no fixing
        finding = check_row(row, near, min_ms)
        if finding is not None:
            note = (notes or {}).get(tid)
            if note and (NEAR in finding.issues or OVER in finding.issues):
                finding.issues.append(MARKED)
                finding.action = f"marked NO_HEADROOM in the task file: {note[:160]}"
            result.findings.append(finding)
    return result


def _num(value: float | None, width: int, digits: int) -> str:
    return f"{'-':>{width}s}" if value is None else f"{value:{width}.{digits}f}"


def render(h: Hygiene) -> str:
    lines = [f"baseline {h.baseline} ({', '.join(h.hardware) or 'unknown hardware'}, {h.rows} rows); "
             f"near roofline: eager fraction >= {h.near:g}; launch-bound: eager < {h.min_ms:g} ms", ""]
    for category, findings in h.by_category().items():
        counts = ", ".join(f"{k} {v}" for k, v in sorted(h.counts()[category].items()))
        lines.append(f"## {category} ({counts})")
        shown = [f for f in findings if f.issues != ["no_row"]]
        if shown:
            lines.append(f"{'task':44s} {'eager ms':>9s} {'fraction':>8s} {'bound':>7s}  issues -> action")
        for f in shown:
            lines.append(f"{f.task_id:44s} {_num(f.eager_ms, 9, 4)} {_num(f.eager_fraction, 8, 3)} "
                         f"{f.bound or '-':>7s}  {','.join(f.issues)} -> {f.action}"
                         + (f" [{f.detail}]" if f.detail else ""))
        missing = [f.task_id for f in findings if f.issues == ["no_row"]]
        if missing:
            lines.append(f"no row ({len(missing)}; measure with mkb baseline --task ...): {', '.join(missing)}")
        lines.append("")
    if not h.findings:
        lines.append("no task needs a look")
    return "\n".join(lines)


def _suite() -> tuple[dict[str, str], dict[str, str]]:
    """Task id -> content hash, and task id -> NO_HEADROOM note (for the tasks that have one)."""
    from multikernelbench.tasks import load_suite  # imports every task file: ~10 s

    tasks = load_suite()
    return {t.id: t.content_hash for t in tasks}, {t.id: t.no_headroom for t in tasks if t.no_headroom}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, default=None, help="baseline JSONL (default: the packaged H200 one)")
    ap.add_argument("--near", type=float, default=0.9, help="eager roofline fraction at or above which a task "
                    "leaves no room (default 0.9)")
    ap.add_argument("--min-ms", type=float, default=0.25, help="eager time below which a task is launch-bound "
                    "(default 0.25)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    ap.add_argument("--no-suite", action="store_true", help="do not load the suite (no stale/missing check)")
    args = ap.parse_args(argv)
    try:
        baseline = load_baseline(args.baseline)
    except (FileNotFoundError, ValueError) as exc:
        print(f"suite_hygiene: {exc}", file=sys.stderr)
        return 1
    hashes, notes = (None, None) if args.no_suite else _suite()
    h = hygiene(baseline, args.near, args.min_ms, hashes, notes)
    print(render(h))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(h.to_json(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
