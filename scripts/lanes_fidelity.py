"""Do speedups move with the lane count? Compare two modes' eval runs of one set, two runs each (issue #44).

Why: several lanes per GPU keep every clock exclusive (scripts/lane_windows.py checks that), but a default may only
change if the numbers a user publishes stay where they were. This prints each honest ``correct`` result's speedup
per run, the difference between the two runs of one mode (run-to-run spread) and between the modes' geometric
means; the change is within noise when the between-mode differences are no larger than the within-mode ones.

    python scripts/lanes_fidelity.py --a 1lane RUN1.jsonl RUN2.jsonl --b auto RUN3.jsonl RUN4.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from multikernelbench.scoring import geometric_mean


def speedups(path: Path) -> dict[str, float]:
    """Candidate -> speedup for every result with one (the eval's ``--json`` lines)."""
    out: dict[str, float] = {}
    for line in path.read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and r.get("speedup"):
            out[r["candidate"]] = float(r["speedup"])
    return out


def spread(x: float | None, y: float | None) -> float | None:
    return abs(x / y - 1) if x and y else None


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", nargs=3, metavar=("NAME", "RUN1", "RUN2"), required=True)
    ap.add_argument("--b", nargs=3, metavar=("NAME", "RUN1", "RUN2"), required=True)
    args = ap.parse_args(argv)
    runs = [speedups(Path(p)) for p in (*args.a[1:], *args.b[1:])]
    names = sorted(set().union(*runs))
    cols = [f"{args.a[0]} 1", f"{args.a[0]} 2", f"{args.b[0]} 1", f"{args.b[0]} 2"]
    print(f"{'candidate':42s}" + "".join(f"{c:>10s}" for c in cols) + f"{'within a':>10s}{'within b':>10s}{'a vs b':>10s}")
    within_a, within_b, between = [], [], []
    for n in names:
        v = [r.get(n) for r in runs]
        wa, wb = spread(v[0], v[1]), spread(v[2], v[3])
        a = [x for x in v[:2] if x]
        b = [x for x in v[2:] if x]
        ga, gb = geometric_mean(a), geometric_mean(b)
        ab = abs(gb / ga - 1) if ga and gb else None
        for acc, x in ((within_a, wa), (within_b, wb), (between, ab)):
            if x is not None:
                acc.append(x)
        cells = "".join(f"{x:10.3f}" if x else f"{'-':>10s}" for x in v)
        pct = "".join(f"{x * 100:9.1f}%" if x is not None else f"{'-':>10s}" for x in (wa, wb, ab))
        print(f"{n[:42]:42s}{cells}{pct}")
    for label, xs in (("within " + args.a[0], within_a), ("within " + args.b[0], within_b),
                      (f"{args.a[0]} vs {args.b[0]}", between)):
        if xs:
            print(f"{label}: median {statistics.median(xs) * 100:.1f}%, max {max(xs) * 100:.1f}% over {len(xs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
