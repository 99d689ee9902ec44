"""The clock audit's figures on honest candidates beside deterministic load (issue #40 item 4: no false convictions).

Runs honest relus through the real engine (CPU backend, the timing settings of tests/test_prefetch.py by default)
beside busy loops pinned to the cores and, optionally, a memory-bandwidth hog, and writes, for every timing the
device stage judges, what the wall audit saw: per round the candidate's and the reference's unexplained time per
call, the renewal's CPU time (start marks), the median difference, the quiet bound, the noise term, the margin, the
host's load (factor, runnable, PSI) and the decision (retry, conviction, inconclusive). Instrumentation only: the
judge's result is recorded, never changed.

    python scripts/honest_audit_under_load.py --burners 8 --membw 1 --repeat 3 --out /tmp/audit.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from multikernelbench.anticheat.clock_records import AskLog, robust_sigma
from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine import device_stage
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import Runner
from multikernelbench.tasks import load_suite

REPO = Path(__file__).resolve().parents[1]
RELU = "activation.relu"
HOG = "import numpy as np\na=np.ones(1<<25,np.float32);b=np.empty_like(a)\nwhile True: np.copyto(b,a); np.copyto(a,b)"
#: Another evaluation in a loop (bursty load: its compiles, workers and OpenMP timings come and go).
MKB = f"""
import tempfile
from pathlib import Path
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.tasks import load_suite
src = Path({str(REPO / "solutions" / "cpu" / "activation.relu.py")!r}).read_text()
task = {{t.id: t for t in load_suite()}}["activation.relu"]
root = Path(tempfile.mkdtemp(prefix="mkb-load-"))
while True:
    cfg = EngineConfig(backend="cpu", build_root=root, allow_code_execution=True, timing=TimingConfig(budget_s=1.0))
    evaluate_candidates([task], [Candidate(task_id=task.id, source=src, label="load")], cfg)
