"""``mkb report``: tables (stdout + markdown) and a self-contained HTML page with plots, from a results store."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DEFAULT_STORE = "results.sqlite"  # the default --db of `mkb eval` (`mkb demo` writes mkb-demo.sqlite)


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="summarise a results store: main table, per-category, failures, plots")
    p.add_argument("--db", "--store", dest="store", default=os.environ.get("MKB_STORE", DEFAULT_STORE),
                   help=f"SQLite results store (default: $MKB_STORE or {DEFAULT_STORE})")
    p.add_argument("--out", default=None, help="output folder (default: <store name>-report next to the store)")
    p.add_argument("-k", "--k", dest="k", type=int, action="append",
                   help="k of Comp@k/Pass@k/SpeedUp@k (repeatable; default 1)")
    p.add_argument("--alpha", type=float, action="append",
                   help="speedup threshold of SpeedUp_alpha@k and fast_alpha (repeatable; default 1.0)")
    p.add_argument("--baseline", default=None, metavar="FILE",
                   help="eager baseline (JSONL of `mkb baseline`) for the SOL score and the roofline scatter "
                        "(default: the reference GPU's, multikernelbench/baselines/cuda_h200.jsonl)")
    p.add_argument("--no-baseline", action="store_true", help="no baseline: no SOL table or scatter points")
    p.add_argument("--no-host-peaks", action="store_true",
                   help="do not measure this host's CPU peaks (a few seconds, once; cached under "
                        "~/.cache/multikernelbench/hardware) when its results have no peak table")
    p.add_argument("--no-plots", action="store_true", help="skip the figures (no matplotlib needed)")
    p.add_argument("--quiet", action="store_true", help="do not print the tables")
    p.add_argument("--compare-policies", action="store_true",
                   help="only print, per task, where the mkb and kernelbench policies' verdicts differ")
    p.set_defaults(func=run)


def run(args) -> int:
    from multikernelbench.baselines import load_baseline
    from multikernelbench.report import build_report, load_report_data, write_report

    if getattr(args, "compare_policies", False):
        return compare_policies(args.store)
    try:
        baseline = None if args.no_baseline else load_baseline(args.baseline)
        data = load_report_data(args.store, ks=args.k or [1], alphas=args.alpha or [1.0], baseline=baseline,
                                measure_host=not args.no_host_peaks)
    except (FileNotFoundError, ValueError) as exc:
        print(f"mkb report: {exc}", file=sys.stderr)
        return 1
    if data.measured_host:
        from multikernelbench.host_peaks import cache_path

        print(f"measured the CPU peaks of {data.measured_host} once: {cache_path(data.measured_host)}",
              file=sys.stderr)
    report = build_report(data, plots=not args.no_plots)
    store = Path(args.store)
    out = Path(args.out) if args.out else store.with_name(f"{store.stem}-report")
    paths = write_report(report, out)
    if not args.quiet:
        print(report.markdown)
    print(f"wrote {paths['markdown']} and {paths['html']}", file=sys.stderr)
    return 0


def compare_policies(store_path: str) -> int:
    from multikernelbench.report.policy_compare import compare, render
    from multikernelbench.store import ResultStore

    if not Path(store_path).is_file():
        print(f"mkb report: no results store at {store_path}", file=sys.stderr)
        return 1
    with ResultStore(store_path) as store:
        print(render(*compare(store.labelled())))
    return 0
