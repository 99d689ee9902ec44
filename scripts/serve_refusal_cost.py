"""CPU the service's HTTP front spends per refused request (issue #42): refused by the protocol (the default) or by
the app (``mkb serve --refuse-in-app``), measured on the event loop's thread of the real ``mkb serve``.

Why beside the soak: the soak's honest results per minute move by tens of percent between two runs of the same
code on a shared machine; the front's CPU per refusal is what the protocol-level refusal changes, and it can be
read directly: N refusals sent back to back, each on a new connection as the soak's flooder re-connects, and the
thread's user + system time before and after (/proc/<pid>/task/<pid>/stat).

    python scripts/serve_refusal_cost.py --requests 3000 --service-cpus 0 --client-cpus 1
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

from serve_soak import cpu_set, free_port, load_average, pin, start_server

TICK = os.sysconf("SC_CLK_TCK")


def loop_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/task/{pid}/stat").read_bytes().rpartition(b")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def refuse(port: int, token: str, n: int) -> dict[str, int]:
    """``n`` POSTs announcing a 1.6 MB body, heads only, each on its own connection; the statuses seen."""
    head = (f"POST /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: 1600000\r\n\r\n").encode()
    seen: dict[str, int] = {}
    for _ in range(n):
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(head)
            try:
                status = s.recv(65536).split(b" ", 2)[1].decode()
            except TimeoutError:  # admitted: the service waits for the body (the warm-up's first request)
                status = "admitted"
        seen[status] = seen.get(status, 0) + 1
    return seen


def measure(args, extra: tuple[str, ...]) -> list[dict]:
    tokens = {"flooder": secrets.token_hex(16)}
    rows = []
    with tempfile.TemporaryDirectory(prefix="mkb-refusal-") as tmp:
        port = free_port()
        # a byte rate of 1 KB/s: after one admitted 1.6 MB body the flooder is over its rate for good
        proc = start_server(Path(tmp), tokens, port, 1, 1, cpu_set(args.service_cpus), ("--rate-kb", "1", *extra))
        pin(cpu_set(args.client_cpus))
        try:
            for case, token in (("401 wrong token", "wrong-" + secrets.token_hex(16)), ("429 over rate", tokens["flooder"])):
                refuse(port, token, 200)  # warm-up (and empties the flooder's buckets)
                cpu0, t0, load = loop_cpu_s(proc.pid), time.monotonic(), load_average()
                seen = refuse(port, token, args.requests)
                cpu = loop_cpu_s(proc.pid) - cpu0
                rows.append({"service_args": " ".join(extra), "case": case, "requests": args.requests,
                             "statuses": seen, "loop_cpu_s": round(cpu, 2),
                             "loop_cpu_us_per_request": round(cpu / args.requests * 1e6),
                             "wall_s": round(time.monotonic() - t0, 2), "load_avg_1min": load})
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
            pin(cpu_set(args.service_cpus))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--service-cpus", default=None, metavar="CPUS")
    ap.add_argument("--client-cpus", default=None, metavar="CPUS")
    ap.add_argument("--rounds", type=int, default=2, help="A/B rounds (protocol, app), alternating")
    args = ap.parse_args()
    for _ in range(args.rounds):
        for extra in ((), ("--refuse-in-app",)):
            for row in measure(args, extra):
                print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
