"""Cost of handing a verified output to the parent as raw bytes (issue #40) against sampling it in the worker.

Per output size: the old path (the worker indexes the secret positions with tensor ops and sends ~6k values) and
the new ones (the worker copies the raw bytes with ctypes, or reads the values at the positions with numpy; they
cross a socketpair through the engine's own framing; the parent samples them), each timed end to end between two
processes, a forked child standing for the worker. Prints a table;
the per-candidate cost is this per-output figure times the verified outputs of a timing (2 per sample, the
reference's as well as the candidate's: see engine/fresh.py).

    python benchmarks/verdict_outputs/bench_raw_outputs.py [--device cuda] [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import time
from multiprocessing.connection import Connection

import torch

from multikernelbench.engine import protocol
from multikernelbench.engine.checking import sample_flat, sample_positions
from multikernelbench.engine.raw_outputs import (gathered_record, gathered_values, needs_positions, read_raw, rebuild,
                                                 secret_positions, values_at)

POSITIONS, EDGE = 4096, 1024


def old_path(t: torch.Tensor, seed: int) -> list[torch.Tensor]:
    positions = sample_positions(seed, POSITIONS, EDGE)
    return [sample_flat(t.detach().contiguous(), positions, POSITIONS + 2 * EDGE).to("cpu").clone()]


def new_record(t: torch.Tensor, whole: bool) -> dict:
    if whole or not needs_positions(t):
        return dict(read_raw(t, 0))
    return gathered_record(t, 0, secret_positions(7, POSITIONS, EDGE), POSITIONS + 2 * EDGE)


def worker_loop(conn: Connection, numel: int, device: str, mode: str) -> None:
    """The child ("worker"): on each request byte, read the output the way ``mode`` says and send it. The output
    is made here (a forked child cannot use a CUDA context of its parent's)."""
    t = torch.randn(numel, device=device)
    if t.is_cuda:
        torch.cuda.synchronize()
    while conn.recv_bytes(16):
        payload = [old_path(t, 7)] if mode == "old" else [[new_record(t, mode == "whole")]]
        protocol.send(conn, {"op": "bench"}, payload)


def parent_round(conn: Connection, mode: str) -> float:
    """The parent: ask, receive, and (new paths) sample at the positions; ms end to end."""
    t0 = time.perf_counter()
    conn.send_bytes(b"go")
    _header, got = protocol.recv(conn)
    if mode != "old":
        positions = secret_positions(7, POSITIONS, EDGE)
        rec = got[0][0]
        if gathered_values(rec, 0, len(positions)) is None:
            values_at(rebuild(rec, 0, copy=False), positions, POSITIONS + 2 * EDGE)
    return (time.perf_counter() - t0) * 1e3


def timed(numel: int, device: str, mode: str, repeat: int) -> float:
    """Median over ``repeat`` rounds with a forked child as the worker (two processes, as in the engine)."""
    s1, s2 = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        s1.close()
        try:
            worker_loop(Connection(os.dup(s2.fileno())), numel, device, mode)
        finally:
            os._exit(0)
    s2.close()
    conn = Connection(os.dup(s1.fileno()))
    times = [parent_round(conn, mode) for _ in range(repeat)]
    conn.send_bytes(b"")
    os.waitpid(pid, 0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    print(f"device {args.device}; ms per verified output (median of {args.repeat}); old = sampled with tensor ops "
          "in the worker; whole = every byte to the parent; new = whole up to raw_outputs.RAW_LIMIT, above it the "
          "values at the positions read with numpy")
    print(f"{'elements':>12} {'MB':>8} {'old ms':>8} {'whole ms':>9} {'new ms':>8} {'new-old':>8} "
          f"{'per candidate, s (20 / 40 samples)':>36}")
    for numel in (4096, 1 << 16, 1 << 20, 1 << 21, 1 << 23):  # 1<<21: activation.relu's CPU bench output
        res = {mode: timed(numel, args.device, mode, args.repeat) for mode in ("old", "whole", "new")}
        extra = res["new"] - res["old"]
        # Per sample: 2 verified outputs of the candidate and 2 of the reference (balanced renewals).
        per = [extra * 4 * n / 1e3 for n in (20, 40)]
        print(f"{numel:>12} {numel * 4 / 1e6:>8.1f} {res['old']:>8.2f} {res['whole']:>9.2f} {res['new']:>8.2f} {extra:>8.2f} "
              f"{per[0]:>17.2f} / {per[1]:.2f}")
    if args.device == "cpu":
        cpu_costs(args.repeat)


def cpu_costs(repeat: int) -> None:
    """In one process, no socket: the worker's read + encode and the parent's decode + sampling (CPU work that
    a loaded host measures more steadily than the end-to-end round trip)."""
    def med(fn) -> float:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    positions = secret_positions(7, POSITIONS, EDGE)
    print(f"\nin-process CPU work, ms per verified output (median of {repeat})")
    print(f"{'elements':>12} {'old worker':>11} {'old parent':>11} {'new worker':>11} {'new parent':>11}")
    for numel in (4096, 1 << 16, 1 << 20, 1 << 21, 1 << 23):
        t = torch.randn(numel)
        old_blob = protocol.encode({"op": "b"}, [old_path(t, 7)])
        new_blob = protocol.encode({"op": "b"}, [[new_record(t, False)]])

        def parent_new() -> None:
            rec = protocol.decode(new_blob)[1][0][0]
            if gathered_values(rec, 0, len(positions)) is None:
                values_at(rebuild(rec, 0, copy=False), positions, POSITIONS + 2 * EDGE)

        print(f"{numel:>12} {med(lambda: protocol.encode({'op': 'b'}, [old_path(t, 7)])):>11.3f} "
              f"{med(lambda: protocol.decode(old_blob)):>11.3f} "
              f"{med(lambda: protocol.encode({'op': 'b'}, [[new_record(t, False)]])):>11.3f} {med(parent_new):>11.3f}")


if __name__ == "__main__":
    main()
