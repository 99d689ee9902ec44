"""The hostile clients of the ``mkb serve`` soak (scripts/serve_soak.py, issue #42), each with its own token, run
in a process of their own (``hostile_main``) so their work does not slow the honest clients' clock:

* long-pollers: concurrent ``GET /jobs/{id}?wait=60`` on their own pending job (a candidate that sleeps 20 s,
  renewed when it finishes), half of them hanging up and reconnecting;
* slow headers: connections that send their request head one byte every 0.5 s;
* cache flooders: POSTs of 8 copies of one cached 200 KB source, back to back;
* queue flooders: new (failing) sources up to their client's cap, again as soon as one finishes.

Bounded: every loop stops at its phase's end. Also what both kinds of client share (the kernels, a
phase's clock and tallies, pinning), so that the soak imports this module and not the other way round.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time

import httpx

RELU = "activation.relu"
HEAD = "import torch\nimport torch.nn as nn\n"


def kernel(tag: str, pad: int = 0) -> str:
    return (HEAD + f"# {tag}\n" + "#" * pad + "\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
            "        return torch.clamp_min(x, 0.0)\n")


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