"""


def _plain(k: int) -> Candidate:
    src = textwrap.dedent(f"""
        import torch
        import torch.nn as nn
        # candidate {k}
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.clamp_min(x, 0.0)
        """)
    return Candidate(task_id=RELU, source=src, label=f"plain{k}")


def _load(burners: int, membw: int, mkb: int) -> list[subprocess.Popen]:
    cores = sorted(os.sched_getaffinity(0))
    procs = []
    for i in range(burners + membw):
        code = "while True: pass" if i < burners else HOG
        core = cores[i % len(cores)]
        procs.append(subprocess.Popen([sys.executable, "-c", code],
                                      preexec_fn=lambda c=core: os.sched_setaffinity(0, {c})))
    for _ in range(mkb):  # its own session: its workers end with it
        procs.append(subprocess.Popen([sys.executable, "-c", MKB], start_new_session=True,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs


def _minflt(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[7])
    except (OSError, IndexError, ValueError):
        return None


def _faults(log) -> dict[str, list[int]]:
    """Per callable, the worker's minor page faults from each sample's request to its start mark (the renewal)."""
    seen = getattr(log, "faults", [])
    out: dict[str, list[int]] = {}
    for (phase, fn, a), (phase2, _, b) in zip(seen, seen[1:], strict=False):
        if phase == "sample" and phase2 == "start" and a is not None and b is not None:
            out.setdefault(fn, []).append(b - a)
    return out


def figures(evidence, verdict) -> dict:
    """What the wall audit's round differences were made of (anticheat/clock_audit.py, ``audit``)."""
    ivs = verdict.audit.intervals
    rounds: dict[int, dict] = {}
    for iv in ivs:
        rounds.setdefault(iv.round, {})[iv.fn] = iv
    paired = [r for r in rounds.values() if "candidate" in r and "eager" in r]
    out: dict = {"confirming": evidence.confirming, "load": evidence.load.to_dict() if evidence.load else None,
                 "kinds": [f.kind.value for f in verdict.audit.found], "margins": [f.margin for f in verdict.audit.found],
                 "retry": bool(verdict.clock.retry), "conviction": verdict.clock.conviction[:300],
                 "inconclusive": bool(verdict.clock.inconclusive)}
    if not paired:
        return out
    cand = [r["candidate"].per_call_ms for r in paired]
    ref = [r["eager"].per_call_ms for r in paired]
    diffs = [c - e for c, e in zip(cand, ref, strict=True)]
    claimed = statistics.median(r["candidate"].claimed_ms for r in paired)
    ref_per_call = statistics.median(max(0.0, x) for x in ref)
    quiet = max(0.1, 0.1 * claimed, 0.25 * ref_per_call)
    noise = robust_sigma([b - a for a, b in zip(ref, ref[1:], strict=False)]) if len(ref) > 2 else 0.0
    out.update(rounds=len(paired), cand_unexpl=[round(x, 3) for x in cand], ref_unexpl=[round(x, 3) for x in ref],
               cand_renew_cpu=[r["candidate"].renew_cpu_ms for r in paired],
               ref_renew_cpu=[r["eager"].renew_cpu_ms for r in paired],
               renew_faults=_faults(evidence.log), cand_claimed=round(claimed, 3), diff=round(statistics.median(diffs), 3), quiet=round(quiet, 3),
               noise=round(noise, 3), wall_margin=round(abs(statistics.median(diffs)) / quiet, 2))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--burners", type=int, default=8)
    ap.add_argument("--membw", type=int, default=0)
    ap.add_argument("--mkb", type=int, default=0, help="other evaluations in a loop beside")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--candidates", type=int, default=3)
    ap.add_argument("--twin", action="store_true", help="also the honest twin that allocates its output in Python")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    suite = {t.id: t for t in load_suite()}
    records: list[dict] = []
    original = device_stage.judge

    def judged(evidence):
        verdict = original(evidence)
        records.append(figures(evidence, verdict))
        return verdict

    device_stage.judge = judged  # instrumentation of this script's own process; restored below
    make_log = device_stage.CandidateEvaluation._ask_log
    record = AskLog.record

    def ask_log(stage, session):
        log = make_log(stage, session)
        log.pid = session.worker.proc.pid if session.worker.proc is not None else None
        log.faults = []
        return log

    def recorded(log, ask):
        record(log, ask)
        if getattr(log, "pid", None) is not None:
            log.faults.append((str(ask.phase), str(ask.fn), _minflt(log.pid)))

    device_stage.CandidateEvaluation._ask_log = ask_log
    AskLog.record = recorded
    procs = _load(args.burners, args.membw, args.mkb)
    try:
        with tempfile.TemporaryDirectory() as tmp, args.out.open("a") as f:
            for rep in range(args.repeat):
                cands = [_plain(k) for k in range(args.candidates)]
                if args.twin:
                    src = (REPO / "tests" / "data" / "honest_twins" / "activation.relu.py").read_text()
                    cands.append(Candidate(task_id=RELU, source=src, label="twin"))
                cfg = EngineConfig(build_root=Path(tmp) / "builds", allow_code_execution=True, seed=5 + rep,
                                   timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1),
                                   anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False),
                                   backend_options={"pch": False})
                records.clear()
                t0 = time.time()
                results = Runner(cfg, progress=False).evaluate([suite[RELU]], cands)
                row = {"rep": rep, "burners": args.burners, "membw": args.membw, "mkb": args.mkb, "wall_s": round(time.time() - t0, 1),
                       "statuses": [r.status.value for r in results], "messages": [r.message[:200] for r in results],
                       "host_load": [r.host_load for r in results], "timings": list(records)}
                f.write(json.dumps(row) + "\n")
                f.flush()
                print(json.dumps({k: row[k] for k in ("rep", "statuses", "wall_s")}), flush=True)
                for t in records:
                    print("   ", json.dumps({k: t.get(k) for k in ("confirming", "diff", "quiet", "noise",
                                                                   "wall_margin", "kinds", "margins", "retry",
                                                                   "inconclusive")}),
                          (t.get("load") or {}).get("factor"), flush=True)
    finally:
        device_stage.judge = original
        device_stage.CandidateEvaluation._ask_log = make_log
        AskLog.record = record
        for p in procs:
            os.killpg(p.pid, 9) if p.args[-1] == MKB else p.kill()
            p.wait()


if __name__ == "__main__":
    main()
