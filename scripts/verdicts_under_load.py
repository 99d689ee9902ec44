"""False convictions under host load (issue #40): honest candidates and the timing attacks, beside load.

Every shipped correct CPU solution (solutions/cpu/, not wrong/) and the honest twins (tests/data/honest_twins/)
are evaluated, in the same batches as every attack of tests/data/timing_attacks/, beside load this script starts
and ends itself: ``cpu`` (busy loops pinned round-robin to the usable cores), ``membw`` (numpy copies of 64 MiB
arrays, pinned the same way) and ``mkb`` (processes evaluating the shipped relu in a loop through the engine),
at 0x (none), 1x, 2x and 4x the usable cores. Prints, per level, convictions of honest candidates per 1,000
evaluations, "inconclusive under load" flags, and how many attacks were caught; every evaluation as a JSON line
in ``--out``.

    python scripts/verdicts_under_load.py --plan cpu:0,cpu:1,cpu:2,cpu:4,membw:2,mkb:1 --repeat 1 \\
        --out benchmarks/verdicts_under_load/runs.jsonl

The machine this runs on may be shared: its own load adds to the levels (the host's load is recorded on every
result, ``host_load``). The load processes are killed by their pids when a level ends.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ATTACKS = REPO / "tests" / "data" / "timing_attacks"
TWINS = REPO / "tests" / "data" / "honest_twins"
SOLUTIONS = REPO / "solutions" / "cpu"

_CPU = "while True: pass"
_MEMBW = ("import numpy as np\na = np.ones(1 << 24, dtype=np.float32)\nb = np.empty_like(a)\n"
          "while True:\n    np.copyto(b, a)\n    np.copyto(a, b)\n")
_MKB = """
import sys, tempfile
from pathlib import Path
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.tasks import load_suite
src = Path(sys.argv[1]).read_text()
task = {t.id: t for t in load_suite()}["activation.relu"]
root = Path(tempfile.mkdtemp(prefix="mkb-load-"))
while True:
    cfg = EngineConfig(backend="cpu", build_root=root, allow_code_execution=True,
                       timing=TimingConfig(budget_s=1.0))
    evaluate_candidates([task], [Candidate(task_id=task.id, source=src, label="load")], cfg)
