"""CPU seconds of C++ candidate builds with ``main.cpp`` on the light header against the full precompiled one
(backends/extbuild/light_main.py), side by side in one run.

    python scripts/light_main_bench.py [--rounds 3] [--solutions solutions/cpu] [--names a,b] [--out FILE.json]

The cpu backend's warmer makes both headers first (not timed). Then each round builds each solution twice, in
fresh processes one after the other, alternating which goes first: ``light_main=true`` and ``false``, each in an
empty build folder. A build's CPU is its process's children (ninja, the driver, g++, the linker:
``RUSAGE_CHILDREN``); the module is imported and its ``ModelNew`` run once on the task's inputs, so a broken
light build shows. Prints a table and the ratio of medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path
from multikernelbench.backends.registry import get_backend
folder, light, path = Path(sys.argv[1]), sys.argv[2] == "1", Path(sys.argv[3])
backend = get_backend("cpu", light_main=light)
folder.mkdir(parents=True)
os.environ.update(backend.worker_env(folder))
t0 = time.perf_counter()
module = backend.load(path.read_text(), folder)
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
paths = [json.loads(r)["path"] for p in folder.rglob("mkb_main_light.jsonl") for r in p.read_text().splitlines()]
print(json.dumps({"cpu_s": round(ru.ru_utime + ru.ru_stime, 2), "wall_s": round(wall, 2), "main": paths,
                  "has_model": hasattr(module, "ModelNew")}))
"""


def build(folder: Path, light: bool, path: Path) -> dict:
    res = subprocess.run([sys.executable, "-c", CHILD, str(folder), "1" if light else "0", str(path)],
                         capture_output=True, text=True, timeout=900)
    if res.returncode != 0:
        return {"error": res.stderr[-800:]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--solutions", type=Path, default=Path("solutions/cpu"))
    ap.add_argument("--names", default="activation.relu,activation.softmax,reduce.max_dim,reduce.var_dim",
                    help="comma-separated solution names (file stems)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    from multikernelbench.backends.registry import get_backend

    warmer = get_backend("cpu").prepare_builds(Path(tempfile.mkdtemp(prefix="mkb-lmb-")))
    if warmer is not None:
        print("warming the precompiled headers (not timed) ...", flush=True)
        warmer.wait(1800)
        warmer.stop()
    sols = [args.solutions / f"{name}.py" for name in args.names.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="mkb-lmb-") as tmp:
        for r in range(args.rounds):
            for i, sol in enumerate(sols):
                order = (True, False) if (r + i) % 2 == 0 else (False, True)
                for light in order:
                    got = build(Path(tmp) / f"r{r}_{sol.stem}_{int(light)}", light, sol)
                    rows.append({"round": r, "solution": sol.stem, "light_main": light, **got})
                    print(json.dumps(rows[-1])[:300], flush=True)
    ok = [x for x in rows if "cpu_s" in x]
    print("\n| solution | light CPU-s (median) | full CPU-s (median) | ratio | light main.cpp paths |")
    print("|---|---:|---:|---:|---|")
    summary = {}
    for sol in sols:
        lt = [x["cpu_s"] for x in ok if x["solution"] == sol.stem and x["light_main"]]
        fu = [x["cpu_s"] for x in ok if x["solution"] == sol.stem and not x["light_main"]]
        paths = sorted({p for x in ok if x["solution"] == sol.stem and x["light_main"] for p in x["main"]})
        if lt and fu:
            summary[sol.stem] = {"light": statistics.median(lt), "full": statistics.median(fu)}
            print(f"| {sol.stem} | {summary[sol.stem]['light']:.1f} | {summary[sol.stem]['full']:.1f} | "
                  f"{summary[sol.stem]['light'] / summary[sol.stem]['full']:.2f} | {', '.join(paths)} |")
    errors = [x for x in rows if "error" in x]
    print(f"{len(ok)} builds, {len(errors)} failed")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
