"""Run the task-format checks and degeneracy gates over (part of) the suite and print every problem.

    python scripts/check_tasks.py [--category C ...] [--ids ID ...]

Exit status 1 when any task fails; task authors run this before committing a new task.
"""

from __future__ import annotations

import argparse
import sys
import time

from multikernelbench.tasks import load_suite
from multikernelbench.tasks.gates import check_task, estimated_gpu_ms


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--category", action="append")
    ap.add_argument("--ids", nargs="*")
    args = ap.parse_args()
    tasks = load_suite(categories=args.category, ids=args.ids)
    bad = 0
    t0 = time.perf_counter()
    for task in tasks:
        problems = check_task(task)
        status = "ok " if not problems else "BAD"
        bad += bool(problems)
        print(f"{status} {task.id:50s} est {estimated_gpu_ms(task):7.2f} ms  {'; '.join(problems)}")
    print(f"{len(tasks)} tasks, {bad} failing, {time.perf_counter() - t0:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