"""


def _pinned(core: int):
    def pre() -> None:
        try:
            os.sched_setaffinity(0, {core})
        except OSError:
            pass
    return pre


def start_load(kind: str, n: int, cores: list[int]) -> list[subprocess.Popen]:
    procs = []
    for i in range(n):
        if kind == "cpu":
            argv = [sys.executable, "-c", _CPU]
        elif kind == "membw":
            argv = [sys.executable, "-c", _MEMBW]
        elif kind == "mkb":
            argv = [sys.executable, "-c", _MKB, str(SOLUTIONS / "activation.relu.py")]
        else:
            raise SystemExit(f"unknown load kind {kind!r}")
        pre = _pinned(cores[i % len(cores)]) if kind != "mkb" else None
        procs.append(subprocess.Popen(argv, preexec_fn=pre, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True))
    return procs


def stop_load(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        try:
            os.killpg(p.pid, 9)  # its own session: the engine's workers of an ``mkb`` load end with it
        except OSError:
            pass
        p.wait()


def candidates():
    from multikernelbench.engine.candidates import Candidate, discover_solutions, read_headers

    honest = [c for c in discover_solutions(SOLUTIONS) if not c.label.startswith("wrong")]
    for path in sorted(TWINS.glob("*.py")):
        src = path.read_text()
        honest.append(Candidate(task_id=read_headers(src)["task"], source=src, label=f"twin:{path.stem}"))
    attacks = []
    for path in sorted(ATTACKS.glob("*.py")):
        src = path.read_text()
        h = read_headers(src)
        attacks.append(Candidate(task_id=h["task"], source=src, label=f"attack:{path.stem}"))
    return honest, attacks


def evaluate(cands, build_root: Path, seed: int, budget_s: float, custom_kernel: bool, on_result=None):
    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.config import EngineConfig, TimingConfig
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.tasks import load_suite

    if not cands:
        return []
    suite = {t.id: t for t in load_suite()}
    tasks = [suite[t] for t in sorted({c.task_id for c in cands})]
    cfg = EngineConfig(backend="cpu", build_root=build_root, allow_code_execution=True, seed=seed,
                       compile_timeout_s=900.0, run_timeout_s=180.0, compile_workers=2,
                       anticheat=AntiCheatConfig(require_custom_kernel=custom_kernel),
                       timing=TimingConfig(budget_s=budget_s))
    return list(zip(cands, evaluate_candidates(tasks, cands, cfg, on_result=on_result), strict=True))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", default="cpu:0,cpu:1,cpu:2,cpu:4,membw:2,mkb:1",
                    help="kind:multiple-of-cores pairs, run in this order")
    ap.add_argument("--repeat", type=int, default=1, help="batches per level")
    ap.add_argument("--budget-s", type=float, default=1.0)
    ap.add_argument("--no-attacks", action="store_true")
    ap.add_argument("--attacks", default="", help="comma-separated name substrings of the attacks to keep")
    ap.add_argument("--only", default="", help="comma-separated label substrings of the honest set to keep")
    ap.add_argument("--build-root", type=Path, default=Path(tempfile.gettempdir()) / "mkb-verdicts-under-load")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    # Killed (SIGTERM), end the way Ctrl-C does: through the finally that stops the load processes; a kill once
    # left six pinned busy loops behind for an hour, loading every later measurement on the host.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    from multikernelbench.flags import FlagKind
    from multikernelbench.records import Status
    from multikernelbench.util.procs import usable_cores

    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(usable_cores()))
    honest, attacks = candidates()
    if args.only:
        keep = args.only.split(",")
        honest = [c for c in honest if any(k in c.label for k in keep)]
    if args.attacks:
        attacks = [c for c in attacks if any(k in c.label for k in args.attacks.split(","))]
    if args.no_attacks:
        attacks = []
    args.build_root.mkdir(parents=True, exist_ok=True)
    out = args.out.open("a") if args.out else None
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seed = 4000
    try:
        for item in args.plan.split(","):
            kind, mult = item.split(":")
            n = int(round(float(mult) * len(cores)))
            level = f"{kind} {mult}x ({n} procs)" if n else "none"
            for _ in range(args.repeat):
                seed += 1
                procs = start_load(kind, n, cores)
                t0 = time.time()
                row = table[level]

                def record(r, c, level=level, row=row, t0=t0) -> None:
                    is_attack = c.label.startswith("attack:")
                    inconclusive = any(f.kind is FlagKind.CLOCK_INCONCLUSIVE for f in r.flags)
                    if is_attack:
                        row["attacks"] += 1
                        row["attacks caught"] += r.status == Status.CHEAT_DETECTED
                        row["attacks inconclusive, no speedup"] += inconclusive and r.speedup is None
                    else:
                        row["honest"] += 1
                        row["convicted"] += r.status == Status.CHEAT_DETECTED
                        row["inconclusive"] += inconclusive
                        row["other non-correct"] += r.status not in (Status.CORRECT, Status.CHEAT_DETECTED)
                    rec = {"level": level, "label": c.label, "task": c.task_id, "attack": is_attack,
                           "status": r.status.value, "speedup": r.speedup, "message": r.message[:400],
                           "host_load": r.host_load, "inconclusive": inconclusive, "batch_s": time.time() - t0,
                           "outside_clock_ms": r.outside_clock_ms,
                           "clock_flags": [f.text[:600] for f in r.flags if "clock" in f.text or "renewal" in f.text]}
                    if out:
                        out.write(json.dumps(rec) + "\n")
                        out.flush()
                    if not is_attack and r.status != Status.CORRECT:
                        print(f"  [{level}] {c.label}: {r.status.value}: {r.message[:300]}", flush=True)
                    print(f"  [{level}] {c.label}: {r.status.value} ({time.time() - t0:.0f} s)", flush=True)

                try:
                    time.sleep(2.0 if n else 0.0)  # let the load reach the run queue
                    natives = [c for c in attacks if "load_inline" in c.source]
                    evaluate(honest + natives, args.build_root, seed, args.budget_s, True, record)
                    evaluate([c for c in attacks if c not in natives], args.build_root, seed, args.budget_s,
                             False, record)
                finally:
                    stop_load(procs)
                print(f"{level}: batch done in {time.time() - t0:.0f} s: {dict(row)}", flush=True)
    finally:
        if out:
            out.close()
    print("\n| load | honest evaluations | convicted | per 1,000 | inconclusive | other non-correct | attacks caught |")
    print("|---|---|---|---|---|---|---|")
    total = 0
    for level, row in table.items():
        per = 1000.0 * row["convicted"] / row["honest"] if row["honest"] else float("nan")
        total += row["honest"]
        print(f"| {level} | {row['honest']} | {row['convicted']} | {per:.1f} | {row['inconclusive']} | "
              f"{row['other non-correct']} | {row['attacks caught']}/{row['attacks']} |")
    print(f"\n{total} honest evaluations in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
