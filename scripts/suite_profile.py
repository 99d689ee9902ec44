"""Where a full test run's wall went, from a ``--suite-profile`` file (tests/_suite_profile.py): per file, its
tests' wall and CPU; per xdist worker, when it started and ended and how much of that its tests did not use the
CPU (waiting at the timing gate, sleeping, or waiting for the other worker's compilers); the tests that waited
most. CPU is per file only where a module fixture's children are reaped late (see the plugin's docstring).

    python -m pytest -q -n 2 --dist loadfile --suite-profile /tmp/suite.jsonl
    python scripts/suite_profile.py /tmp/suite.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Row:
    test: str
    worker: str
    start: float
    wall_s: float
    cpu_s: float

    @property
    def file(self) -> str:
        return self.test.split("::", 1)[0]

    @property
    def end(self) -> float:
        return self.start + self.wall_s


def read(path: Path) -> list[Row]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Row(r["test"], r["worker"], r["start"], r["wall_s"], r["cpu_s"] + r["children_cpu_s"]) for r in rows]


def report(rows: list[Row], top: int = 25) -> list[str]:
    if not rows:
        return ["no tests in the profile"]
    t0, t1 = min(r.start for r in rows), max(r.end for r in rows)
    out = [f"{len(rows)} tests, {t1 - t0:.0f} s from the first start to the last end, "
           f"{sum(r.cpu_s for r in rows):.0f} CPU-s"]
    workers: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        workers[r.worker].append(r)
    for name, mine in sorted(workers.items()):
        wall, cpu = sum(r.wall_s for r in mine), sum(r.cpu_s for r in mine)
        first, last = min(r.start for r in mine), max(r.end for r in mine)
        out.append(f"  {name}: +{first - t0:.0f} s to +{last - t0:.0f} s (idle after its last test: {t1 - last:.0f} s), "
                   f"tests {wall:.0f} s wall, {cpu:.0f} CPU-s")
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in rows:
        files[r.file][0] += r.wall_s
        files[r.file][1] += r.cpu_s
    out.append(f"files by wall (top {top}): wall s, CPU-s")
    out += [f"  {f}: {w:.0f}, {c:.0f}" for f, (w, c) in sorted(files.items(), key=lambda kv: -kv[1][0])[:top]]
    out.append(f"tests by wall not spent on CPU (top {top}): wall s, CPU-s")
    waiting = sorted(rows, key=lambda r: r.cpu_s - r.wall_s)[:top]
    out += [f"  {r.test}: {r.wall_s:.0f}, {r.cpu_s:.0f}" for r in waiting]
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    print("\n".join(report(read(Path(argv[0])))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
