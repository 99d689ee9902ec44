"""Benchmark of the scale-out paths on this machine (issue 27): CPU-backend candidates/hour through the local
runner vs ``--ray`` (a Ray instance started here), and ``mkb serve``: requests/s for cached results and the
latency it adds per candidate over calling the engine directly.

    python scripts/ray_bench.py --out benchmarks/ray            # writes results.json and prints a summary

Candidates are plain PyTorch ReLU variants (distinct sources, so no build or result is shared between the
modes; each mode gets its own build folder and store), timed with a short budget: what is measured is the
harness (workers, builds, lanes, transport), not a kernel.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig, TimingConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.store import ResultStore
from multikernelbench.tasks import load_suite
from multikernelbench.util.procs import usable_cores

TASK = "activation.relu"
HEAD = "import torch\nimport torch.nn as nn\n"


def source(tag: str) -> str:
    return HEAD + (f"class ModelNew(nn.Module):\n    def forward(self, x):\n"
                   f"        return torch.clamp_min(x, 0.0)  # {tag}\n")


def config(root: Path, **kw) -> EngineConfig:
    return EngineConfig(build_root=root / "builds", allow_code_execution=True,
                        timing=TimingConfig(min_runs=5, max_runs=50, budget_s=0.5, warmup=2),
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False), **kw)


def throughput(mode: str, n: int, tasks, root: Path) -> dict:
    cands = [Candidate(task_id=TASK, source=source(f"{mode}-{i}"), label=f"{mode}{i}") for i in range(n)]
    cfg = config(root / mode, ray_address="local" if mode == "ray" else None)
    t0 = time.perf_counter()
    with ResultStore(root / mode / "r.sqlite") as store:
        results = evaluate_candidates(tasks, cands, cfg, store)
    wall = time.perf_counter() - t0
    return {"mode": mode, "candidates": n, "wall_s": round(wall, 1), "per_hour": round(n * 3600 / wall),
            "statuses": sorted({r.status.value for r in results})}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def service_numbers(tasks, root: Path, cached_requests: int, latency_runs: int) -> dict:
    import uvicorn

    from multikernelbench.client import AsyncClient, Client
    from multikernelbench.serve.app import create_app
    from multikernelbench.serve.jobs import EvalService, ServiceConfig

    service = EvalService(ServiceConfig(engine=config(root / "serve"), db=root / "serve" / "r.sqlite",
                                        token="bench", max_pending_per_client=10_000),
                          {t.id: t for t in tasks})
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(service), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}"
    out: dict = {}
    try:
        with Client(url, "bench") as c:
            # latency per candidate: a fresh source through the service vs the engine called directly
            via_service, direct = [], []
            for i in range(latency_runs):
                t0 = time.perf_counter()
                c.evaluate(TASK, source(f"serve-latency-{i}"))
                via_service.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                evaluate_candidates(tasks, [Candidate(task_id=TASK, source=source(f"direct-{i}"), label="d")],
                                    config(root / "direct"))
                direct.append(time.perf_counter() - t0)
            out["latency"] = {"service_s": [round(x, 2) for x in via_service],
                              "direct_s": [round(x, 2) for x in direct],
                              "added_median_s": round(statistics.median(via_service) - statistics.median(direct), 2)}
            # cached: the same source again and again, one request at a time (submit + read the job)
            warm = source("serve-latency-0")
            t0 = time.perf_counter()
            for _ in range(cached_requests):
                job_id = c.submit(TASK, warm)[0]
                assert c.job(job_id)["cached"]
            seq = time.perf_counter() - t0
        out["cached_sequential"] = {"requests": cached_requests, "per_s": round(cached_requests / seq, 1),
                                    "note": "one POST /jobs + one GET /jobs/{id} per result"}

        async def burst() -> float:
            async with AsyncClient(url, "bench") as ac:
                t0 = time.perf_counter()
                await asyncio.gather(*(ac.submit(TASK, warm) for _ in range(cached_requests)))
                return time.perf_counter() - t0

        conc = asyncio.run(burst())
        out["cached_concurrent_posts"] = {"requests": cached_requests, "per_s": round(cached_requests / conc, 1)}
    finally:
        server.should_exit = True
        thread.join(10)
        service.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/ray"))
    ap.add_argument("--candidates", type=int, default=8)
    ap.add_argument("--cached-requests", type=int, default=300)
    ap.add_argument("--latency-runs", type=int, default=3)
    ap.add_argument("--skip", action="append", default=[], choices=["local", "ray", "serve"])
    args = ap.parse_args()
    tasks = [t for t in load_suite() if t.id == TASK]
    report: dict = {"host": {"cores": usable_cores(), "python": platform.python_version()},
                    "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with tempfile.TemporaryDirectory(prefix="mkb-ray-bench-") as tmp:
        root = Path(tmp)
        for mode in ("local", "ray"):
            if mode not in args.skip:
                report[mode] = throughput(mode, args.candidates, tasks, root)
                print(json.dumps(report[mode]), flush=True)
        if "serve" not in args.skip:
            report["serve"] = service_numbers(tasks, root, args.cached_requests, args.latency_runs)
            print(json.dumps(report["serve"]), flush=True)
    try:
        import os

        report["host"]["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    except OSError:
        pass
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
