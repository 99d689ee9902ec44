"""Soak benchmark of ``mkb serve`` (issue #42): N honest clients with and without M hostile ones, loopback.

Starts the real service (``mkb serve`` in a subprocess, CPU backend, ``--lanes`` lanes, one task, no timing), then runs two
phases of ``--seconds`` each: honest clients alone, then honest clients beside hostile ones. Honest clients
submit PyTorch kernels from a small pool (mostly answered from the cache, every ``--new-every``-th one new,
so it is evaluated) and long-poll their results. Hostile clients, each with its own token
(scripts/serve_hostile.py): ``--polls`` long-polls on a sleeping candidate, ``--slow`` slow-header connections,
a cache flooder and a queue flooder.

Prints one JSON line per phase: honest submit latency p50/p99 (s), honest results per minute, server peak
RSS (VmHWM of the service process, MB) and its RSS at the end, the host's load average (lowest and
highest, sampled every 5 s: the machine may be shared), and ``cpu_s``: CPU seconds of the phase per thread of
the service, its zygotes and workers, the honest clients and core 0 as a whole (scripts/serve_cpu.py), the
service's counters (``counted``) and, from them, ``per_client``: runs taken, mean queue wait and lane seconds.
Bounded: every loop stops at its phase's end.

    python scripts/serve_soak.py --honest 4 --seconds 60
    python scripts/serve_soak.py --honest 4 --seconds 60 --hostile-cpus 1 --service-cpus 0

``--hostile-weight W`` gives the hostile clients' tokens weight W in the token file (their relative share of the
lanes beside the honest clients' 1; serve/auth.py). ``--hostile-cpus`` / ``--service-cpus`` pin the hostile clients' process to its own cores and the service (its
lanes, zygotes and workers inherit it) and the honest clients to the others, the same in both phases: a
stand-in for attackers on another host, so that only the service's own work for them counts against the
honest clients.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import secrets
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from serve_cpu import CpuSampler
from serve_hostile import ATTACKS, RELU, Phase, cpu_set, hostile_main, kernel, pin


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_server(tmp: Path, tokens: dict[str, str], port: int, batch_size: int, lanes: int,
                 cpus: set[int] | None = None, extra: tuple[str, ...] = (),
                 weights: dict[str, float] | None = None) -> subprocess.Popen:
    weights = weights or {}
    (tmp / "tokens").write_text("".join(f"{name} {tok} {weights.get(name, 1.0):g}\n" for name, tok in tokens.items()))
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "serve", "--port", str(port), "--task", RELU,
           "--db", str(tmp / "results.sqlite"), "--build-root", str(tmp / "builds"), "--no-timing",
           "--policy", "kernelbench", "--token-file", str(tmp / "tokens"), "--max-pending", "8", "--batch-size", str(batch_size),
           "--lanes", str(lanes), "--max-connections", "256", "--header-timeout", "5", *extra]
    env = dict(os.environ, MKB_ALLOW_CODE_EXECUTION="1")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(tmp / "log", "ab"),
                            start_new_session=True, preexec_fn=(lambda: pin(cpus)) if cpus else None)
    end = time.monotonic() + 180
    while time.monotonic() < end:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.5)
    raise SystemExit("the service did not start: " + (tmp / "log").read_text()[-2000:])


def load_average() -> float:
    """The host's 1-minute load average (the machine may be shared: the numbers are read beside it)."""
    return float(Path("/proc/loadavg").read_text().split()[0])


def honest(url: str, token: str, phase: Phase, n: int, new_every: int) -> None:
    pool = [kernel(f"pool {i}") for i in range(4)]
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=90) as c:
        i = 0
        while phase.live():
            i += 1
            source = kernel(f"new {n} {i} {secrets.token_hex(4)}") if i % new_every == 0 else pool[i % len(pool)]
            t0 = time.monotonic()
            try:
                r = c.post("/jobs", json={"task_id": RELU, "source": source},
                           headers={"Idempotency-Key": secrets.token_hex(12)})
            except httpx.HTTPError as exc:
                phase.error(type(exc).__name__)
                continue
            with phase.lock:
                phase.latencies.append(time.monotonic() - t0)
            if r.status_code != 200:
                phase.error(f"submit {r.status_code}")
                time.sleep(0.5)
                continue
            job_id = r.json()["jobs"][0]
            while phase.live():
                try:
                    job = c.get(f"/jobs/{job_id}", params={"wait": 10}).json()
                except httpx.HTTPError as exc:
                    phase.error(type(exc).__name__)
                    break
                if job.get("state") in ("done", "failed"):
                    with phase.lock:
                        phase.results += 1
                    break


