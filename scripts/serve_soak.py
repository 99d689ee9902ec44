"""Soak benchmark of ``mkb serve`` (issue #42): N honest clients with and without M hostile ones, loopback.

Starts the real service (``mkb serve`` in a subprocess, CPU backend, ``--lanes`` lanes, one task, no timing), then runs two
phases of ``--seconds`` each: honest clients alone, then honest clients beside hostile ones. Honest clients
submit PyTorch kernels from a small pool (mostly answered from the cache, every ``--new-every``-th one new,
so it is evaluated) and long-poll their results. Hostile clients, each with its own token:

* long-pollers: ``--polls`` concurrent ``GET /jobs/{id}?wait=60`` on their own pending job (a candidate that
  sleeps 20 s, renewed when it finishes), half of them hanging up and reconnecting;
* slow headers: ``--slow`` connections that send their request head one byte every 0.5 s;
* cache flooders: POSTs of 8 copies of one cached 200 KB source, back to back;
* queue flooders: new (failing) sources up to their client's cap, again as soon as one finishes.

Prints one JSON line per phase: honest submit latency p50/p99 (s), honest results per minute, server peak
RSS (VmHWM of the service process, MB) and its RSS at the end, the host's load average (lowest and
highest, sampled every 5 s: the machine may be shared), and ``cpu_s``: CPU seconds of the phase per thread of
the service, its zygotes and workers, the honest clients and core 0 as a whole (scripts/serve_cpu.py).
Bounded: every loop stops at its phase's end.

    python scripts/serve_soak.py --honest 4 --seconds 60
    python scripts/serve_soak.py --honest 4 --seconds 60 --hostile-cpus 1 --service-cpus 0

``--hostile-cpus`` / ``--service-cpus`` pin the hostile clients' process to its own cores and the service (its
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

RELU = "activation.relu"
HEAD = "import torch\nimport torch.nn as nn\n"


def kernel(tag: str, pad: int = 0) -> str:
    return (HEAD + f"# {tag}\n" + "#" * pad + "\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
            "        return torch.clamp_min(x, 0.0)\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_set(text: str | None) -> set[int] | None:
    """``"0"``, ``"0,2"`` or ``"0-3"`` as a set of cores; None: not pinned."""
    if not text:
        return None
    cpus: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def pin(cpus: set[int] | None) -> None:
    """The calling process (and what it starts from now on) on ``cpus``."""
    if cpus:
        os.sched_setaffinity(0, cpus)


def start_server(tmp: Path, tokens: dict[str, str], port: int, batch_size: int, lanes: int,
                 cpus: set[int] | None = None, extra: tuple[str, ...] = ()) -> subprocess.Popen:
    (tmp / "tokens").write_text("".join(f"{name} {tok}\n" for name, tok in tokens.items()))
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


class Phase:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.results = 0
        self.errors: dict[str, int] = {}

    def live(self) -> bool:
        return time.monotonic() < self.end

    def error(self, what: str) -> None:
        with self.lock:
            self.errors[what] = self.errors.get(what, 0) + 1


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


def long_poller(url: str, token: str, phase: Phase, polls: int) -> None:
    """Long-polls on the poller's own unfinished job (a candidate that sleeps 20 s at import; a new one when it
    finishes), half of them hanging up half a second after asking."""
    port = int(url.rsplit(":", 1)[1])
    sleeper = HEAD + "import time\ntime.sleep(20)\n" + kernel("sleeper").split("\n", 2)[2]
    lock = threading.Lock()
    current: dict[str, str] = {}

    def renew(old: str | None) -> str | None:
        with lock:
            if current.get("id") == old:
                try:
                    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
                        r = c.post("/jobs", json={"task_id": RELU, "source": sleeper + f"# {secrets.token_hex(4)}\n"})
                    current["id"] = r.json()["jobs"][0]
                except (httpx.HTTPError, KeyError, ValueError):
                    time.sleep(0.5)
            return current.get("id")

    renew(None)

    def one(hang_up: bool) -> None:
        while phase.live():
            job_id = current.get("id")
            head = f"GET /jobs/{job_id}?wait=60 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n"
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                    s.sendall(head.encode())
                    if hang_up:
                        time.sleep(0.5)
                        continue
                    s.settimeout(max(0.1, phase.end - time.monotonic()))
                    reply = s.recv(65536)
                if b'"state":"done"' in reply or b'"state":"failed"' in reply:
                    renew(job_id)
            except OSError:
                time.sleep(0.1)

    threads = [threading.Thread(target=one, args=(i % 2 == 0,), daemon=True) for i in range(polls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def slow_headers(port: int, phase: Phase, n: int) -> None:
    head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 200 + b"\r\n\r\n"
    conns: list[tuple[socket.socket, int]] = []
    while phase.live():
        while len(conns) < n:
            try:
                conns.append((socket.create_connection(("127.0.0.1", port), timeout=2), 0))
            except OSError:
                break
        kept = []
        for s, sent in conns:
            try:
                s.sendall(head[sent:sent + 1])
                kept.append((s, sent + 1))
            except OSError:
                s.close()
        conns = kept
        time.sleep(0.5)
    for s, _ in conns:
        s.close()


def cache_flood(url: str, token: str, phase: Phase) -> None:
    big = kernel("big", pad=200_000)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        try:
            first = c.post("/jobs", json={"task_id": RELU, "source": big}).json()["jobs"][0]
            c.get(f"/jobs/{first}", params={"wait": 60})
        except (httpx.HTTPError, KeyError, ValueError):
            pass
        body = {"items": [{"task_id": RELU, "source": big}] * 8}
        while phase.live():
            try:
                c.post("/jobs", json=body)
            except httpx.HTTPError:
                time.sleep(0.1)


def queue_flood(url: str, token: str, phase: Phase) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        i = 0
        while phase.live():
            i += 1
            try:
                r = c.post("/jobs", json={"task_id": RELU, "source": f"x = ({i}, {secrets.token_hex(4)}"})
            except httpx.HTTPError:
                time.sleep(0.2)
                continue
            if r.status_code == 429:
                time.sleep(0.2)


ATTACKS = ("polls", "slow", "flood", "queue")


def hostile_main(url: str, tokens: dict[str, str], seconds: float, polls: int, slow: int,
                 attacks: tuple[str, ...] = ATTACKS, cpus: set[int] | None = None) -> None:
    pin(cpus)
    phase = Phase(seconds)
    port = int(url.rsplit(":", 1)[1])
    every = {"polls": (long_poller, (url, tokens["poller"], phase, polls)), "slow": (slow_headers, (port, phase, slow)),
             "flood": (cache_flood, (url, tokens["flooder"], phase)), "queue": (queue_flood, (url, tokens["queuer"], phase))}
    threads = [threading.Thread(target=every[a][0], args=every[a][1], daemon=True) for a in attacks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 30)


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
            "cpu_s": cpu.report(), "counted": {k: v - before.get(k, 0) for k, v in after.items()}, "lanes_seen": gauges}


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
    args = ap.parse_args()
    pin(cpu_set(args.service_cpus))  # the honest clients run in this process
    names = [f"honest{i}" for i in range(args.honest)] + ["poller", "flooder", "queuer"]
    tokens = {n: secrets.token_hex(16) for n in names}
    with tempfile.TemporaryDirectory(prefix="mkb-soak-") as tmp:
        port = free_port()
        proc = start_server(Path(tmp), tokens, port, args.batch_size, args.lanes, cpu_set(args.service_cpus),
                            tuple(shlex.split(args.service_args)))
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
