"""Refresh the package's copy of `mkb demo`'s quick set from solutions/cpu/ (or check it, with --check).

    python scripts/sync_demo_solutions.py [--check]

The quick set (multikernelbench/cli/demo.py: QUICK) ships inside the package as
multikernelbench/demo_solutions/cpu/, so an installed package (``pip install .``) can run ``mkb demo``.
After editing one of those solutions, or QUICK, run this and commit multikernelbench/demo_solutions/;
tests/test_demo.py fails while the copy is stale.
"""

from __future__ import annotations

import argparse
import sys

from multikernelbench.cli.demo import PACKAGED, demo_copy_problems, write_demo_copy


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the copy is stale, write nothing")
    args = ap.parse_args()
    problems = demo_copy_problems()
    if args.check:
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    written = write_demo_copy()
    print(f"wrote {len(written)} files under {PACKAGED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