def warm_up(url: str, token: str) -> None:
    """The honest pool evaluated once before the phases: they measure the service, not first evaluations."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=300) as c:
        ids = c.post("/jobs", json={"items": [{"task_id": RELU, "source": kernel(f"pool {i}")}
                                              for i in range(4)]}).json()["jobs"]
        for job_id in ids:
            while c.get(f"/jobs/{job_id}", params={"wait": 30}).json()["state"] not in ("done", "failed"):
                pass


def counters(url: str, token: str) -> dict[str, float]:
    """The service's counters (``/metrics``: refusals by status, jobs by outcome, preemptions, seconds per
    stage), to divide the phase's CPU by what it was spent on."""
    try:
        text = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=30).text
    except httpx.HTTPError:
        return {}
    out = {}
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name.startswith("mkb_") and ("_total" in name or "seconds_sum" in name or "seconds_count" in name):
            out[name[4:]] = float(value)
    return out


def lane_samples(url: str, phase: Phase, lanes: int, out: dict) -> None:
    """Every 0.5 s, the service's gauges (``/health``: running jobs, queue depth): how often a lane was free
    while jobs waited, which CPU share cannot explain (the scheduler kept it free)."""
    seen = idle_waiting = running = queued = 0
    with httpx.Client(base_url=url, timeout=10) as c:
        while phase.live():
            try:
                g = c.get("/health").json()
            except (httpx.HTTPError, ValueError):
                g = None
            if g is not None:
                seen += 1
                running += g["running_jobs"]
                queued += g["queue_depth"]
                idle_waiting += g["queue_depth"] > 0 and g["running_jobs"] < lanes
            time.sleep(0.5)
    out.update(samples=seen, lane_free_while_jobs_wait=round(idle_waiting / max(1, seen), 3),
               mean_running=round(running / max(1, seen), 2), mean_queued=round(queued / max(1, seen), 2))


def per_client(counted: dict[str, float]) -> dict[str, dict[str, float]]:
    """The service's per-client counters of the phase (``client_*_total{client="..."}``), the honest clients
    summed: runs taken, mean queue wait, lane seconds of finished and of stopped runs. Who waits for the lanes
    and who holds them, which the per-stage totals cannot tell."""
    out: dict[str, dict[str, float]] = {}
    for key, value in counted.items():
        if not key.startswith("client_") or 'client="' not in key:
            continue
        what = key[len("client_"):key.index("_total")]
        who = key.split('client="', 1)[1].rstrip('"}')
        who = "honest" if who.startswith("honest") else who
        row = out.setdefault(who, {})
        row[what] = row.get(what, 0.0) + value
    for row in out.values():
        taken = row.pop("taken", 0.0)
        row["taken"] = taken
        row["queue_s_mean"] = round(row.pop("queue_ms", 0.0) / 1000 / max(1.0, taken), 2)
        row["lane_s"] = round(row.pop("lane_ms", 0.0) / 1000, 1)
        row["stopped_lane_s"] = round(row.pop("stopped_lane_ms", 0.0) / 1000, 1)
    return out


def run_phase(url: str, tokens: dict[str, str], args, hostile: bool, pid: int) -> dict:
    before = counters(url, tokens["honest0"])
    phase = Phase(args.seconds)
    cpu = CpuSampler(pid)
    cpu.start()
    gauges: dict = {}
    sampler = threading.Thread(target=lane_samples, args=(url, phase, args.lanes, gauges), daemon=True)
    sampler.start()
    threads = [threading.Thread(target=honest, args=(url, tokens[f"honest{i}"], phase, i, args.new_every))
               for i in range(args.honest)]
    attackers = None
    if hostile:  # in their own process: their JSON encoding and threads do not slow the honest clients' clock
        attackers = multiprocessing.get_context("spawn").Process(
            target=hostile_main, args=(url, tokens, args.seconds, args.polls, args.slow, tuple(args.attacks.split(",")),
                                       cpu_set(args.hostile_cpus)),
            daemon=True)
        attackers.start()
    for t in threads:
        t.daemon = True
        t.start()
    loads = [load_average()]
    while phase.live():
        time.sleep(min(5.0, max(0.0, phase.end - time.monotonic())))
        loads.append(load_average())
    cpu.stop()
    sampler.join(15)
    for t in threads:
        t.join(args.seconds + 60)
    if attackers is not None:
        attackers.join(60)
        if attackers.is_alive():
            attackers.kill()
    after = counters(url, tokens["honest0"])
    counted = {k: v - before.get(k, 0) for k, v in after.items()}
    lat = sorted(phase.latencies)
    p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("nan")
    return {"phase": "with hostile" if hostile else "honest only", "honest_clients": args.honest,
            "seconds": args.seconds, "submits": len(lat),
            "submit_p50_s": round(statistics.median(lat), 4) if lat else None, "submit_p99_s": round(p99, 4),
            "results_per_min": round(phase.results * 60 / args.seconds, 1),
            "server_peak_rss_mb": round(proc_mb(pid, "VmHWM"), 1), "server_rss_mb": round(proc_mb(pid, "VmRSS"), 1),
            "load_avg_min_max": [min(loads), max(loads)], "lanes": args.lanes, "batch_size": args.batch_size,
            "attacks": args.attacks if hostile else "", "service_cpus": args.service_cpus,
            "hostile_cpus": args.hostile_cpus if hostile else None, "service_args": args.service_args, "errors": phase.errors,
            "hostile_weight": args.hostile_weight, "cpu_s": cpu.report(), "counted": counted, "lanes_seen": gauges,
            "per_client": per_client(counted)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--honest", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--new-every", type=int, default=10, help="every k-th honest submission is a new kernel")
    ap.add_argument("--polls", type=int, default=60, help="hostile concurrent long-polls")
    ap.add_argument("--slow", type=int, default=150, help="hostile slow-header connections")
    ap.add_argument("--batch-size", type=int, default=1, help="the service's --batch-size")
    ap.add_argument("--lanes", type=int, default=2, help="the service's --lanes (CPU lanes: no timing here)")
    ap.add_argument("--attacks", default=",".join(ATTACKS),
                    help="hostile clients to run, of " + ",".join(ATTACKS) + " (polls and queue use the engine: "
                         "a sleeping candidate to poll on, failing sources up to the cap)")
    ap.add_argument("--hostile-cpus", default=None, metavar="CPUS",
                    help="pin the hostile clients' process to these cores (e.g. 1, or 2-3)")
    ap.add_argument("--service-cpus", default=None, metavar="CPUS",
                    help="pin the service and the honest clients to these cores (e.g. 0)")
    ap.add_argument("--service-args", default="", metavar="ARGS",
                    help="more options for mkb serve, e.g. '--refuse-in-app' (an A/B of the service's code)")
    ap.add_argument("--hostile-weight", type=float, default=1.0, metavar="W",
                    help="the hostile clients' tokens' weight in the token file (their relative share of the lanes; "
                         "the honest clients' is 1)")
    args = ap.parse_args()
    pin(cpu_set(args.service_cpus))  # the honest clients run in this process
    names = [f"honest{i}" for i in range(args.honest)] + ["poller", "flooder", "queuer"]
    tokens = {n: secrets.token_hex(16) for n in names}
    with tempfile.TemporaryDirectory(prefix="mkb-soak-") as tmp:
        port = free_port()
        proc = start_server(Path(tmp), tokens, port, args.batch_size, args.lanes, cpu_set(args.service_cpus),
                            tuple(shlex.split(args.service_args)),
                            {n: args.hostile_weight for n in ("poller", "flooder", "queuer")})
        url = f"http://127.0.0.1:{port}"
        try:
            warm_up(url, tokens["honest0"])
            for hostile in (False, True):
                print(json.dumps(run_phase(url, tokens, args, hostile, proc.pid)), flush=True)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
